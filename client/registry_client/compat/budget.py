"""The checker's budgets, counted in work rather than time.

A comparison may meet schemas whose proof would take longer than anyone should wait (deeply
nested alternatives, wide `$ref` graphs). It stops after a number of **steps** — units of
work the checker counts itself — so the same pair gives the same verdict on any machine
under any load:

- the compare budget counts the engine's steps: every pair of subschemas visited (`_diff`),
  every containment asked (`_sub`), every value judged by a validator;
- the witness budget counts the witness search's steps: every node of every document built,
  and every node of every document a validator judges (twice: once per version).

What a budget leaves undecided is reported as breaking both ways with a reason that names
the budget ("not decided within 40000 steps: treated as breaking both ways"), never as safe.

A wall-clock **time guard** remains as a last resort, far above what the step budgets allow
on any machine (default 60 s per comparison): it exists only so that a bug can never hold a
worker forever. When it fires the report says so (`time_guard_exceeded`); that is the one
verdict that depends on the machine, and it should never be seen.

Settings (environment; the arguments of `compare`/`check_compatibility` and the CLI flags win):

    REGISTRY_COMPAT_BUDGET          compare steps per comparison (default 40000; 0 or `none`: unbounded)
    REGISTRY_COMPAT_WITNESS_BUDGET  witness-search steps per comparison (default 100000; 0: no search)
    REGISTRY_COMPAT_TIME_GUARD      seconds, the last-resort guard (default 60; 0 or `none`: no guard)
"""

from __future__ import annotations

import logging
import os
import time

log = logging.getLogger(__name__)

BUDGET_ENV = "REGISTRY_COMPAT_BUDGET"
WITNESS_BUDGET_ENV = "REGISTRY_COMPAT_WITNESS_BUDGET"
TIME_GUARD_ENV = "REGISTRY_COMPAT_TIME_GUARD"

DEFAULT_BUDGET = 40_000           # compare steps per comparison
DEFAULT_WITNESS_BUDGET = 100_000  # witness-search steps per comparison
DEFAULT_TIME_GUARD = 60.0         # seconds; a last resort, never a budget

# The guard reads the clock once per this many steps: reading it is cheap, but not free.
GUARD_EVERY = 512

BUDGET_KINDS = ("budget_exceeded", "time_guard_exceeded")


def clock() -> float:
    """The clock the time guard reads (a module function, so a test can make time run fast)."""
    return time.monotonic()


def _steps(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ValueError(f"{name} is a number of steps (a whole number), not {value!r}; "
                         "budgets are counted in steps since they stopped being seconds")
    return value


def _from_env(env: str, default: int) -> int:
    text = os.environ.get(env, "").strip().lower()
    if not text:
        return default
    if text in ("none", "off", "unbounded"):
        return 0
    try:
        return int(text)
    except ValueError:
        # A value such as 0.5 is the old setting, in seconds: it cannot mean a number of steps.
        log.warning("%s=%r is not a number of steps; using the default, %d steps", env, text, default)
        return default


def compare_steps(budget: int | None = None) -> int | None:
    """The compare budget in steps: the argument, else $REGISTRY_COMPAT_BUDGET, else 40000.
    0 or a negative number (or `none` in the environment) means unbounded: None."""
    steps = _from_env(BUDGET_ENV, DEFAULT_BUDGET) if budget is None else _steps(budget, "the compare budget")
    return steps if steps > 0 else None


def witness_steps(budget: int | None = None) -> int:
    """The witness budget in steps: the argument, else $REGISTRY_COMPAT_WITNESS_BUDGET, else 100000.
    0 (or less) means no search at all."""
    steps = (_from_env(WITNESS_BUDGET_ENV, DEFAULT_WITNESS_BUDGET) if budget is None
             else _steps(budget, "the witness budget"))
    return max(steps, 0)


def time_guard(seconds: float | None = None) -> float | None:
    """The last-resort guard in seconds: the argument, else $REGISTRY_COMPAT_TIME_GUARD, else 60."""
    if seconds is None:
        text = os.environ.get(TIME_GUARD_ENV, "").strip().lower()
        if text in ("none", "off", "unbounded"):
            return None
        try:
            seconds = float(text) if text else DEFAULT_TIME_GUARD
        except ValueError:
            log.warning("%s=%r is not a number of seconds; using the default, %g s", TIME_GUARD_ENV, text, DEFAULT_TIME_GUARD)
            seconds = DEFAULT_TIME_GUARD
    return seconds if seconds > 0 else None


class OutOfSteps(Exception):
    """Raised where work cannot stop with an answer of its own (a value about to be judged):
    the caller that owns the meter turns it into 'not decided within N steps'."""


class Meter:
    """Counts steps against a limit (None: unbounded) under a wall-clock guard (None: none).

    `spend(n)` counts n steps and says whether the work may go on. Running out of steps is a
    pure function of the work done; the guard is the only reading of the clock, once per
    GUARD_EVERY steps, and once it fires the meter stays stopped."""

    __slots__ = ("limit", "steps", "guard", "_guard_at", "_next_check", "stopped_by")

    def __init__(self, limit: int | None, guard: float | None = None):
        self.limit = limit
        self.steps = 0
        self.guard = guard
        self._guard_at = None if guard is None else clock() + guard
        self._next_check = GUARD_EVERY
        self.stopped_by: str | None = None  # "steps" or "time guard"

    def spend(self, n: int = 1) -> bool:
        if self.stopped_by == "time guard":
            return False
        self.steps += n
        if self._guard_at is not None and self.steps >= self._next_check:
            self._next_check = self.steps + GUARD_EVERY
            if clock() > self._guard_at:
                self.stopped_by = "time guard"
                return False
        if self.limit is not None and self.steps > self.limit:
            self.stopped_by = "steps"
            return False
        return True

    @property
    def left(self) -> bool:
        """May work go on without spending (the limit not yet passed, the guard not fired)?"""
        return self.stopped_by != "time guard" and (self.limit is None or self.steps <= self.limit)
