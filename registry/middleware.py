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

from collections.abc import Callable

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
