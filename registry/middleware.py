"""The short way through Django for the few endpoints that take a high request
rate from machines (the lineage ingest).

An app lists such an endpoint with `registry.hooks.hot_path(url_name)`. This
middleware, placed right after Prometheus' request counter, hands a matching
request straight to its view: no sessions, CSRF, messages, authentication
middleware or URL resolution, which together cost a third of the ingest's CPU.
A hot view must therefore need none of them: it authenticates the request
itself (a bearer token) and is CSRF-exempt. Every other request, and a hot
path's other methods, take the whole chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from io import BytesIO
from urllib.parse import parse_qsl

from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParser
from django.urls import get_script_prefix, resolve, reverse

from registry.errors import api_error, error_answer, is_api_request, no_endpoint
from registry.hooks import hot_paths


class HotPathMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        self._routes: dict[tuple[str, str], tuple[Callable, object]] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._routes is None:
            self._routes = self._resolve_routes()
        route = self._routes.get((request.method, request.path_info))
        if route is None:
            return self.get_response(request)
        view, match = route
        request.resolver_match = match
        response = view(request)
        # What CommonMiddleware and SecurityMiddleware would have added.
        if not response.streaming and "Content-Length" not in response:
            response.headers["Content-Length"] = str(len(response.content))
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @staticmethod
    def _resolve_routes() -> dict[tuple[str, str], tuple[Callable, object]]:
        # Resolved at the first request, when every app's URLs are loaded.
        routes = {}
        prefix = len(get_script_prefix()) - 1
        for url_name, methods in hot_paths().items():
            path = reverse(url_name)[prefix:]
            match = resolve(path)
            for method in methods:
                routes[(method, path)] = (match.func, match)
        return routes


class JsonApiErrorsMiddleware:
    """Under /api/, a 4xx or 5xx that is not already JSON — a plain view's
    HttpResponseNotAllowed or HttpResponseBadRequest, a CSRF refusal, anything
    else Django or a library answers with a page — becomes the API's error
    shape, so that clients parse every error alike. Django's error views
    (registry/errors.py) already answer JSON there; this is for the answers
    that no exception raised."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code < 400 or not is_api_request(request):
            return response
        if response.get("Content-Type", "").startswith("application/json") or hasattr(response, "accepted_renderer"):
            return response  # already the API's answer (a DRF view's, in the format the client asked for)
        status = response.status_code
        if status == 404:
            detail = no_endpoint(request)
        elif status == 405:
            allowed = response.get("Allow", "")
            detail = f"Method {request.method} is not allowed here" + (f"; allowed: {allowed}." if allowed else ".")
        else:
            detail = f"{response.reason_phrase}."
        answer = api_error(status, detail)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                answer[header] = response[header]
        return answer


class RefuseNulMiddleware:
    """A NUL character (%00, \\u0000) in a path, a query string or a form or
    JSON body is answered 400 before any view sees it: PostgreSQL text cannot
    hold one, so every query or row that carried it failed as a 500.

    Bodies are looked at when they are JSON or a form, urlencoded or multipart
    (the API's and the pages' own; in a multipart form, the fields: a file may
    hold any bytes). The answer is the API's JSON under
    /api/ and a page elsewhere. The lineage ingest, a hot path that never
    reaches this middleware, refuses them itself (422, with the event's path).
    A chunked body, which Django would read as empty, is a 411 here too."""

    _JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
    _FORM_TYPES = ("application/x-www-form-urlencoded",)

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            # Django reads a body only up to Content-Length: a chunked one would
            # read as empty (a form or JSON body "missing" its fields). The
            # lineage ingest reads chunked bodies itself where the server allows.
            return error_answer(request, 411, "A chunked body cannot be read here; send it with a Content-Length.",
                                "length_required")
        refusal = self._nul_in(request)
        if refusal is not None:
            return error_answer(request, 400, f"{refusal} contains a NUL character, which the registry cannot "
                                              "store or search for; remove it.", "nul_character")
        return self.get_response(request)

    def _nul_in(self, request: HttpRequest) -> str | None:
        if "\x00" in request.path_info:
            return "The path"
        query = request.META.get("QUERY_STRING", "")
        if "%00" in query or "\x00" in query:
            for key, value in parse_qsl(query, keep_blank_values=True):
                if "\x00" in key or "\x00" in value:
                    return f"The query parameter {key.replace(chr(0), '%00')!r}"
            return "The query string"
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        media_type = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
        is_json = media_type == "application/json" or media_type.endswith("+json")
        if media_type == "multipart/form-data":
            return self._nul_in_multipart(request)
        if not is_json and media_type not in self._FORM_TYPES:
            return None
        body = request.body
        if b"\x00" in body:
            return "The body"
        if is_json and b"\\u0000" in body and self._JSON_NUL.search(body):
            return "The JSON body"
        if not is_json and b"%00" in body:
            for key, value in parse_qsl(body.decode("latin-1"), keep_blank_values=True):
                if "\x00" in key or "\x00" in value:
                    return f"The form field {key.replace(chr(0), '%00')!r}"
        return None

    @staticmethod
    def _nul_in_multipart(request: HttpRequest) -> str | None:
        """A multipart form's fields (a file may hold any bytes). Django parses a POST's
        form itself (DRF takes it from there); a PUT's or PATCH's is parsed from
        the body, which DRF then reads again. A body Django cannot parse raises
        MultiPartParserError: a 400 (registry.errors.bad_request)."""
        if request.method == "POST":
            fields = request.POST
        else:
            parser = MultiPartParser(request.META, BytesIO(request.body), request.upload_handlers, request.encoding)
            fields, _files = parser.parse()
        for key, values in fields.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return f"The form field {key.replace(chr(0), '%00')!r}"
        return None
