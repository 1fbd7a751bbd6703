"""What freshness announces, for other apps to act on (the emitter never imports
its listeners).

`status_changed` is sent inside the transaction that recorded one or more
freshness transitions (a write, a deadline task, a sweep, an SLO edit), once per
batch. Listeners do database work only. Keyword arguments:
- changes: list of FreshnessChange (dataset_id, from_status, to_status, at, due_at, reason)
End with `**kwargs`: later ones may be added.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.dispatch import Signal

status_changed = Signal()


@dataclass(frozen=True)
class FreshnessChange:
    dataset_id: int
    from_status: str
    to_status: str
    at: datetime
    due_at: datetime | None
    reason: str


def announce(changes: list[FreshnessChange]) -> None:
    if changes and status_changed.has_listeners():
        status_changed.send(sender=FreshnessChange, changes=changes)
