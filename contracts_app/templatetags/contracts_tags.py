from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from contracts_app.diff import check_text
from contracts_app.yamlio import dump_plain_yaml

register = template.Library()


@register.filter
def join_if_list(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


register.filter("check_text", check_text)


@register.filter
def ticks_as_code(sentence: str) -> str:
    """A diff sentence's `backticked` names as <code>, the rest escaped."""
    parts = str(sentence).split("`")
    return mark_safe("".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts)))


@register.filter
def as_yaml(value: Any) -> str:
    return dump_plain_yaml(value)
