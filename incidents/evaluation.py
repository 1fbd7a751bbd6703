"""From evidence to status and incidents: one module for every path.

- `record_quality`: a run (or a DatasetEvent) reported assertions about a dataset
  (lineage.signals.quality_reported; judged after the ingest's commit, by
  incidents.pending). Only a run's COMPLETE, FAIL or ABORT is
  final: a START or RUNNING marks the checks it names as running and keeps their
  previous final verdict. The newest final result per check wins; an older one
  arriving late changes nothing.
- `record_freshness`, `record_drift`: a bound dataset went stale (or fresh again),
  a written schema drifted from its contract (or matched it).
- `refresh_status`: the binding's status from the contract's declared checks
  (contracts_app's documents, incidents.declared), the check results and the
  dataset's conditions.
- `open_incident` / `resolve_automatically`: one incident per (dataset, cause,
  key) while it is open, deduplicated by the database; each opening is routed to
  the teams reading what it affects (incidents.routing) and queued for their
  channels (incidents.notifications).

Everything runs inside the caller's transaction (the evaluator's for quality
results, incidents.pending; a freshness pass's; the ingest's for a schema
comparison); network I/O happens after commit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from registry_client.versions import latest_release

from contracts_app.models import ContractVersion, DatasetBinding, SchemaDriftCheck, version_of
from incidents.declared import DeclaredCheck, assertion_key, check_key, declared_checks
from incidents.models import (
    Cause,
    CheckResult,
    ContractState,
    ContractStatus,
    Incident,
    IncidentEvent,
    IncidentState,
    QualitySLO,
    Resolution,
    Verdict,
)
from incidents.notifications import tell_downstream
from registry.models import AuditEvent, Dataset, actor_label

ACTOR = "incident evaluator"
FINAL_EVENTS = frozenset({"COMPLETE", "FAIL", "ABORT", ""})  # "": a DatasetEvent, which has no run
# Worse first: within one run, two assertions on the same check keep the worse verdict.
_SEVERITY = {Verdict.FAILED: 3, Verdict.ERRORED: 2, Verdict.PASSED: 1, Verdict.NEVER_RUN: 0}


class AuditAction:
    OPENED = "incident.opened"
    ACKNOWLEDGED = "incident.acknowledged"
    RESOLVED = "incident.resolved"
    QUALITY_SLO = "incident.quality_slo_changed"


def _verdict(assertion: dict, event_type: str) -> str:
    """An assertion's verdict: `success` true or false, anything else (no verdict,
    an aborted run) errored."""
    if event_type == "ABORT":
        return Verdict.ERRORED
    success = assertion.get("success")
    if success is True:
        return Verdict.PASSED
    if success is False:
        return Verdict.FAILED
    return Verdict.ERRORED


def lock_dataset(dataset_id: int) -> None:
    """Serialize evaluations of one dataset across processes (until commit)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [7428, dataset_id % 2_147_483_647])


@dataclass
class Reported:
    column: str
    kind: str
    name: str
    verdict: str
    detail: dict


@transaction.atomic(savepoint=False)
def record_quality(dataset_id: int, *, run_uuid: UUID | None, event_type: str, event_time: datetime,
                   assertions: list[dict], job_name: str = "", now: datetime | None = None) -> ContractStatus | None:
    """Record what one event reported about a dataset's checks, then re-judge its binding."""
    now = now or timezone.now()
    final = event_type in FINAL_EVENTS
    reported: dict[str, Reported] = {}
    for assertion in assertions:
        if not isinstance(assertion, dict):
            continue
        column, kind = assertion_key(assertion)
        if not kind:
            continue
        verdict = _verdict(assertion, event_type)
        key = check_key(column, kind)
        if key not in reported or _SEVERITY[verdict] > _SEVERITY[reported[key].verdict]:
            reported[key] = Reported(column, kind, str(assertion.get("name") or "")[:500], verdict, {
                k: assertion[k] for k in ("actual", "expected", "severity") if k in assertion})
    lock_dataset(dataset_id)
    rows = {check_key(r.column, r.kind): r for r in CheckResult.objects.filter(dataset_id=dataset_id)}
    new, changed, decided = [], [], {}
    for key, what in reported.items():
        row = rows.get(key)
        if row is None:
            row = rows[key] = CheckResult(dataset_id=dataset_id, column=what.column, kind=what.kind)
            new.append(row)
        elif row not in changed:
            changed.append(row)
        newer = row.event_time is None or event_time >= row.event_time
        if final and newer:
            row.verdict, row.name, row.detail = what.verdict, what.name, what.detail
            row.run_uuid, row.job_name, row.event_time = run_uuid, job_name[:500], event_time
            decided[key] = row
        elif not final and newer and run_uuid is not None:
            row.running_run_uuid, row.running_since = run_uuid, event_time
        row.updated_at = now
    if final:
        # The run is over: it no longer runs any check, reported here or not.
        for row in rows.values():
            if row.running_run_uuid is not None and (row.running_run_uuid == run_uuid or (
                    row.running_since is not None and row.running_since <= event_time and row.pk is not None
                    and check_key(row.column, row.kind) in decided)):
                row.running_run_uuid = row.running_since = None
                if row.pk is not None and row not in changed:
                    changed.append(row)
    if new or changed:
        # One statement for the new and the changed rows: the advisory lock makes the values decided above final.
        CheckResult.objects.bulk_create(
            [*new, *changed], update_conflicts=True, unique_fields=["dataset", "column", "kind"],
            update_fields=["verdict", "name", "detail", "run_uuid", "job_name", "event_time", "running_run_uuid",
                           "running_since", "updated_at"])
    return refresh_status(dataset_id, now=now, results=rows, decided=decided, run_uuid=run_uuid,
                          event_time=event_time)


