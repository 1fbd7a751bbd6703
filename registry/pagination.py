"""Pages of long lists: every list page shows LIST_PAGE_SIZE rows at a time, so a
registry of tens of thousands of datasets or jobs answers as fast as a small one.

    page = page_of(request, queryset)   # ?page=N; a bad or out-of-range N gives the nearest page
    {% include "_pager.html" with page=page %}

A page costs one COUNT and one slice of the query (an OFFSET): fine for lists that stay
small (a team's requests). A list that grows with the world (datasets) pages by keyset
instead, at the same cost on every page whatever the rows:

    page = keyset_page_of(request, queryset, key=("namespace", "name"))   # ?after= / ?before=

A list ordered by a rank no single index holds (the home page, most urgent first) is
made of segments, each seeking through its own index:

    page = segmented_page_of(request, segments)
"""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import HttpRequest

from registry.keyset import BadToken, KeysetPage, Segment, keyset_page, segmented_page


def page_of(request: HttpRequest, rows, *, per_page: int | None = None) -> Page:
    """The requested page of `rows` (a QuerySet, ordered; or a list)."""
    paginator = Paginator(rows, per_page or settings.LIST_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    page.other_params = query.urlencode()  # the filters, kept by the pager's links
    return page


class KeysetListPage:
    """A keyset page (registry.keyset) as the pager template reads it: `?after=` and
    `?before=` links, no page numbers and no total (each would cost a scan of the list)."""

    def __init__(self, request: HttpRequest, page: KeysetPage, first: bool):
        self.object_list = page.rows
        self.keyset = True
        self.first = first
        self.next_token = page.next_token
        self.previous_token = page.previous_token
        query = request.GET.copy()
        for param in ("page", "after", "before"):
            query.pop(param, None)
        self.other_params = query.urlencode()

    def __iter__(self):
        return iter(self.object_list)

    def __len__(self) -> int:
        return len(self.object_list)

    def has_next(self) -> bool:
        return self.next_token is not None

    def has_previous(self) -> bool:
        return self.previous_token is not None

    def has_other_pages(self) -> bool:
        return self.has_next() or self.has_previous() or not self.first


def keyset_page_of(request: HttpRequest, rows, *, key: tuple[str, ...], per_page: int | None = None) -> KeysetListPage:
    """The page of `rows` (a QuerySet) after `?after=` or before `?before=`, ordered by
    `key` (unique, indexed: registry.keyset). A bad token gives the first page."""
    size = per_page or settings.LIST_PAGE_SIZE
    after, before = request.GET.get("after") or None, request.GET.get("before") or None
    try:
        page = keyset_page(rows, key=key, size=size, after=after, before=before)
    except BadToken:
        after = before = None
        page = keyset_page(rows, key=key, size=size)
    return KeysetListPage(request, page, first=not (after or before) or (before is not None and page.previous_token is None))


def segmented_page_of(request: HttpRequest, segments: list[Segment], *, per_page: int | None = None) -> KeysetListPage:
    """The page of a list made of keyset segments (registry.keyset.segmented_page)
    after `?after=` or before `?before=`; a bad token, or an old `?page=N` link, gives
    the first page."""
    size = per_page or settings.LIST_PAGE_SIZE
    after, before = request.GET.get("after") or None, request.GET.get("before") or None
    try:
        page = segmented_page(segments, size=size, after=after, before=before)
    except BadToken:
        after = before = None
        page = segmented_page(segments, size=size)
    return KeysetListPage(request, page, first=not (after or before) or (before is not None and page.previous_token is None))
