"""The dataset facets the registry keeps beyond lineage, from every kind of event.

- the facets shown beside the registry's own fields (`KEPT`: ownership,
  documentation, symlinks, lifecycle state, tags, storage, …): the latest of
  each per dataset, a `DatasetFacet` row with the event it came from; a facet
  sent with `_deleted: true` removes it;
- `symlinks` identifiers (and the previous name of a RENAME) become aliases of
  the dataset (`DatasetAlias`), so that events naming them resolve to it;
- `dataQualityMetrics` and `dataQualityAssertions` become one `QualityCheck`
  per (dataset, run): as input facets (where the spec puts them) or dataset
  facets (where dbt-ol also puts its tests' assertions, and where a
  DatasetEvent carries them).

Every one of these facets, and the `schema` facet (the dataset's current
schema, lineage.column_usage and lineage.static_events), changes what the
registry holds about a dataset (`STATE_FACETS`): it is a write to that
dataset on whichever side of an event it arrives, and a token that may not
write the dataset (registry.auth.LineageWriter) has it dropped, counted in
`lineage_facets_refused_total` and logged (`facets_refused`,
`report_refused`); the rest of the event is stored, so a reader still
reports what it read. An output or a DatasetEvent's dataset the token may not
write refuses the whole event instead (lineage.ingest.WriteRefused).

The facets were checked against their own schemas before (lineage.facet_schemas),
so their fields have the types the spec gives them. Most RunEvents carry none
of these facets and cost one set intersection per dataset here; an event that
carries them writes at most three statements, and a facet this process wrote
unchanged within the minute is not written again (as column usage does).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from prometheus_client import Counter

from lineage.models import DatasetAlias, DatasetFacet, QualityCheck
from lineage.signals import quality_reported

log = logging.getLogger(__name__)

DatasetKey = tuple[str, str]

KEPT = frozenset({"ownership", "documentation", "symlinks", "lifecycleStateChange", "tags", "datasetType", "storage",
                  "dataSource", "version", "catalog", "hierarchy"})
QUALITY = frozenset({"dataQualityMetrics", "dataQualityAssertions"})
_WANTED = KEPT | QUALITY
# What a dataset object may carry that changes the registry's record of the dataset:
# a write to it, on whichever side of the event. (A reader's input edge and the
# columns it reads are facts about the reader, not writes.)
STATE_FACETS = {"facets": _WANTED | {"schema"}, "inputFacets": QUALITY}
MAX_NAME = 500

# Facets dropped because the event's token may not write their dataset; labelled
# by facet name (a dozen known names) and reason, so the series stay few.
FACETS_REFUSED = Counter("lineage_facets_refused", "Dataset facets the lineage ingest dropped (and the reason): "
                         "writes to a dataset the event's token may not write.", ["facet", "reason"])
# Standard facets left out because they break their own schema, by the event's
# producer (a deployment has a handful) and facet key (the standard ones only).
FACETS_INVALID = Counter("lineage_facets_invalid", "Standard facets the lineage ingest left out of an event it "
                         "stored because they break their own schema, by producer.", ["producer", "facet"])
MAX_PRODUCER_LABEL = 200



class RecentFacets:
    """The facets this process committed within `refresh` seconds, by (dataset,
    name) with a digest of their content: the same facet again is not rewritten
    (dbt sends a model's documentation with every run). At most `size` entries."""

    def __init__(self, refresh: float, size: int = 50_000) -> None:
        self.refresh, self.size = refresh, size
        self.seen: dict[tuple[int, str], tuple[str, float]] = {}
        self.lock = threading.Lock()

    def is_fresh(self, dataset_id: int, name: str, digest: str) -> bool:
        entry = self.seen.get((dataset_id, name))
        return entry is not None and entry[0] == digest and time.monotonic() - entry[1] < self.refresh

    def remember_after_commit(self, written: list[tuple[int, str, str]]) -> None:
        def remember() -> None:
            at = time.monotonic()
            with self.lock:
                if len(self.seen) + len(written) > self.size:
                    self.seen.clear()
                for dataset_id, name, digest in written:
                    self.seen[(dataset_id, name)] = (digest, at)
        transaction.on_commit(remember)

    def forget(self, dataset_id: int, name: str) -> None:
        with self.lock:
            self.seen.pop((dataset_id, name), None)

    def clear(self) -> None:
        with self.lock:
            self.seen.clear()


RECENT_FACETS = RecentFacets(60.0)


@dataclass(frozen=True)
class RefusedFacet:
    """A facet left out of what an event stores, and why."""

    path: str  # where the event carries it: "inputs[0].inputFacets.dataQualityAssertions"
    facet: str
    reason: str  # "not_owner" | "invalid"
    detail: str
    code: str = "facet_not_writable"  # | "facet_invalid"
    producer: str = ""  # the event's, for an invalid facet's counter

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code, "reason": self.detail}


