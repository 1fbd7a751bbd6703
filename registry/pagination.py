"""Pages of long lists: every list page shows LIST_PAGE_SIZE rows at a time, so a
registry of tens of thousands of datasets or jobs answers as fast as a small one.

    page = page_of(request, queryset)   # ?page=N; a bad or out-of-range N gives the nearest page
    {% include "_pager.html" with page=page %}

A page costs one COUNT and one slice of the query, whatever the number of rows."""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import HttpRequest


def page_of(request: HttpRequest, rows, *, per_page: int | None = None) -> Page:
    """The requested page of `rows` (a QuerySet, ordered; or a list)."""
    paginator = Paginator(rows, per_page or settings.LIST_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    page.other_params = query.urlencode()  # the filters, kept by the pager's links
    return page
