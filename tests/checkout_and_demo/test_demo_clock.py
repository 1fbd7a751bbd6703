"""One clock in the demo: every time it stores (lineage runs, freshness writes and
deadlines, change-request deadlines, audit rows) is placed relative to the moment
it is loaded, and loading it again later moves none of them."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.apps import apps
from django.core.management import call_command
from django.db import models

from change_requests.models import ChangeRequest
from freshness.models import DatasetFreshness
from lineage.models import Run, RunEvent
from registry.env import parse_contract_store

pytestmark = pytest.mark.django_db

LOADED_AT = datetime(2031, 5, 6, 9, 30, tzinfo=UTC)  # any moment: nothing of the demo is pinned to a date
DEMO_APPS = {"auth", "registry", "contracts_app", "change_requests", "lineage", "freshness"}


def stored_times() -> dict[str, datetime]:
    """Every date-time any row of the project's models holds, by model.field#pk."""
    times = {}
    for model in apps.get_models():
        if model._meta.app_label not in DEMO_APPS:
            continue
        fields = [f.name for f in model._meta.concrete_fields if isinstance(f, models.DateTimeField)]
        for row in model.objects.values("pk", *fields) if fields else []:
            times.update({f"{model.__name__}.{name}#{row['pk']}": row[name] for name in fields if row[name] is not None})
    return times


@pytest.fixture
def load_demo(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)

    def load(at: datetime) -> None:
        with time_machine.travel(at, tick=False), django_capture_on_commit_callbacks(execute=True):
            call_command("load_demo", stdout=io.StringIO())
    return load


def test_every_time_the_demo_stores_is_within_days_of_the_moment_it_was_loaded(load_demo, settings):
    load_demo(LOADED_AT)
    times = stored_times()
    assert len(times) > 100
    far = {key: at for key, at in times.items()
           if not LOADED_AT - timedelta(days=3) <= at <= LOADED_AT + timedelta(days=8)}
    assert far == {}
    waiting = ChangeRequest.objects.get(state="open")
    assert (waiting.opened_at, waiting.deadline_at) == (LOADED_AT, LOADED_AT + settings.CHANGE_REQUEST_DEADLINE)


def test_the_pipelines_ran_just_before_loading_and_freshness_counts_their_writes(load_demo):
    load_demo(LOADED_AT)
    assert all(LOADED_AT - timedelta(minutes=80) <= e.event_time <= LOADED_AT for e in RunEvent.objects.all())
    running = Run.objects.get(state="RUNNING")
    assert running.job.name == "checkout.returns_sync"
    assert LOADED_AT - running.started_at == timedelta(minutes=30)
    statuses = dict(DatasetFreshness.objects.values_list("dataset__name", "status"))
    assert statuses == {
        "retail.public.orders": "fresh", "retail.public.order_lines": "warning",
        "retail.public.payments": "stale", "retail.public.refunds": "stale",
        "retail.public.customers": "unknown", "checkout.order_placed": "fresh",
        "gold/daily_revenue": "fresh", "lims/cell_count": "fresh",
        # written by the demo's pipelines, with no SLO of their own
        "silver/customer_orders": "no_slo", "silver/sessions": "no_slo",
        "retail.public.shipments": "no_slo", "bioprocess/bioreactor_run": "no_slo",
    }
    revenue = DatasetFreshness.objects.get(dataset__name="gold/daily_revenue")
    assert revenue.max_age == timedelta(days=1)
    assert revenue.last_write_at == LOADED_AT - timedelta(minutes=73)  # finance.daily_revenue's run


def test_loading_again_a_day_later_moves_no_run(load_demo):
    load_demo(LOADED_AT)
    events = sorted(RunEvent.objects.values_list("checksum", "event_time"))
    runs = sorted(Run.objects.values_list("run_uuid", "started_at", "state_at"))
    load_demo(LOADED_AT + timedelta(days=1))
    assert sorted(RunEvent.objects.values_list("checksum", "event_time")) == events
    assert sorted(Run.objects.values_list("run_uuid", "started_at", "state_at")) == runs
