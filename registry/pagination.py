"""Pages of long lists: every list page shows LIST_PAGE_SIZE rows at a time, by
keyset, so the hundredth page of a registry of millions of datasets costs what its
first does (no COUNT, no OFFSET):

    page = keyset_page_of(request, queryset, key=("namespace", "name"))   # ?after= / ?before=
    {% include "_pager.html" with page=page %}

A list ordered by a rank no single index holds (the home page, most urgent first) is
made of segments, each seeking through its own index:

    page = segmented_page_of(request, segments)
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from registry.keyset import BadToken, KeysetPage, Segment, keyset_page, segmented_page


class KeysetListPage:
    """A keyset page (registry.keyset) as the pager template reads it: `?after=` and
    `?before=` links, no page numbers and no total (each would cost a scan of the list)."""

    def __init__(self, request: HttpRequest, page: KeysetPage, first: bool):
        self.object_list = page.rows
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
