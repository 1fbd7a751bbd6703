"""May I read this dataset now? The preflight answer, failing closed.

`safe` is true only when the dataset is known, bound to a contract, judged, its
status is passing (every declared check passed in its latest final result, not
stale, not drifted, checks not late) and no open incident touches what is asked
about. With `columns`, only the incidents and declared checks that touch those
columns (or the whole dataset) count. Anything unknown is unsafe, with a reason.

Two queries: the dataset with its status, and its open incidents.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from incidents.models import ContractState, ContractStatus, Incident, Verdict
from registry.models import Dataset

UNKNOWN = "unknown"
NO_CONTRACT = "no_contract"


def version_matches(version: str, wanted: str) -> bool:
    """"1.x" matches 1.0 and 1.4; "1.2" and "1.2.x" match 1.2 and 1.2.3; "*" anything."""
    wanted = wanted.strip()
    if wanted in ("", "*", "x"):
        return True
    have = version.split(".")
    for index, part in enumerate(wanted.split(".")):
        if part in ("x", "*"):
            return True
        if index >= len(have) or have[index] != part:
            return index >= len(have) and part == "0"
    return True


def _incident(incident: Incident) -> dict[str, Any]:
    return {"id": incident.pk, "cause": incident.cause, "column": incident.column or None,
            "state": incident.state, "summary": incident.summary, "opened_at": incident.opened_at.isoformat(),
            "evidence": incident.evidence}


def _unsafe(status: str, reason: str, now: datetime, dataset: Dataset | None = None) -> dict[str, Any]:
    return {"safe": False, "status": status, "reasons": [reason], "incidents": [], "as_of": now.isoformat(),
            "dataset": _dataset(dataset) if dataset else None, "contract": None, "running": False}


def _dataset(dataset: Dataset) -> dict[str, Any]:
    return {"id": dataset.pk, "namespace": dataset.namespace, "name": dataset.name}


def find(*, dataset_id: int | None = None, namespace: str | None = None, name: str | None = None,
         ) -> tuple[Dataset | None, str]:
    """The dataset asked about and, when there is none, why."""
    rows = Dataset.objects.select_related("contract_status__contract")
    if dataset_id is not None:
        found = list(rows.filter(pk=dataset_id)[:1])
        return (found[0], "") if found else (None, f"no dataset has id {dataset_id}")
    if namespace:
        found = list(rows.filter(namespace=namespace, name=name)[:1])
        return (found[0], "") if found else (None, f"the registry knows no dataset {namespace}/{name}")
    found = list(rows.filter(name=name)[:2])
    if len(found) > 1:
        return None, f"more than one namespace has a dataset named {name}: give its namespace"
    return (found[0], "") if found else (None, f"the registry knows no dataset named {name}")


def answer(dataset: Dataset | None, why_not_found: str = "", *, columns: list[str] | None = None,
           contract: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    if dataset is None:
        return _unsafe(UNKNOWN, why_not_found, now)
    try:
        status = dataset.contract_status
    except ContractStatus.DoesNotExist:
        return _unsafe(NO_CONTRACT, "the dataset is not bound to a contract, or its binding was never evaluated: "
                                    "nothing says what safe means for it", now, dataset)
    folded = {c.casefold() for c in columns} if columns else None
    incidents = Incident.objects.unresolved().filter(dataset_id=dataset.pk).order_by("opened_at", "id")
    if folded is not None:
        incidents = incidents.touching(sorted(folded))
    incidents = list(incidents)
    reasons: list[str]
    state = status.status
    if folded is None:
        reasons = list(status.reasons)
    else:
        # Only what touches the columns asked about (or the whole dataset) decides.
        relevant = [c for c in status.checks if c["declared"] and (not c["column"] or c["column"].casefold() in folded)]
        failed = [c for c in relevant if c["verdict"] == Verdict.FAILED]
        unverified = [c for c in relevant if c["verdict"] in (Verdict.ERRORED, Verdict.NEVER_RUN)]
        conditions = list((status.facts or {}).values())
        reasons = ([f"{c['kind']} on {c['column'] or 'the dataset'} failed in run {c['run_id']}" for c in failed]
                   + conditions
                   + [f"{c['kind']} on {c['column'] or 'the dataset'} has no final passing result ({c['verdict']})"
                      for c in unverified])
        if failed or conditions:
            state = ContractState.FAILING
        elif unverified or status.status == ContractState.UNVERIFIED and not status.checks:
            state = ContractState.UNVERIFIED
            reasons = reasons or list(status.reasons)
        else:
            state = ContractState.PASSING
            reasons = [f"every declared check on {', '.join(sorted(folded))} passed in its latest final result"]
    safe = state == ContractState.PASSING and not incidents
    if incidents and state == ContractState.PASSING:
        reasons = [f"open incident #{i.pk}: {i.summary}" for i in incidents]
    if contract and not version_matches(status.version, contract):
        safe = False
        reasons = [f"the contract's latest version is {status.version or 'unpublished'}, not {contract}", *reasons]
    return {
        "safe": safe, "status": state, "reasons": reasons, "incidents": [_incident(i) for i in incidents],
        "as_of": status.evaluated_at.isoformat(), "running": status.running, "dataset": _dataset(dataset),
        "contract": {"name": status.contract.name, "version": status.version or None},
    }
