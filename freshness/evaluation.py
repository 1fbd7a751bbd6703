"""The freshness evaluator: one piece of code for every path that changes a status.

- a successful write (`record_write`, called from lineage's `dataset_written`),
- the Celery task scheduled for a dataset's own deadline (`evaluate` on one id),
- the Celery beat sweep and the in-process demo evaluator (`evaluate` on all,
  through `freshness.scheduling.sweep`),
- an SLO edit (`set_slo`).

This module applies the rule (freshness/rules.py) and knows nothing of how
deadlines are kept: after a write or an SLO edit moves a deadline, it tells the
listeners registered with `on_deadlines_moved` (freshness.scheduling, which
gives near deadlines a Celery task or wakes the in-process evaluator). Imports
point one way: rules <- evaluation <- scheduling <- runner, tasks.

An evaluation pass (`evaluate`), in batches of FRESHNESS_SWEEP_BATCH:
1. claims the due rows (`next_check_at <= now`, a partially indexed column)
   with FOR UPDATE SKIP LOCKED;
2. applies the status rule to each and computes its next deadline;
3. updates each row on the condition that its status and deadline are still
   the ones it read, and for each change inserts a transition row and an audit
   event.
On PostgreSQL the three steps are ONE statement (data-modifying CTEs) and the
rule runs as SQL functions (migration 0002) that mirror freshness/rules.py, so
10,000 transitions cost one round trip. On SQLite (the demo) the same steps run
with the Python rule and portable ORM statements.

Why concurrent passes are safe (the deadline task and the sweep firing
together, two sweeps, a write landing mid-pass): a pass skips the rows another
transaction holds instead of waiting for them, so it never deadlocks with an
ingest that is writing several datasets; the holder is evaluating that row
itself (a pass) or re-applies the rule to it (a write). A row claimed after a
concurrent change is read in its committed state, no longer due, and left
alone; the UPDATE's condition on the status and deadline read is a second
guard. Each transition is recorded exactly once.

A routine write (newer, counting, status unchanged: fresh stays fresh) is one
conditional UPDATE (`_record_routine_write`), since it runs inside every ingest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from freshness.constants import EVALUATOR_ACTOR, AuditAction, TransitionSource
from freshness.models import DatasetFreshness, FreshnessTransition
from freshness.rules import deadline_for, deadline_passed, human_duration, reason_for, status_for
from freshness.signals import FreshnessChange, announce
from registry.db import prepared_cursor
from registry.models import AuditEvent, Dataset, RegistryError, acts_for, is_governance_admin


class InvalidSLO(RegistryError):
    http_status = 400


# Scheduling listens here (freshness.scheduling registers itself), so that this
# module never imports it. KnownDeadlines: by dataset id, the (next_check_at,
# task_eta) a write has just left on the row.
KnownDeadlines = dict[int, tuple[datetime | None, datetime | None]]

_deadline_listeners: list[Callable[..., None]] = []


def on_deadlines_moved(fn: Callable[..., None]) -> Callable[..., None]:
    """Register `fn(now, dataset_ids, *, deadlines=None)`, called inside the
    transaction in which a write or an SLO edit moved the deadline
    (next_check_at) of `dataset_ids`, so that someone keeps that deadline.
    `deadlines` is given when the caller has the rows' new next_check_at and
    task_eta at hand (the routine write), so that the listener can tell without
    a query whether they need anything."""
    if fn not in _deadline_listeners:
        _deadline_listeners.append(fn)
    return fn


def _deadlines_moved(now: datetime, dataset_ids: list[int], deadlines: KnownDeadlines | None = None) -> None:
    for fn in _deadline_listeners:
        fn(now, dataset_ids, deadlines=deadlines)


@dataclass
class PassResult:
    evaluated: int = 0
    transitions: int = 0
    batches: int = 0
    changed: dict[str, int] = field(default_factory=dict)


def evaluate(now: datetime | None = None, *, dataset_ids: list[int] | None = None,
             source: str = TransitionSource.SWEEP, batch_size: int | None = None) -> PassResult:
    """Evaluate every due dataset (or the due ones among `dataset_ids`) at `now`.

    Idempotent and safe to run concurrently; see the module docstring.
    """
    now = now or timezone.now()
    batch_size = batch_size or settings.FRESHNESS_SWEEP_BATCH
    one_batch = _batch_postgresql if connection.vendor == "postgresql" else _batch_portable
    result = PassResult()
    while True:
        with transaction.atomic():
            evaluated, changed = one_batch(now, dataset_ids, batch_size, str(source))
        result.evaluated += evaluated
        result.batches += 1
        for status, n in changed.items():
            result.changed[status] = result.changed.get(status, 0) + n
            result.transitions += n
        if evaluated < batch_size:
            return result


def _batch_postgresql(now: datetime, dataset_ids: list[int] | None, limit: int,
                      source: str) -> tuple[int, dict[str, int]]:
    """One batch in one statement: read the due rows, apply the rule (the SQL
    functions of migration 0002, which mirror freshness.rules), update them
    conditionally, and insert a transition row and an audit event per change."""
    fresh = DatasetFreshness._meta.db_table
    transitions = FreshnessTransition._meta.db_table
    audit = AuditEvent._meta.db_table
    dataset = Dataset._meta.db_table
    only = "AND dataset_id = ANY(%(ids)s)" if dataset_ids is not None else ""
    sql = f"""
    WITH due AS (
        SELECT dataset_id, status AS old_status, next_check_at AS old_next, last_write_at, max_age, warn_after,
               freshness_status(max_age, warn_after, last_write_at, %(now)s) AS new_status
          FROM {fresh}
         WHERE next_check_at <= %(now)s {only}
         ORDER BY next_check_at
         LIMIT %(limit)s
           FOR UPDATE SKIP LOCKED
    ), updated AS (
        UPDATE {fresh} AS f
           SET status = d.new_status,
               next_check_at = freshness_deadline(d.new_status, d.max_age, d.warn_after, d.last_write_at),
               status_since = CASE WHEN d.new_status <> d.old_status THEN %(now)s ELSE f.status_since END,
               evaluated_at = %(now)s
          FROM due AS d
         WHERE f.dataset_id = d.dataset_id
           -- a second guard for concurrent passes: see the module docstring
           AND f.status = d.old_status
           AND f.next_check_at = d.old_next
        RETURNING f.dataset_id, d.old_status, d.new_status, d.old_next,
                  CASE WHEN d.new_status <> d.old_status
                       THEN freshness_reason(d.new_status, d.max_age, d.warn_after, d.last_write_at, %(now)s)
                  END AS reason
    ), recorded AS (
        INSERT INTO {transitions} (dataset_id, from_status, to_status, at, due_at, source, reason)
        SELECT dataset_id, old_status, new_status, %(now)s, old_next, %(source)s, reason
          FROM updated WHERE new_status <> old_status
        RETURNING id, dataset_id, from_status, to_status, due_at, reason
    ), audited AS (
        INSERT INTO {audit} (actor_id, actor_label, action, object_type, object_id, object_repr,
                             before, after, at)
        SELECT NULL, %(actor)s, %(action)s, %(object_type)s, r.dataset_id::text,
               left(d.namespace || '/' || d.name, 500),
               jsonb_build_object('status', r.from_status),
               jsonb_build_object('status', r.to_status, 'reason', r.reason, 'source', %(source)s,
                                  'due_at', r.due_at, 'transition', r.id),
               %(now)s
          FROM recorded AS r JOIN {dataset} AS d ON d.id = r.dataset_id
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM due),
           (SELECT coalesce(jsonb_object_agg(to_status, n), '{{}}'::jsonb)
              FROM (SELECT to_status, count(*) AS n FROM recorded GROUP BY to_status) AS c),
           (SELECT count(*) FROM audited),
           (SELECT coalesce(jsonb_agg(jsonb_build_array(dataset_id, from_status, to_status, due_at, reason)),
                            '[]'::jsonb) FROM recorded)
    """
    params = {
        "now": now, "ids": dataset_ids, "limit": limit, "source": source,
        "actor": EVALUATOR_ACTOR, "action": AuditAction.TRANSITION, "object_type": Dataset._meta.label_lower,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        evaluated, changed, _, rows = cursor.fetchone()
    if isinstance(changed, str):
        changed = json.loads(changed)
    if isinstance(rows, str):
        rows = json.loads(rows)
    announce([FreshnessChange(dataset_id, old, new, now, parse_datetime(due) if due else None, reason or "")
              for dataset_id, old, new, due, reason in rows])
    return evaluated, changed


def _batch_portable(now: datetime, dataset_ids: list[int] | None, limit: int,
                    source: str) -> tuple[int, dict[str, int]]:
    """The same batch for SQLite (the embedded demo), with the Python rule:
    a read, conditional UPDATEs, then bulk inserts."""
    due = DatasetFreshness.objects.due(now)
    if dataset_ids is not None:
        due = due.filter(dataset_id__in=dataset_ids)
    rows = list(due.order_by("next_check_at").values_list(
        "dataset_id", "status", "next_check_at", "last_write_at", "max_age", "warn_after")[:limit])
    recorded: list[FreshnessTransition] = []
    for dataset_id, old, old_next, last_write_at, max_age, warn_after in rows:
        new = status_for(max_age, warn_after, last_write_at, now)
        fields = {"status": new, "next_check_at": deadline_for(new, max_age, warn_after, last_write_at),
                  "evaluated_at": now}
        if new != old:
            fields["status_since"] = now
        updated = DatasetFreshness.objects.filter(
            dataset_id=dataset_id, status=old, next_check_at=old_next).update(**fields)
        if updated and new != old:
            recorded.append(FreshnessTransition(
                dataset_id=dataset_id, from_status=old, to_status=new, at=now, due_at=old_next, source=source,
                reason=reason_for(new, max_age, warn_after, last_write_at, now),
            ))
    changed: dict[str, int] = {}
    if recorded:
        FreshnessTransition.objects.bulk_create(recorded)
        datasets = Dataset.objects.in_bulk([t.dataset_id for t in recorded])
        AuditEvent.objects.bulk_create([_audit_row(t, datasets[t.dataset_id]) for t in recorded])
        for t in recorded:
            changed[t.to_status] = changed.get(t.to_status, 0) + 1
        announce([FreshnessChange(t.dataset_id, t.from_status, t.to_status, t.at, t.due_at, t.reason)
                  for t in recorded])
    return len(rows), changed


def _audit_row(t: FreshnessTransition, dataset: Dataset) -> AuditEvent:
    return AuditEvent(**AuditEvent.fields_for(
        EVALUATOR_ACTOR, AuditAction.TRANSITION, dataset,
        before={"status": t.from_status},
        after={"status": t.to_status, "reason": t.reason, "source": str(t.source),
               "due_at": t.due_at.isoformat() if t.due_at else None, "transition": t.pk},
    ), at=t.at)


def _reassess(row: DatasetFreshness, now: datetime, *, source: str, reason: str | None = None,
              actor=EVALUATOR_ACTOR, sender: dict | None = None) -> FreshnessTransition | None:
    """Re-apply the rule to one locked row after a write or an SLO edit and save it."""
    new = status_for(row.max_age, row.warn_after, row.last_write_at, now)
    transition = None
    if new != row.status:
        # A write that arrives after its own deadline, or an SLO edit, passes a deadline too:
        # the transition names it, as a deadline task's does (one breach, one deadline).
        transition = FreshnessTransition.objects.create(
            dataset_id=row.dataset_id, from_status=row.status, to_status=new, at=now,
            due_at=deadline_passed(new, row.max_age, row.warn_after, row.last_write_at),
            source=source, reason=reason or reason_for(new, row.max_age, row.warn_after, row.last_write_at, now),
        )
        AuditEvent.record(actor, AuditAction.TRANSITION, row.dataset,
                          before={"status": row.status},
                          after={"status": new, "reason": transition.reason, "source": str(source),
                                 "due_at": transition.due_at.isoformat() if transition.due_at else None,
                                 "transition": transition.pk, **(sender or {})})
        row.status, row.status_since = new, now
        announce([FreshnessChange(row.dataset_id, transition.from_status, new, now, transition.due_at,
                                  transition.reason)])
    row.next_check_at = deadline_for(new, row.max_age, row.warn_after, row.last_write_at)
    row.evaluated_at = now
    row.save()
    _deadlines_moved(now, [row.dataset_id])
    return transition


def record_write(dataset: Dataset, *, at: datetime, row_count: int | None,
                 now: datetime | None = None, run_label: str = "", by=None, token=None) -> FreshnessTransition | None:
    """A successful (COMPLETE) run wrote `dataset`. Call inside the ingest transaction.

    A write of zero rows refreshes nothing unless the SLO says empty writes count;
    a missing row count (no outputStatistics facet) is taken as a real write.
    `by`, `token`: who sent the event and with which ApiToken; a status change
    names them in its audit row (loaded only then), else the evaluator acts.
    """
    now = now or timezone.now()
    at = min(at, now)  # a producer's clock ahead of ours must not buy future freshness
    if connection.vendor == "postgresql" and _record_routine_write(dataset.pk, at, row_count, now):
        return None
    with transaction.atomic():
        # A deadline that lapsed and was not evaluated yet (its task runs late behind a busy
        # worker, or a pass skipped the locked row) is a breach all the same: record it
        # before this write ends it. A row another pass holds is being evaluated there.
        evaluate(now, dataset_ids=[dataset.pk], source=TransitionSource.DEADLINE)
        row, _ = DatasetFreshness.objects.select_for_update().get_or_create(dataset=dataset)
        row.dataset = dataset
        if row_count == 0 and not row.empty_write_counts:
            if row.last_empty_write_at is None or at > row.last_empty_write_at:
                row.last_empty_write_at = at
                row.save(update_fields=["last_empty_write_at"])
            return None
        if row.last_write_at is not None and at <= row.last_write_at:
            return None  # an older event arriving late changes nothing
        row.last_write_at = at
        rows = "an unknown number of rows" if row_count is None else f"{row_count} rows"
        detail = f" by {run_label}" if run_label else ""
        sender = _sender(token)
        if sender:
            detail += f" with token {sender['token']}"
        return _reassess(row, now, source=TransitionSource.WRITE,
                         reason=f"successful write of {rows}{detail} at {at:%Y-%m-%d %H:%M:%S} UTC",
                         actor=by if by is not None else EVALUATOR_ACTOR, sender=sender)


def _sender(token) -> dict:
    """What a write's audit row says of the token that sent it."""
    if token is None:
        return {}
    return {"token": f"{token.name} ({token.key_prefix}…)", "token_id": token.pk,
            "token_team": token.team.slug if token.team_id else None}


