"""Other apps' deadlines, kept by the same machinery as freshness's own
(freshness.scheduling): a Celery task with eta = the deadline when it is within
FRESHNESS_ETA_HORIZON, the beat sweep catching what is due (a lost task, a
deadline that was beyond the horizon), and without a broker the in-process
evaluator's loop, woken by a new deadline. Nobody polls a table of its own.

An app registers a `DeadlineKind` in its AppConfig.ready and calls `keep` when it
sets a deadline (inside its transaction: the task is published after commit).
This module is freshness's public face for it; it imports nothing of freshness.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeadlineKind:
    """- `name`: what it is ("quality");
    - `task`: the registered name of the Celery task run at a deadline with (key,);
    - `evaluate(now)`: act on every deadline due at `now` (the sweep's catch-up);
      returns how many it acted on;
    - `unscheduled(until)`: [(key, deadline)] of the deadlines up to `until` that
      have no task yet, marked as scheduled (inside the sweep's transaction);
    - `next_deadline()`: the earliest pending deadline, for the in-process loop."""

    name: str
    task: str
    evaluate: Callable[[datetime], int]
    unscheduled: Callable[[datetime], list[tuple[int, datetime]]]
    next_deadline: Callable[[], datetime | None]


_kinds: dict[str, DeadlineKind] = {}
_doorbells: list[Callable[[], None]] = []


def deadline_kind(kind: DeadlineKind) -> DeadlineKind:
    _kinds[kind.name] = kind
    return kind


def kinds() -> list[DeadlineKind]:
    return list(_kinds.values())


def doorbell(fn: Callable[[], None]) -> None:
    """freshness.scheduling registers the in-process evaluator's wake-up here."""
    if fn not in _doorbells:
        _doorbells.append(fn)


def _ring() -> None:
    for fn in _doorbells:
        fn()


def _publish(task: str, due: list[tuple[int, datetime]]) -> None:
    from registry.celery import app  # Celery loads in the processes that send, not at every start

    for key, eta in due:
        try:
            app.send_task(task, args=[key], eta=eta, expires=eta + timedelta(minutes=5))
        except Exception:  # a broker outage must not fail the write; the sweep covers it
            log.exception("could not schedule the %s deadline task of %s", task, key)
            break


def keep(kind_name: str, key: int, deadline: datetime, now: datetime) -> bool:
    """Keep a deadline just set (inside the caller's transaction). True when a task
    will be published for it (within the horizon, with a broker); else the sweep
    or the in-process loop will reach it. The caller marks it scheduled if True."""
    kind = _kinds[kind_name]
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(_ring)
        return False
    if deadline > now + settings.FRESHNESS_ETA_HORIZON:
        return False
    transaction.on_commit(lambda: _publish(kind.task, [(key, deadline)]))
    return True


def sweep_kinds(now: datetime) -> int:
    """The beat sweep's (and the in-process loop's) share: act on what is due, then
    schedule the deadlines entering the horizon."""
    acted = 0
    for kind in kinds():
        try:
            acted += kind.evaluate(now)
            if not settings.CELERY_TASK_ALWAYS_EAGER:
                with transaction.atomic():
                    due = kind.unscheduled(now + settings.FRESHNESS_ETA_HORIZON)
                    if due:
                        transaction.on_commit(lambda kind=kind, due=due: _publish(kind.task, due))
        except Exception:  # one app's deadlines must not stop freshness's sweep
            log.exception("the %s deadlines could not be swept", kind.name)
    return acted


def next_deadline() -> datetime | None:
    found = [d for d in (kind.next_deadline() for kind in kinds()) if d is not None]
    return min(found) if found else None