def invalid_facet_warnings(invalid: Iterable[Any], producer: str) -> list[RefusedFacet]:
    """The warnings for facets left out because they break their own schema
    (lineage.facet_schemas.InvalidFacet), sent by `producer`."""
    found = []
    for facet in invalid:
        first_path, first = facet.problems[0]
        more = f" (and {len(facet.problems) - 1} more)" if len(facet.problems) > 1 else ""
        found.append(RefusedFacet(
            facet.path, facet.key, "invalid",
            f"{first_path}: {first}{more}. The {facet.key} facet breaks its own schema: it is kept in the raw "
            "event but left out of what the registry acts on; the rest of the event is stored.",
            code="facet_invalid", producer=producer))
    return found


def facets_refused(objects: Iterable[dict], side: str, refused: set[DatasetKey], token: str) -> list[RefusedFacet]:
    """The state facets that `objects` (the event's `side` list: "inputs", …) carry
    for the datasets `refused` names, which the token `token` (its key prefix) may not write."""
    found = []
    for index, obj in enumerate(objects):
        key = (obj["namespace"], obj["name"])
        if key not in refused:
            continue
        for place, names in STATE_FACETS.items():
            carried = obj.get(place) or {}
            for name in sorted(names & carried.keys()):
                found.append(RefusedFacet(
                    f"{side}[{index}].{place}.{name}", name, "not_owner",
                    f"Token {token}… may not write dataset {key[0]}/{key[1]} (another team owns it): its {name} "
                    "facet changes the dataset and was dropped; the rest of the event is stored."))
    return found


def refuse_aliases(rows: FacetRows, sides: dict[str, list[dict]], names: set[DatasetKey], token: str) -> list[RefusedFacet]:
    """Take out of `rows` the aliases that would take a name in `names` (those of
    datasets the token `token` may not write: an alias is shown on the dataset
    whose name it takes), and say where each came from (`sides`: the event's
    dataset lists by name, "outputs": […], or "dataset": [the DatasetEvent's])."""
    refused = []
    for side, objects in sides.items():
        for index, obj in enumerate(objects):
            key = (obj["namespace"], obj["name"])
            found = rows.aliases.get(key)
            if not found:
                continue
            kept = [(alias, kind) for alias, kind in found if alias not in names]
            for alias, kind in found:
                if alias in names:
                    name = "lifecycleStateChange" if kind == "RENAMED" else "symlinks"
                    refused.append(RefusedFacet(
                        f"{side if side == 'dataset' else f'{side}[{index}]'}.facets.{name}", name, "not_owner",
                        f"Token {token}… may not write dataset {alias[0]}/{alias[1]} (another team owns it): "
                        f"its name was not made an alias of {key[0]}/{key[1]}; the rest of the event is stored."))
            rows.aliases[key] = kept
    return refused


def report_refused(refused: list[RefusedFacet], *, where: str) -> None:
    """Count and log the facets an event stored without (call once it is committed)."""
    for facet in refused:
        if facet.code == "facet_invalid":
            FACETS_INVALID.labels(producer=facet.producer[:MAX_PRODUCER_LABEL], facet=facet.facet).inc()
        else:
            FACETS_REFUSED.labels(facet=facet.facet, reason=facet.reason).inc()
    if refused:
        log.info("lineage ingest: %s stored without %d facet(s): %s", where, len(refused),
                 "; ".join(f"{f.path}: {f.detail}" for f in refused))


@dataclass
class FacetRows:
    """What one event says about its datasets (keys as the event names them)."""

    facets: dict[tuple[DatasetKey, str], dict] = field(default_factory=dict)
    deleted: set[tuple[DatasetKey, str]] = field(default_factory=set)
    quality: dict[DatasetKey, tuple[dict | None, list | None]] = field(default_factory=dict)
    aliases: dict[DatasetKey, list[tuple[DatasetKey, str]]] = field(default_factory=dict)
    # Datasets the event only reads: their facets fill gaps and replace nothing
    # (a reader repeats what it was told; the writer's or the DatasetEvent's word stands).
    read_only: set[DatasetKey] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.facets or self.deleted or self.quality or self.aliases)

    def alias_keys(self) -> set[DatasetKey]:
        return {alias for found in self.aliases.values() for alias, _ in found}


def _name_pair(obj: Any) -> DatasetKey | None:
    if isinstance(obj, dict):
        namespace, name = obj.get("namespace"), obj.get("name")
        if isinstance(namespace, str) and isinstance(name, str) and 0 < len(namespace) <= MAX_NAME \
                and 0 < len(name) <= MAX_NAME:
            return namespace, name
    return None


