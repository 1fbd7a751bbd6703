from __future__ import annotations

from typing import Any

from django import template

from contracts_app.yamlio import dump_plain_yaml

register = template.Library()


@register.filter
def join_if_list(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


@register.filter
def check_text(check: Any) -> str:
    """`{"ge": 0}` -> `ge 0`; `{"str_length": {"min_value": 1}}` -> `str_length min_value=1`."""
    if not isinstance(check, dict):
        return str(check)
    parts = []
    for kind, value in check.items():
        if isinstance(value, dict):
            value = " ".join(f"{k}={v}" for k, v in value.items() if v is not None)
        elif isinstance(value, list):
            value = "[" + ", ".join(str(v) for v in value) + "]"
        parts.append(f"{kind} {value}")
    return "; ".join(parts)


@register.filter
def as_yaml(value: Any) -> str:
    return dump_plain_yaml(value)
