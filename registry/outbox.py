"""Sending one row of an outbox, whichever app keeps it.

Change requests (notifications, the inbox's digest), incidents and lanes each keep
the messages they owe in a table of their own, written in the transaction that
decided them and sent after it. Sending one row is the same everywhere:

1. claim it with a conditional UPDATE (unsent, and unclaimed or its claim lapsed),
   counting the attempt, so two workers never send it at once and a worker that
   died mid-send leaves it to the next after CLAIM_FOR;
2. send it, outside any transaction (the far side may be slow);
3. record the outcome: sent, or the error and the claim freed; a row that has
   used up MAX_ATTEMPTS is given up (`gave_up_at`, where the table has one;
   otherwise the queue of unsent rows leaves it out by its attempts).

A table holds `claimed_until`, `attempts`, `last_error` and `sent_at`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.db.models import F, Q, QuerySet
from django.utils import timezone

log = logging.getLogger(__name__)

CLAIM_FOR = timedelta(minutes=5)
MAX_ATTEMPTS = 8


def send_once(unsent: QuerySet, pk: int, send: Callable[[], None], *, what: str = "message") -> bool | None:
    """Claim the row `pk` among `unsent` (the table's rows still to send), run `send`
    and record the outcome: True sent, False failed (tried again later), None not
    claimed (sent meanwhile, or another worker holds it)."""
    now = timezone.now()
    claimed = (unsent.filter(pk=pk).filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
               .update(claimed_until=now + CLAIM_FOR, attempts=F("attempts") + 1))
    if claimed != 1:
        return None
    rows = unsent.model.objects.filter(pk=pk)
    try:
        send()
    except Exception as exc:  # any failure of the far side means "try again later"
        attempts = rows.values_list("attempts", flat=True).get()
        failure = {"claimed_until": None, "last_error": f"{type(exc).__name__}: {exc}"[:2000]}
        if any(field.name == "gave_up_at" for field in unsent.model._meta.fields):
            failure["gave_up_at"] = timezone.now() if attempts >= MAX_ATTEMPTS else None
        rows.update(**failure)
        log.warning("%s %s failed (attempt %s): %s", what, pk, attempts, exc)
        return False
    rows.update(sent_at=timezone.now(), claimed_until=None, last_error="")
    return True
