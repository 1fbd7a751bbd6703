"""Template helpers of the core's pages that apps' templates use too."""

from __future__ import annotations

from django import template
from django.utils.html import format_html_join

from registry.hooks import dataset_badges

register = template.Library()


@register.simple_tag
def badges(dataset) -> str:
    """The badges other apps add beside a dataset's name in lists (registry.hooks.dataset_list_badge)."""
    return format_html_join(" ", '<span class="tag {}" title="{}">{}</span>',
                            ((css, title, text) for text, css, title in dataset_badges(dataset)))