def _record_routine_write(dataset_id: int, at: datetime, row_count: int | None, now: datetime) -> bool:
    """The common writes, in one statement: a newer, counting write that leaves the
    status as it is (fresh stays fresh), and a counting write older than the last
    one (late: it changes nothing). It runs on every ingested COMPLETE event, so it
    must cost the ingest as little as possible. Anything else (no row yet, an
    empty write, a status change, a deadline due and not evaluated yet) returns
    False for the full path."""
    with prepared_cursor() as cursor:
        cursor.execute(_ROUTINE_WRITE_SQL, {"id": dataset_id, "at": at, "now": now, "rows": row_count})
        found = cursor.fetchone()
    if found is None:
        return False
    late, next_check_at, task_eta, updated = found
    if late:
        return True
    if not updated:
        return False
    _deadlines_moved(now, [dataset_id], {dataset_id: (next_check_at, task_eta)})
    return True


# Prepared, like the ingest's own statements: planning it costs more than running it.
# `late` is read from the statement's snapshot: last_write_at only moves forward,
# so a write older than a committed one stays older.
_ROUTINE_WRITE_SQL = f"""
    WITH counts AS (SELECT (%(rows)s::bigint IS NULL OR %(rows)s::bigint > 0) AS counted),
    cur AS (
        SELECT f.last_write_at >= %(at)s AND (counts.counted OR f.empty_write_counts) AS late
          FROM {DatasetFreshness._meta.db_table} AS f, counts
         WHERE f.dataset_id = %(id)s
    ),
    upd AS (
        UPDATE {DatasetFreshness._meta.db_table} AS f
           SET last_write_at = %(at)s,
               next_check_at = freshness_deadline(f.status, f.max_age, f.warn_after, %(at)s),
               evaluated_at = %(now)s
          FROM counts
         WHERE f.dataset_id = %(id)s
           AND f.last_write_at < %(at)s
           AND (counts.counted OR f.empty_write_counts)
           AND f.status = freshness_status(f.max_age, f.warn_after, %(at)s, %(now)s)
           -- a lapsed deadline not evaluated yet: the full path records its breach first
           AND (f.next_check_at IS NULL OR f.next_check_at > %(now)s)
        RETURNING f.next_check_at, f.task_eta, true AS updated
    )
    SELECT COALESCE(cur.late, false), upd.next_check_at, upd.task_eta, upd.updated FROM cur LEFT JOIN upd ON true"""


