"""Who must hear of an incident: the teams whose jobs read what it affects.

The same usage and routing change requests use (registry.usage): the affected
columns of the dataset (one column for a failed check, every column for a stale
or drifted dataset), the columns they feed downstream through other jobs'
outputs (registry.usage.value_flow, up to DOWNSTREAM_DEPTH hops), and every
job reading any of those (`readings_of`). A job whose reading is unknown (it
reads every column, or nothing says which) cannot be proved safe and is told; a
consumer team with no job seen is told unless the columns it declared miss the
affected ones. Each team gets the paths from the incident to its jobs.

A bounded number of queries: one `column_steps` call per hop, then
two for the readings and one for the consumers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from registry.models import Consumer, Dataset
from registry.usage import Effect, readings_of, value_flow


@dataclass
class Told:
    team_id: int
    paths: list[list[str]] = field(default_factory=list)


def _label(dataset: Dataset | None, dataset_id: int) -> str:
    return f"{dataset.namespace}/{dataset.name}" if dataset else f"dataset #{dataset_id}"


def _step(label: str, columns: set[str] | None) -> str:
    return f"{label} ({', '.join(sorted(columns))})" if columns else f"{label} (every column)"


def downstream_of(dataset_id: int, column: str, *, now: datetime | None = None
                  ) -> tuple[dict[int, set[str] | None], dict[int, int | None]]:
    """({dataset id: affected columns (None: every column)}, {dataset id: the dataset it was
    reached from}), by the change requests' own walk (registry.usage.value_flow): a failed
    check or a stale write may change any value of what it touches."""
    sources = {dataset_id: {column: set(Effect.ALL)} if column else None}
    flow = value_flow(sources, now=now)
    reached: dict[int, set[str] | None] = {dataset_id: {column} if column else None}
    parent: dict[int, int | None] = {dataset_id: None}
    for target, columns in flow.reached.items():
        if target == dataset_id:
            if reached[dataset_id] is not None:
                reached[dataset_id] |= set(columns)
            continue
        reached[target] = set(columns)
        first = min((flow.steps[(target, c)] for c in columns if (target, c) in flow.steps),
                    key=lambda step: step.column)
        parent[target] = first.input_dataset_id
    return reached, parent


def who_reads(dataset_id: int, column: str, *, owner_team_id: int | None,
              now: datetime | None = None) -> tuple[dict[int, Told], list[dict]]:
    """({team id: Told}, [teams judged not affected, with why]) for an incident
    affecting `column` of the dataset ("" = every column)."""
    reached, parent = downstream_of(dataset_id, column, now=now)
    datasets = Dataset.objects.in_bulk(list(reached))

    def chain(target: int) -> list[str]:
        steps: list[str] = []
        at: int | None = target
        while at is not None and len(steps) <= len(parent):  # a cycle of edges ends the walk
            steps.append(_step(_label(datasets.get(at), at), reached[at]))
            at = parent.get(at)
        return list(reversed(steps))

    told: dict[int, Told] = {}
    spared: dict[int, str] = {}
    for reading in readings_of(list(reached), now=now):
        if reading.team_id is None or reading.team_id == owner_team_id:
            continue
        affected = reached[reading.dataset_id]
        folded = {c.casefold() for c in (reading.columns or {})}
        if reading.columns is None or affected is None or folded & {c.casefold() for c in affected}:
            how = "reads every column or nothing says which" if reading.columns is None else "reads it"
            told.setdefault(reading.team_id, Told(reading.team_id)).paths.append(
                [*chain(reading.dataset_id), f"job {reading.job} ({how})"])
        else:
            spared.setdefault(reading.team_id, f"job {reading.job} reads {', '.join(sorted(reading.columns or {}))} "
                                               f"of {_label(datasets.get(reading.dataset_id), reading.dataset_id)}")
    for consumer in Consumer.objects.filter(dataset_id__in=list(reached)).exclude(team_id=owner_team_id):
        if consumer.team_id in told:
            continue
        affected = reached[consumer.dataset_id]
        declared = consumer.declared_columns
        if consumer.team_id in spared and not declared:
            continue  # its jobs were seen, and none reads what is affected
        if declared and affected is not None and not ({c.casefold() for c in declared}
                                                       & {c.casefold() for c in affected}):
            spared.setdefault(consumer.team_id, f"it declared {', '.join(declared)}")
            continue
        why = "it declared an affected column" if declared else "it consumes it and nothing says which columns it reads"
        told[consumer.team_id] = Told(consumer.team_id, [[*chain(consumer.dataset_id), f"consumer registration ({why})"]])
    not_affected = [{"team_id": team_id, "why": why} for team_id, why in spared.items() if team_id not in told]
    return told, not_affected
