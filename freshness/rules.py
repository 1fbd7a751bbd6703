"""The freshness rule, as plain functions: a pass over many rows needs no model instances."""

from __future__ import annotations

from datetime import datetime, timedelta

from freshness.constants import FreshnessStatus


def status_for(max_age: timedelta | None, warn_after: timedelta | None,
               last_write_at: datetime | None, now: datetime) -> str:
    """The status an SLO gives at `now`: the one rule every evaluator applies."""
    if max_age is None:
        return FreshnessStatus.NO_SLO
    if last_write_at is None:
        return FreshnessStatus.UNKNOWN
    age = now - last_write_at
    if age >= max_age:
        return FreshnessStatus.STALE
    if warn_after is not None and age >= warn_after:
        return FreshnessStatus.WARNING
    return FreshnessStatus.FRESH


def deadline_for(status: str, max_age: timedelta | None, warn_after: timedelta | None,
                 last_write_at: datetime | None) -> datetime | None:
    """When `status` next changes if nothing is written (None: never by itself)."""
    if status == FreshnessStatus.FRESH:
        return last_write_at + (warn_after or max_age)
    if status == FreshnessStatus.WARNING:
        return last_write_at + max_age
    return None


def deadline_passed(status: str, max_age: timedelta | None, warn_after: timedelta | None,
                    last_write_at: datetime | None) -> datetime | None:
    """The deadline whose passing gives `status` (warning, stale); None for the others."""
    if last_write_at is None or max_age is None:
        return None
    if status == FreshnessStatus.STALE:
        return last_write_at + max_age
    if status == FreshnessStatus.WARNING and warn_after is not None:
        return last_write_at + warn_after
    return None


def reason_for(status: str, max_age: timedelta | None, warn_after: timedelta | None,
               last_write_at: datetime | None, now: datetime) -> str:
    if status == FreshnessStatus.NO_SLO:
        return "no freshness SLO"
    if status == FreshnessStatus.UNKNOWN:
        return "no successful write recorded yet"
    age = human_duration(now - last_write_at)
    if status == FreshnessStatus.STALE:
        return f"last successful write {age} ago; the SLO allows {human_duration(max_age)}"
    if status == FreshnessStatus.WARNING:
        return f"last successful write {age} ago; warning after {human_duration(warn_after)}"
    return f"last successful write {age} ago, within {human_duration(max_age)}"


def human_duration(value: timedelta | None) -> str:
    """'2d 3h', '6h', '1m 30s', '42s': the largest unit, and the next one when it is not zero.

    Seconds are a unit like the others: a 90 s SLO is "1m 30s", never "1m"; an age
    of six hours and three seconds is "6h", as a person would say it."""
    if value is None:
        return "—"
    seconds = int(value.total_seconds())
    units = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
    for i, (unit, size) in enumerate(units[:-1]):
        if seconds >= size:
            next_unit, next_size = units[i + 1]
            rest = seconds % size // next_size
            return f"{seconds // size}{unit}" + (f" {rest}{next_unit}" if rest else "")
    return f"{seconds}s"


def exact_duration(value: timedelta) -> str:
    """The duration in the largest single unit that holds it exactly ('90s', '27h', '2w'),
    as parse_duration reads it back: an edit form shows it and saves it unchanged."""
    if value.total_seconds() != int(value.total_seconds()):
        return f"{value.total_seconds():g}s"
    seconds = int(value.total_seconds())
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
