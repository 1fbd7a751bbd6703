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
from urllib.parse import parse_qsl

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import get_script_prefix, resolve, reverse

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
    """Under /api/, a 404 or 405 that is not already JSON — an unknown path,
    which Django answers with its HTML page, or a plain view refusing a method —
    becomes the API's error shape, so that clients parse every error alike."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code not in (404, 405) or not request.path_info.startswith("/api/"):
            return response
        if response.get("Content-Type", "").startswith("application/json") or hasattr(response, "accepted_renderer"):
            return response  # already the API's answer (a DRF view's, in the format the client asked for)
        if response.status_code == 404:
            answer = JsonResponse({"detail": f"No API endpoint at {request.path_info} (the list is at /api/docs/).",
                                   "code": "not_found"}, status=404)
        else:
            allowed = response.get("Allow", "")
            answer = JsonResponse({"detail": f"Method {request.method} is not allowed here"
                                             + (f"; allowed: {allowed}." if allowed else "."),
                                   "code": "method_not_allowed"}, status=405)
            if allowed:
                answer["Allow"] = allowed
        return answer


class RefuseNulMiddleware:
    """A NUL character (%00, \\u0000) in a path, a query string or a form or
    JSON body is answered 400 before any view sees it: PostgreSQL text cannot
    hold one, so every query or row that carried it failed as a 500.

    Bodies are looked at when they are JSON or a form (the API's and the pages'
    own); the lineage ingest, a hot path that never reaches this middleware,
    refuses them itself (422, with the event's path). A chunked body, which
    Django would read as empty, is a 411 here too."""

    _JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
    _FORM_TYPES = ("application/x-www-form-urlencoded",)

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            # Django reads a body only up to Content-Length: a chunked one would
            # read as empty (a form or JSON body "missing" its fields). The
            # lineage ingest reads chunked bodies itself where the server allows.
            return JsonResponse({"detail": "A chunked body cannot be read here; send it with a Content-Length.",
                                 "code": "length_required"}, status=411)
        refusal = self._nul_in(request)
        if refusal is not None:
            return JsonResponse({"detail": f"{refusal} contains a NUL character, which the registry cannot store "
                                           "or search for; remove it.", "code": "nul_character"}, status=400)
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
