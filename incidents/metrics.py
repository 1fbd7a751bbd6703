"""`registry_contract_status{dataset,contract,status}` for Prometheus: 1 for each
bound dataset's current status, 0 for the others; only datasets with a contract.
Read from the database at scrape time, kept METRICS_CACHE_SECONDS (as
freshness.metrics), with `registry_incidents_open` by cause."""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db.models import Count
from prometheus_client.core import REGISTRY, GaugeMetricFamily

from incidents.models import Cause, ContractState, ContractStatus, Incident
from registry.models import Dataset

log = logging.getLogger(__name__)


class ContractStatusCollector:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._families: list = []

    @staticmethod
    def _empty() -> list:
        return [
            GaugeMetricFamily("registry_contract_status", "1 for the bound dataset's current contract status "
                              "(passing, failing, unverified), 0 for the others.", labels=["dataset", "contract", "status"]),
            GaugeMetricFamily("registry_incidents_open", "Open (or acknowledged) incidents, by cause.", labels=["cause"]),
            GaugeMetricFamily("registry_contract_status_up", "1 when the contract statuses could be read."),
        ]

    def describe(self):
        return self._empty()

    def collect(self):
        with self._lock:
            if time.monotonic() - self._read_at >= settings.METRICS_CACHE_SECONDS:
                self._families, self._read_at = self._read(), time.monotonic()
            return list(self._families)

    def _read(self) -> list:
        status, incidents, up = self._empty()
        try:
            # The statuses (bound datasets only), then their datasets' names by primary key
            # (Dataset.labels_of): joined, the whole dataset table was hashed each scrape.
            rows = list(ContractStatus.objects.values_list("dataset_id", "contract__name", "status").order_by())
            labels_of = Dataset.objects.labels_of(dataset_id for dataset_id, *_ in rows)
            for dataset_id, contract, current in rows:
                if dataset_id not in labels_of:
                    continue  # deleted between the two reads
                namespace, name, _ = labels_of[dataset_id]
                for state in ContractState.values:
                    status.add_metric([f"{namespace}/{name}", contract, state], 1.0 if state == current else 0.0)
            counts = dict(Incident.objects.unresolved().values_list("cause").annotate(n=Count("pk")).order_by())
            for cause in Cause.values:
                incidents.add_metric([cause], counts.get(cause, 0))
        except Exception:  # a scrape answers whatever the database does
            log.exception("contract status metrics: the database could not be read")
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        return [status, incidents, up]


_collector: ContractStatusCollector | None = None


def register() -> None:
    global _collector
    if _collector is None:
        _collector = ContractStatusCollector()
        REGISTRY.register(_collector)