def can_edit_slo(user, dataset: Dataset) -> bool:
    if is_governance_admin(user):
        return True
    return dataset.owner_team_id is not None and acts_for(user, dataset.owner_team)


def validate_slo(max_age: timedelta | None, warn_after: timedelta | None) -> None:
    if max_age is not None and max_age <= timedelta(0):
        raise InvalidSLO("max_age must be longer than zero, e.g. 6h.")
    if warn_after is not None:
        if max_age is None:
            raise InvalidSLO("warn_after needs a max_age: a warning threshold without an SLO means nothing.")
        if warn_after <= timedelta(0):
            raise InvalidSLO("warn_after must be longer than zero, e.g. 4h.")
        if warn_after >= max_age:
            raise InvalidSLO(
                f"warn_after ({human_duration(warn_after)}) must be shorter than max_age ({human_duration(max_age)})."
            )


def set_slo(dataset: Dataset, *, max_age: timedelta | None, warn_after: timedelta | None = None,
            empty_write_counts: bool = False, by, now: datetime | None = None) -> DatasetFreshness:
    """The owner team (or an admin) sets, changes or removes (max_age=None) a dataset's SLO."""
    if not can_edit_slo(by, dataset):
        who = f"team {dataset.owner_team.slug}" if dataset.owner_team_id else "a governance admin (the dataset is unowned)"
        raise PermissionDenied(f"Only {who} can change the freshness SLO of {dataset}.")
    validate_slo(max_age, warn_after)
    now = now or timezone.now()
    with transaction.atomic():
        row, _ = DatasetFreshness.objects.select_for_update().get_or_create(dataset=dataset)
        row.dataset = dataset
        before = slo_snapshot(row)
        row.max_age, row.warn_after, row.empty_write_counts = max_age, warn_after, empty_write_counts
        after = slo_snapshot(row)
        if before != after:
            AuditEvent.record(by, AuditAction.SLO_CHANGED, dataset, before=before, after=after)
            _reassess(row, now, source=TransitionSource.SLO_CHANGE, actor=by,
                      reason=f"SLO changed: {slo_summary(row)}; "
                             + reason_for(status_for(max_age, warn_after, row.last_write_at, now),
                                          max_age, warn_after, row.last_write_at, now))
    return row


def slo_snapshot(row: DatasetFreshness) -> dict:
    return {
        "max_age_s": row.max_age.total_seconds() if row.max_age else None,
        "warn_after_s": row.warn_after.total_seconds() if row.warn_after else None,
        "empty_write_counts": row.empty_write_counts,
    }


def slo_summary(row: DatasetFreshness) -> str:
    if row.max_age is None:
        return "no SLO"
    text = f"max age {human_duration(row.max_age)}"
    if row.warn_after:
        text += f", warning after {human_duration(row.warn_after)}"
    return text + (", empty writes count" if row.empty_write_counts else ", empty writes do not count")
