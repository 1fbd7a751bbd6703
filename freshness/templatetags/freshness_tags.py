from datetime import UTC, timedelta

from django import template
from django.utils.dateformat import format as date_format
from django.utils.html import format_html

from freshness.constants import FreshnessStatus
from freshness.rules import human_duration

register = template.Library()


@register.filter
def duration(value: timedelta | None) -> str:
    return human_duration(value)


@register.filter
def seconds(value: timedelta | None) -> str:
    return "—" if value is None else f"{value.total_seconds():.1f}s"


@register.filter
def status_label(value: str) -> str:
    try:
        return FreshnessStatus(value).label
    except ValueError:
        return value


# What "Deadline" means wherever a page shows one (the dataset list and the dataset
# page): the moment the status next changes if nothing is written
# (DatasetFreshness.next_check_at, freshness.rules.deadline_for), and to what.
DEADLINE_MEANS = "When the status next changes if nothing is written"


@register.simple_tag
def deadline(row) -> str:
    """A freshness row's deadline, written the same on every page: "2026-03-02 08:00 UTC, then Stale"."""
    at = getattr(row, "next_check_at", None)
    if at is None:
        return "—"
    at = at.astimezone(UTC)
    then = FreshnessStatus.WARNING if row.status == FreshnessStatus.FRESH and row.warn_after else FreshnessStatus.STALE
    return format_html('<time datetime="{}">{} UTC</time>, then {}', at.isoformat(), date_format(at, "Y-m-d H:i"),
                       then.label)


@register.simple_tag
def deadline_means() -> str:
    return DEADLINE_MEANS
