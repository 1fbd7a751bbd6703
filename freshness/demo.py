"""Freshness in the embedded demo: SLOs and a history of writes, so every status shows.

One dataset (checkout.order_placed) goes stale five minutes after the demo is
loaded, which the in-process evaluator records while you watch. Every write is
timed back from the moment of loading; the demo lineage's runs, loaded after this
step, then add their writes on the same clock.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from freshness.constants import TransitionSource
from freshness.evaluation import evaluate, record_write, set_slo
from freshness.models import DatasetFreshness
from freshness.scheduling import sweep
from registry.hooks import demo_step
from registry.models import Dataset

M, H, D = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)

# name: (max_age, warn_after, [(written ago, rows), …] oldest first)
DEMO_SLOS = {
    "retail.public.orders": (1 * H, 45 * M, [(3 * H, 1200), (2 * H, 1180), (20 * M, 1310)]),
    "retail.public.order_lines": (6 * H, 4 * H, [(11 * H, 5400), (5 * H, 5210)]),
    "retail.public.payments": (1 * H, None, [(5 * H, 800), (3 * H, 770)]),
    "retail.public.refunds": (1 * D, 20 * H, [(30 * H, 40), (2 * H, 0)]),  # the last run wrote nothing
    "retail.public.customers": (1 * D, None, []),
    "checkout.order_placed": (5 * M, None, [(0 * M, 90)]),
    "gold/daily_revenue": (1 * D, 20 * H, [(26 * H, 31), (2 * H, 31)]),
    "lims/cell_count": (7 * D, 5 * D, [(2 * D, 96)]),
}


def _deadlines_until(dataset: Dataset, until) -> None:
    """Play the deadline tasks that would have run before `until`."""
    while True:
        deadline = DatasetFreshness.objects.filter(dataset=dataset).values_list("next_check_at", flat=True).first()
        if deadline is None or deadline > until:
            return
        evaluate(deadline, dataset_ids=[dataset.pk], source=TransitionSource.DEADLINE)


# Before lineage (60), so the SLOs are there when the demo's runs write their datasets.
@demo_step("freshness SLOs and writes", order=55)
def load_freshness_demo(stdout=None) -> None:
    admin = get_user_model().objects.filter(is_staff=True).order_by("pk").first()
    if admin is None:
        return
    now = timezone.now()
    datasets = {d.name: d for d in Dataset.objects.filter(name__in=DEMO_SLOS)}
    # A row without an SLO (a dataset lineage wrote before) still gets the demo's SLO.
    done = set(DatasetFreshness.objects.filter(dataset__in=datasets.values(), max_age__isnull=False)
               .values_list("dataset__name", flat=True))
    created = 0
    for name, (max_age, warn_after, writes) in DEMO_SLOS.items():
        dataset = datasets.get(name)
        if dataset is None or name in done:
            continue  # idempotent: a dataset that already has freshness is left as it is
        created += 1
        first = now - (writes[0][0] if writes else timedelta(0)) - H
        set_slo(dataset, max_age=max_age, warn_after=warn_after, by=admin, now=first)
        for ago, rows in writes:
            at = now - ago
            _deadlines_until(dataset, at)
            record_write(dataset, at=at, row_count=rows, now=at, run_label="demo pipeline")
        _deadlines_until(dataset, now)
    sweep(now)
    if stdout is not None:
        stdout.write(f"  {created} freshness SLO(s) set ({len(done)} already there)")
