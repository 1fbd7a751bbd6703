"""Template helpers of the core's pages that apps' templates use too."""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from registry.hooks import dataset_badges

register = template.Library()


@register.simple_tag
def badges(dataset) -> SafeString:
    """The badges other apps add beside a dataset's name in lists (registry.hooks.dataset_list_badge);
    one that names a section of the dataset page links to it."""
    html = []
    for badge in dataset_badges(dataset):
        if badge.anchor:
            html.append(format_html('<a class="tag badge {}" title="{}" href="{}#{}">{}</a>', badge.css, badge.title,
                                    dataset.get_absolute_url(), badge.anchor, badge.text))
        else:
            html.append(format_html('<span class="tag badge {}" title="{}">{}</span>', badge.css, badge.title,
                                    badge.text))
    return format_html_join(" ", "{}", ((h,) for h in html))
