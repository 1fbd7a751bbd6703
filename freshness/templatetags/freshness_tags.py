from datetime import timedelta

from django import template

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
