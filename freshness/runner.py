"""The in-process evaluator of the embedded demo (no broker).

Without CELERY_BROKER_URL there is no worker to run deadline tasks and no beat
to sweep, so a daemon thread does both jobs with the same evaluation code: it
sweeps, then sleeps until the earlier of the next deadline and the sweep
interval. A write in the same process wakes it (freshness.scheduling.wake) so
that a nearer deadline is honoured. `runserver` starts it by itself;
`manage.py evaluate_freshness --loop` runs the same loop in the foreground.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from freshness.constants import TransitionSource
from freshness.scheduling import next_deadline, sleep_until_woken, sweep
from freshness.scheduling import wake as wake  # the loop's doorbell, rung by a write or to stop it

log = logging.getLogger(__name__)

_started = False


def seconds_until_next_check(interval: float) -> float:
    deadline = next_deadline()
    if deadline is None:
        return interval
    return min(interval, max((deadline - timezone.now()).total_seconds(), 0.0))


def run_forever(stop: threading.Event | None = None, *, echo=None) -> None:
    stop = stop or threading.Event()
    interval = settings.FRESHNESS_SWEEP_INTERVAL.total_seconds()
    while not stop.is_set():
        wait = interval
        try:
            result = sweep(source=TransitionSource.EVALUATOR)
            if echo and result.transitions:
                echo(f"{timezone.now():%H:%M:%S} {result.transitions} transition(s) {result.changed}")
            wait = seconds_until_next_check(interval)
        except Exception:  # keep evaluating after a transient database error
            log.exception("in-process freshness evaluation failed; retrying in %ss", interval)
        finally:
            close_old_connections()
        sleep_until_woken(wait)


def start_with_runserver() -> None:
    """Start the evaluator thread in the process that serves requests under `runserver`."""
    global _started
    if _started or not settings.FRESHNESS_IN_PROCESS_EVALUATOR or "runserver" not in sys.argv:
        return
    # With the autoreloader, only the child (RUN_MAIN=true) serves requests.
    if os.environ.get("RUN_MAIN") != "true" and "--noreload" not in sys.argv:
        return
    _started = True
    threading.Thread(target=run_forever, name="freshness-evaluator", daemon=True).start()
    log.info("freshness: in-process evaluator started (no broker configured)")