def facet_rows(datasets: Iterable[dict], *, read_only: Iterable[DatasetKey] = (), input_facets: bool = True) -> FacetRows:
    """The rows for `datasets` (the event's dataset objects; inputs' `inputFacets`
    read too); `read_only`: the keys of those the event only reads."""
    rows = FacetRows(read_only=set(read_only))
    for dataset in datasets:
        facets = dataset.get("facets") or {}
        own = (dataset.get("inputFacets") or {}) if input_facets else {}
        if not ((_WANTED & facets.keys()) or (QUALITY & own.keys())):
            continue
        key = (dataset["namespace"], dataset["name"])
        for name in KEPT & facets.keys():
            facet = facets[name]
            if facet.get("_deleted") is True:
                rows.deleted.add((key, name))
                continue
            rows.facets[(key, name)] = facet
            if name == "symlinks":
                for identifier in facet.get("identifiers") or []:
                    alias = _name_pair(identifier)
                    if alias and alias != key:
                        rows.aliases.setdefault(key, []).append((alias, str(identifier.get("type") or "")[:100]))
            elif name == "lifecycleStateChange" and facet.get("lifecycleStateChange") == "RENAME":
                previous = _name_pair(facet.get("previousIdentifier"))
                if previous and previous != key:
                    rows.aliases.setdefault(key, []).append((previous, "RENAMED"))
        metrics = own.get("dataQualityMetrics") or facets.get("dataQualityMetrics")
        assertions = own.get("dataQualityAssertions") or facets.get("dataQualityAssertions")
        metrics = metrics if isinstance(metrics, dict) and metrics.get("_deleted") is not True else None
        assertions = assertions if isinstance(assertions, dict) and assertions.get("_deleted") is not True else None
        if metrics or assertions:
            rows.quality[key] = (_fields_of(metrics) if metrics else None,
                                 list(assertions.get("assertions") or []) if assertions else None)
    return rows


def _fields_of(facet: dict) -> dict:
    return {k: v for k, v in facet.items() if not k.startswith("_")}


@dataclass(frozen=True)
class Provenance:
    origin: str
    event_time: datetime
    job_namespace: str = ""
    job_name: str = ""
    run_uuid: UUID | None = None
    event_type: str = ""


def record_facets(rows: FacetRows, datasets: dict[DatasetKey, Any], source: Provenance) -> None:
    """Write `rows` for `datasets` ({event key: Dataset}), inside the caller's transaction."""
    now = timezone.now()
    facets, fills, keys = [], [], []
    for (key, name), facet in sorted(rows.facets.items()):
        dataset = datasets.get(key)
        if dataset is None:
            continue
        digest = hashlib.sha256(json.dumps(facet, sort_keys=True).encode()).hexdigest()
        if RECENT_FACETS.is_fresh(dataset.pk, name, digest):
            continue
        row = DatasetFacet(
            dataset_id=dataset.pk, name=name, facet=facet, origin=source.origin, job_namespace=source.job_namespace,
            job_name=source.job_name, run_uuid=source.run_uuid, event_time=source.event_time, updated_at=now)
        if key in rows.read_only:
            fills.append(row)
        else:
            keys.append((dataset.pk, name, digest))
            facets.append(row)
    if fills:
        DatasetFacet.objects.bulk_create(fills, ignore_conflicts=True)
    if facets:
        DatasetFacet.objects.bulk_create(
            facets, update_conflicts=True, unique_fields=["dataset", "name"],
            update_fields=["facet", "origin", "job_namespace", "job_name", "run_uuid", "event_time", "updated_at"])
        RECENT_FACETS.remember_after_commit(keys)
    gone = Q()
    for key, name in rows.deleted:
        if key in datasets and key not in rows.read_only:
            gone |= Q(dataset_id=datasets[key].pk, name=name)
            RECENT_FACETS.forget(datasets[key].pk, name)
    if gone:
        DatasetFacet.objects.filter(gone).delete()
    aliases = [DatasetAlias(namespace=alias[0], name=alias[1], dataset_id=datasets[key].pk, kind=kind)
               for key, found in sorted(rows.aliases.items()) if key in datasets for alias, kind in found]
    if aliases:
        # The first dataset to claim a name keeps it: an alias never moves silently.
        DatasetAlias.objects.bulk_create(aliases, ignore_conflicts=True)
    checks = []
    for key, (metrics, assertions) in sorted(rows.quality.items(), key=lambda item: item[0]):
        dataset = datasets.get(key)
        if dataset is None:
            continue
        assertions = [a for a in assertions or [] if isinstance(a, dict)]
        checks.append(QualityCheck(
            dataset_id=dataset.pk, run_uuid=source.run_uuid, job_namespace=source.job_namespace,
            job_name=source.job_name, event_type=source.event_type, event_time=source.event_time,
            metrics=metrics, assertions=assertions, assertion_count=len(assertions),
            failed_count=sum(a.get("success") is False for a in assertions), checked_at=now))
    if checks and source.run_uuid is not None:
        # One row per (dataset, run): the COMPLETE replaces what START said.
        QualityCheck.objects.bulk_create(
            checks, update_conflicts=True, unique_fields=["dataset", "run_uuid"],
            update_fields=["job_namespace", "job_name", "event_type", "event_time", "metrics", "assertions",
                           "assertion_count", "failed_count", "checked_at", "judged", "judge_attempts"])
    elif checks:
        QualityCheck.objects.bulk_create(checks)
    for check in checks:
        quality_reported.send(
            sender=QualityCheck, dataset_id=check.dataset_id, run_uuid=check.run_uuid,
            job_namespace=check.job_namespace, job_name=check.job_name, event_type=check.event_type,
            event_time=check.event_time, assertions=check.assertions, metrics=check.metrics)

