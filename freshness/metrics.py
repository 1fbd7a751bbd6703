"""Freshness series for Prometheus, computed from the database at scrape time.

`/metrics` is django-prometheus's view of prometheus_client's default
registry; this collector adds to it. Reading the database at scrape time means
every web process reports the same numbers and nothing has to be kept in sync
between the evaluator and the exporters.

Per-dataset series exist only for datasets with an SLO: the others have no
deadline to alert on, and any lineage writer can create datasets. What was read
is kept for METRICS_CACHE_SECONDS, so parallel scrapes share one read.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import REGISTRY, CounterMetricFamily, GaugeMetricFamily

from freshness.constants import STATUS_ORDER, FreshnessStatus
from freshness.models import DatasetFreshness, EvaluatorState, FreshnessTransition
from registry.models import Dataset

log = logging.getLogger(__name__)

LABELS = ["namespace", "name", "owner_team"]


def _families() -> dict[str, GaugeMetricFamily | CounterMetricFamily]:
    return {
        "staleness": GaugeMetricFamily(
            "dataset_staleness_seconds", "Seconds since the dataset's last successful write that counts.", labels=LABELS),
        "slo": GaugeMetricFamily(
            "dataset_freshness_slo_seconds", "The dataset's freshness SLO: maximum age in seconds.", labels=LABELS),
        "status": GaugeMetricFamily(
            "dataset_freshness_status", "1 for the dataset's current freshness status, 0 for the others.",
            labels=[*LABELS, "status"]),
        "transitions": CounterMetricFamily(
            "dataset_freshness_transitions", "Freshness status transitions recorded, by new status.",
            labels=["to_status"]),
        "lag": GaugeMetricFamily(
            "freshness_evaluator_lag_seconds",
            "How far past its deadline the oldest unevaluated dataset is (0 when the evaluator is keeping up)."),
        "last_sweep": GaugeMetricFamily(
            "freshness_last_sweep_timestamp_seconds", "Unix time of the last finished beat sweep (0: never)."),
        "sweep_duration": GaugeMetricFamily(
            "freshness_last_sweep_duration_seconds", "How long the last beat sweep took."),
        "up": GaugeMetricFamily(
            "freshness_metrics_up", "1 when the freshness series could be read from the database."),
    }


class FreshnessCollector:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._families: list = []

    def describe(self):
        # Without describe(), registering would call collect() and query the
        # database while the app registry is still loading.
        return list(_families().values())

    def collect(self):
        with self._lock:  # a scrape arriving while another reads waits for its answer
            if time.monotonic() - self._read_at >= settings.METRICS_CACHE_SECONDS:
                self._families, self._read_at = self._read(), time.monotonic()
            return list(self._families)

    def _read(self) -> list:
        families = _families()
        try:
            self._fill(families)
        except Exception:  # a scrape must answer whatever the database does; the alert reads `up`
            log.exception("freshness metrics: the database could not be read")
            families["up"].add_metric([], 0)
            return [families["up"]]
        families["up"].add_metric([], 1)
        return list(families.values())

    def _fill(self, f) -> None:
        now = timezone.now()
        # 1. every dataset with an SLO: its row (a partial index holds those alone: every
        # written dataset has a row), then its labels by primary key (Dataset.labels_of).
        rows = list(DatasetFreshness.objects.with_slo().values_list(
            "dataset_id", "status", "last_write_at", "max_age").order_by())
        labels_of = Dataset.objects.labels_of(dataset_id for dataset_id, *_ in rows)
        for dataset_id, status, last_write_at, max_age in rows:
            if dataset_id not in labels_of:
                continue  # deleted between the two reads
            labels = list(labels_of[dataset_id])
            status = status or FreshnessStatus.NO_SLO  # an SLO set and not evaluated yet
            for s in STATUS_ORDER:
                f["status"].add_metric([*labels, s], 1.0 if s == status else 0.0)
            if last_write_at is not None:
                f["staleness"].add_metric(labels, max((now - last_write_at).total_seconds(), 0.0))
            f["slo"].add_metric(labels, max_age.total_seconds())
        # 2. transitions by new status.
        counts = dict(FreshnessTransition.objects.values_list("to_status").annotate(n=Count("pk")).order_by())
        for s in STATUS_ORDER:
            f["transitions"].add_metric([s], counts.get(s, 0))
        # 3. the evaluator: the oldest overdue deadline and the last sweep.
        oldest = DatasetFreshness.objects.due(now).aggregate(oldest=Min("next_check_at"))["oldest"]
        f["lag"].add_metric([], (now - oldest).total_seconds() if oldest else 0.0)
        state = EvaluatorState.objects.filter(pk=1).first()
        f["last_sweep"].add_metric([], state.last_sweep_at.timestamp() if state and state.last_sweep_at else 0.0)
        f["sweep_duration"].add_metric([], state.last_sweep_seconds if state else 0.0)


_collector: FreshnessCollector | None = None


def register() -> None:
    global _collector
    if _collector is None:
        _collector = FreshnessCollector()
        REGISTRY.register(_collector)
