"""The demo shows every freshness status, and loading it twice changes nothing."""

from __future__ import annotations

from io import StringIO

from freshness.demo import load_freshness_demo
from freshness.models import DatasetFreshness, FreshnessTransition
from registry.demo import load_core_demo


def test_the_demo_shows_every_status_and_loads_idempotently(db):
    load_core_demo()
    load_freshness_demo()
    statuses = dict(DatasetFreshness.objects.values_list("dataset__name", "status"))
    assert statuses == {
        "retail.public.orders": "fresh", "retail.public.order_lines": "warning",
        "retail.public.payments": "stale", "retail.public.refunds": "stale",
        "retail.public.customers": "unknown", "checkout.order_placed": "fresh",
        "gold/daily_revenue": "fresh", "lims/cell_count": "fresh",
    }
    refunds = DatasetFreshness.objects.get(dataset__name="retail.public.refunds")
    assert refunds.last_empty_write_at > refunds.last_write_at  # the empty run did not refresh it
    transitions = FreshnessTransition.objects.count()
    out = StringIO()
    load_freshness_demo(stdout=out)
    assert FreshnessTransition.objects.count() == transitions
    assert "0 freshness SLO(s) set (8 already there)" in out.getvalue()
