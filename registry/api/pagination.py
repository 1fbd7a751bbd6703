from rest_framework.exceptions import APIException
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from registry.keyset import BadToken, keyset_page, segmented_page


class BadPageToken(APIException):
    status_code = 400
    default_code = "bad_page_token"
    default_detail = "This page link is not one the list gave out: start again from the first page."


class KeysetPagination(BasePagination):
    """Pages that cost the same at the millionth row as at the first (registry.keyset).

    `?limit=` rows (default 100, at most 10,000); `next` and `previous` are links to
    the neighbouring pages (`?after=` / `?before=` an opaque token), null at either end.
    No `count`: counting a million rows costs more than the page. The view names its
    unique, indexed ordering as `keyset` (default: the primary key), or, for an order
    no one index holds (most urgent first), splits its rows into keyset segments with
    `keyset_segments(queryset)` (registry.keyset.segmented_page)."""

    default_limit = 100
    max_limit = 10000

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = self._limit(request)
        after, before = request.query_params.get("after") or None, request.query_params.get("before") or None
        try:
            if hasattr(view, "keyset_segments"):
                self.page = segmented_page(view.keyset_segments(queryset), size=self.limit, after=after, before=before)
            else:
                key = tuple(getattr(view, "keyset", ("pk",)))
                self.page = keyset_page(queryset, key=key, size=self.limit, after=after, before=before)
        except BadToken as exc:
            raise BadPageToken(str(exc)) from exc
        return self.page.rows

    def _limit(self, request) -> int:
        try:
            limit = int(request.query_params.get("limit", self.default_limit))
        except (TypeError, ValueError):
            return self.default_limit
        return max(1, min(limit, self.max_limit))

    def _link(self, param: str, token: str | None) -> str | None:
        if token is None:
            return None
        url = self.request.build_absolute_uri()
        url = remove_query_param(remove_query_param(url, "after"), "before")
        return replace_query_param(url, param, token)

    def get_paginated_response(self, data):
        return Response({"next": self._link("after", self.page.next_token),
                         "previous": self._link("before", self.page.previous_token), "results": data})

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri",
                         "description": "The next page (`?after=`), null on the last one."},
                "previous": {"type": "string", "nullable": True, "format": "uri",
                             "description": "The page before (`?before=`), null on the first one."},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {"name": "limit", "required": False, "in": "query", "schema": {"type": "integer"},
             "description": f"Rows per page (default {self.default_limit}, at most {self.max_limit})."},
            {"name": "after", "required": False, "in": "query", "schema": {"type": "string"},
             "description": "The page after this token (from a `next` link)."},
            {"name": "before", "required": False, "in": "query", "schema": {"type": "string"},
             "description": "The page before this token (from a `previous` link)."},
        ]