# --- the binding's status ------------------------------------------------------------

class _DeclaredCache:
    """Declared checks by contract version id: a published version never changes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.found: dict[int, list[DeclaredCheck]] = {}

    def of(self, version_id: int) -> list[DeclaredCheck]:
        found = self.found.get(version_id)
        if found is None:
            document = ContractVersion.objects.filter(pk=version_id).values_list("document", flat=True).first() or {}
            found = declared_checks(document if isinstance(document, dict) else {})
            with self.lock:
                if len(self.found) > 10_000:
                    self.found.clear()
                self.found[version_id] = found
        return found


DECLARED = _DeclaredCache()


def _label(column: str, kind: str) -> str:
    return f"{kind} on {column}" if column else f"{kind} on the dataset"


def _check_entry(column: str, kind: str, declared: bool, row: CheckResult | None) -> dict[str, Any]:
    return {
        "column": column, "kind": kind, "declared": declared,
        "verdict": row.verdict if row else Verdict.NEVER_RUN,
        "name": row.name if row else "",
        "run_id": str(row.run_uuid) if row and row.run_uuid else None,
        "job": row.job_name if row else "",
        "at": row.event_time.isoformat() if row and row.event_time else None,
        "running": bool(row and row.running_run_uuid),
        "detail": row.detail if row else {},
    }


def judge(declared: list[DeclaredCheck], results: dict[str, CheckResult], conditions: dict[str, str],
          has_schema_evidence: bool) -> tuple[str, bool, list[str], list[dict]]:
    """(status, running, reasons, checks) of a binding. The rules:
    - a declared check whose latest final verdict failed, or a condition (stale,
      drifted, checks late), makes it failing;
    - a declared check never reported, errored, or only running makes it unverified;
    - an assertion the contract does not declare is listed and decides nothing;
    - with no declared checks, a compared schema is the evidence (none: unverified)."""
    failing: list[str] = []
    unverified: list[str] = []
    checks: list[dict] = []
    running = False
    declared_keys = set()
    for check in declared:
        declared_keys.add(check.key)
        row = results.get(check.key)
        entry = _check_entry(check.column, check.kind, True, row)
        checks.append(entry)
        running = running or entry["running"]
        label = _label(check.column, check.kind)
        if entry["verdict"] == Verdict.FAILED:
            failing.append(f"{label} failed in run {entry['run_id']} of {entry['job'] or 'an unnamed job'}")
        elif entry["verdict"] == Verdict.ERRORED:
            unverified.append(f"{label} errored (no verdict) in run {entry['run_id']}")
        elif entry["verdict"] == Verdict.NEVER_RUN:
            unverified.append(f"{label} has never reported a final result"
                              + (" (a run is reporting now)" if entry["running"] else ""))
    for key, row in sorted(results.items()):
        if key not in declared_keys:
            checks.append(_check_entry(row.column, row.kind, False, row))
    failing += [text for _, text in sorted(conditions.items())]
    if not declared and not has_schema_evidence and not failing:
        unverified.append("the contract declares no checks and no written schema was compared with it yet")
    if failing:
        return ContractState.FAILING, running, failing + unverified, checks
    if unverified:
        return ContractState.UNVERIFIED, running, unverified, checks
    reason = (f"all {len(declared)} declared check(s) passed in their latest final run" if declared
              else "the latest written schema matched the contract (it declares no checks)")
    return ContractState.PASSING, running, [reason], checks


@transaction.atomic(savepoint=False)
def refresh_status(dataset_id: int, *, now: datetime | None = None, results: dict[str, CheckResult] | None = None,
                   decided: dict[str, CheckResult] | None = None, run_uuid: UUID | None = None,
                   event_time: datetime | None = None, conditions: dict[str, str | None] | None = None,
                   ) -> ContractStatus | None:
    """Re-judge the dataset's binding (none: its status row goes) and open or resolve
    the incidents of the declared checks that `decided` (newly final results)."""
    now = now or timezone.now()
    # The bound contract's versions in one query; none: unbound (or nothing published yet, rare).
    versions = list(ContractVersion.objects.filter(contract__bindings__dataset_id=dataset_id)
                    .only("pk", "version", "contract_id"))
    binding = versions[0].contract_id if versions else (
        DatasetBinding.objects.filter(dataset_id=dataset_id).values_list("contract_id", flat=True).first())
    if binding is None:
        ContractStatus.objects.filter(dataset_id=dataset_id).delete()
        return None
    version = latest_release(versions, key=version_of)
    if results is None:
        results = {check_key(r.column, r.kind): r for r in CheckResult.objects.filter(dataset_id=dataset_id)}
    status = ContractStatus.objects.select_for_update().filter(dataset_id=dataset_id).first()
    if status is None:
        status = ContractStatus(dataset_id=dataset_id, contract_id=binding)
    held = dict(status.facts or {})
    for name, text in (conditions or {}).items():
        if text:
            held[name] = text
        else:
            held.pop(name, None)
    declared = DECLARED.of(version.pk) if version else []
    if version is None:
        state, running, reasons, checks = ContractState.UNVERIFIED, False, [
            "the contract has no published version to judge against"], []
    else:
        evidence = bool(declared) or SchemaDriftCheck.objects.filter(dataset_id=dataset_id).exists()
        state, running, reasons, checks = judge(declared, results, held, evidence)
    status.contract_id, status.version = binding, version.version if version else ""
    status.status, status.running, status.reasons, status.checks = state, running, reasons, checks
    status.facts, status.evaluated_at = held, now
    status.save()
    declared_keys = {check.key: check for check in declared}
    # Most results change nothing: only a failure opens, only an open incident can be resolved.
    open_keys = set(Incident.objects.unresolved().filter(dataset_id=dataset_id, cause=Cause.CHECK_FAILED)
                    .values_list("key", flat=True)) if decided else set()
    for key, row in (decided or {}).items():
        check = declared_keys.get(key)
        if check is None:
            continue  # undeclared: shown, decides nothing
        if row.verdict == Verdict.PASSED and key not in open_keys:
            continue
        evidence = {"run_id": str(row.run_uuid) if row.run_uuid else None, "job": row.job_name,
                    "assertion": row.name, "column": check.column, "kind": check.kind,
                    "event_time": row.event_time.isoformat() if row.event_time else None, **row.detail}
        if row.verdict == Verdict.FAILED:
            open_incident(dataset_id, Cause.CHECK_FAILED, key, column=check.column, now=now, evidence=evidence,
                          summary=f"{_label(check.column, check.kind)} failed"
                                  + (f" ({row.name})" if row.name else ""))
        elif row.verdict == Verdict.PASSED:
            resolve_automatically(dataset_id, Cause.CHECK_FAILED, key, now=now, evidence=evidence,
                                  text=f"{_label(check.column, check.kind)} passed in run {evidence['run_id']}")
    if decided and declared and all(
            results.get(c.key) is not None and results[c.key].verdict == Verdict.PASSED for c in declared):
        checks_passed(dataset_id, now=now, run_uuid=run_uuid, event_time=event_time, late=Cause.CHECK_LATE in held)
    return status


# --- conditions: stale, drifted, late ---------------------------------------------------

@transaction.atomic(savepoint=False)
def record_condition(dataset_id: int, cause: str, text: str | None, *, now: datetime | None = None,
                     evidence: dict | None = None) -> None:
    """A bound dataset's condition began (`text`: why) or ended (None): stale,
    drifted from its contract, or its checks late. Opens or resolves the incident."""
    now = now or timezone.now()
    if not DatasetBinding.objects.filter(dataset_id=dataset_id).exists():
        return
    lock_dataset(dataset_id)
    refresh_status(dataset_id, now=now, conditions={cause: text})
    if text:
        open_incident(dataset_id, cause, "", column="", summary=text, evidence=evidence or {}, now=now)
    else:
        resolve_automatically(dataset_id, cause, "", now=now, evidence=evidence or {},
                              text=_ENDED.get(cause, "the condition ended"))


_ENDED = {Cause.STALE: "a later write made it fresh again", Cause.DRIFT: "a later written schema matched the contract",
          Cause.CHECK_LATE: "its declared checks passed"}


# --- incidents -----------------------------------------------------------------------

def open_incident(dataset_id: int, cause: str, key: str, *, column: str, summary: str, evidence: dict,
                  now: datetime | None = None) -> Incident | None:
    """Open the incident unless one is open for (dataset, cause, key): then the
    evidence joins its timeline. The partial unique index decides between replicas."""
    now = now or timezone.now()
    try:
        with transaction.atomic():
            incident = Incident.objects.create(dataset_id=dataset_id, cause=cause, key=key, column=column.casefold(),
                                               summary=summary[:2000], evidence=evidence, opened_at=now)
    except IntegrityError:
        existing = Incident.objects.unresolved().filter(dataset_id=dataset_id, cause=cause, key=key).first()
        if existing is not None and existing.evidence.get("run_id") != evidence.get("run_id"):
            IncidentEvent.objects.create(incident=existing, at=now, kind="seen_again", actor_label=ACTOR,
                                         text=f"seen again: {summary}", detail=evidence)
        return None
    IncidentEvent.objects.create(incident=incident, at=now, kind="opened", actor_label=ACTOR, text=summary,
                                 detail=evidence)
    dataset = Dataset.objects.select_related("owner_team").get(pk=dataset_id)
    incident.dataset = dataset
    AuditEvent.record(ACTOR, AuditAction.OPENED, incident, after={
        "dataset": f"{dataset.namespace}/{dataset.name}", "cause": cause, "key": key, "evidence": evidence})
    tell_downstream(incident, now=now)
    return incident


def resolve_automatically(dataset_id: int, cause: str, key: str, *, now: datetime | None = None,
                          evidence: dict, text: str) -> list[Incident]:
    now = now or timezone.now()
    resolved = list(Incident.objects.unresolved().select_for_update()
                    .filter(dataset_id=dataset_id, cause=cause, key=key))
    for incident in resolved:
        _resolve(incident, Resolution.AUTOMATIC, by=None, now=now, text=f"resolved by itself: {text}",
                 detail=evidence)
    return resolved


def resolve_by_owner(incident: Incident, *, by, note: str = "") -> None:
    """The owner team resolves it (inside the caller's transaction, the row locked)."""
    text = f"resolved by {actor_label(by)}" + (f": {note}" if note else "")
    _resolve(incident, Resolution.OWNER, by=by, now=timezone.now(), text=text, detail={"note": note})


def _resolve(incident: Incident, resolution: str, *, by, now: datetime, text: str, detail: dict) -> None:
    before = incident.state
    incident.state, incident.resolution, incident.resolved_at = IncidentState.RESOLVED, resolution, now
    person = by if getattr(by, "is_authenticated", False) and not getattr(by, "principal_team_ids", None) else None
    incident.resolved_by = person if getattr(person, "pk", None) else None
    incident.save(update_fields=["state", "resolution", "resolved_at", "resolved_by"])
    actor = by if by is not None else ACTOR
    IncidentEvent.objects.create(incident=incident, at=now, kind="resolved", text=text, detail=detail,
                                 actor_label=_actor_label(actor))
    AuditEvent.record(actor, AuditAction.RESOLVED, incident, before={"state": before},
                      after={"state": incident.state, "resolution": resolution, "text": text})


def _actor_label(actor) -> str:
    return actor_label(actor)


# --- the quality SLO -------------------------------------------------------------------

def checks_passed(dataset_id: int, *, now: datetime, run_uuid: UUID | None = None,
                  event_time: datetime | None = None, late: bool = False) -> None:
    """Every declared check passed: a pending quality deadline of a write before the
    result is met, and a breach is over."""
    pending = QualitySLO.objects.filter(dataset_id=dataset_id, due_at__isnull=False)
    if event_time is not None:
        pending = pending.filter(last_write_at__lte=event_time)
    pending.update(due_at=None, task_eta=None)
    if late:
        record_condition(dataset_id, Cause.CHECK_LATE, None, now=now,
                         evidence={"run_id": str(run_uuid) if run_uuid else None})
