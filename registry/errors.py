"""How the site answers a failure: in JSON with a stable `code` on the API
(`{"detail": ..., "code": ...}`, everything under /api/), as an HTML page
elsewhere.

DRF views answer their own errors (registry.api.errors.exception_handler);
these are Django's error views (`handler400` … `handler500` in
registry/urls.py), which answer whatever else went wrong: an unknown path, a
body Django itself refused, an exception raised in a middleware or a plain
view. A database that is down or restarting is a 503 with Retry-After, on
pages too, never a 500: the client should come back, not report a bug.

Nothing here touches the database: it may be the thing that failed."""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template import loader
from django.urls import Resolver404
from django.views import defaults

log = logging.getLogger(__name__)

API_PREFIX = "/api/"
# How long a client should wait before retrying while the database is away.
RETRY_AFTER_SECONDS = 5
DATABASE_ERRORS = (OperationalError, InterfaceError)
DATABASE_UNAVAILABLE = ("The database is unavailable (down or restarting); nothing was changed. "
                        "Retry after a few seconds.")

# The code of an error that no view named, by its status.
STATUS_CODES = {
    400: "bad_request", 401: "not_authenticated", 403: "permission_denied", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 409: "conflict", 411: "length_required",
    413: "request_too_large", 415: "unsupported_media_type", 422: "unprocessable", 429: "throttled",
    500: "server_error", 502: "bad_gateway", 503: "service_unavailable", 504: "gateway_timeout",
}
TITLES = {400: "Bad request", 403: "Forbidden", 404: "Not found", 413: "Request too large",
          500: "Server error", 503: "Unavailable"}


def is_api_request(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def code_for_status(status_code: int) -> str:
    return STATUS_CODES.get(status_code, "client_error" if status_code < 500 else "server_error")


def api_error(status_code: int, detail: str, code: str | None = None, **extra: Any) -> JsonResponse:
    """The API's error answer, for code outside DRF's views."""
    response = JsonResponse({"detail": detail, "code": code or code_for_status(status_code), **extra},
                            status=status_code)
    if status_code == 503:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def error_page(status_code: int, detail: str, code: str | None = None) -> HttpResponse:
    """A plain page saying what went wrong: no layout, no user, no query."""
    title = TITLES.get(status_code, "Error")
    html = loader.render_to_string("registry/error.html", {"status": status_code, "title": title, "detail": detail,
                                                           "code": code or code_for_status(status_code)})
    response = HttpResponse(html, status=status_code)
    if status_code == 503:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def error_answer(request: HttpRequest, status_code: int, detail: str, code: str | None = None) -> HttpResponse:
    """A page for a browser on a page (it asks for HTML by name), JSON otherwise:
    on the API, and to a page's own scripts (fetch asks for */*) and to clients."""
    if not is_api_request(request) and "text/html" in request.headers.get("Accept", ""):
        return error_page(status_code, detail, code)
    return api_error(status_code, detail, code)


def log_database_unavailable(exc: BaseException) -> None:
    # The driver's words name the database host and port: the log has them, the answer does not.
    log.warning("the database is unavailable: %s", exc)


# --- Django's error views (registry/urls.py names them) -------------------------------

def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return error_answer(request, 413, "The request body is larger than the server accepts "
                                          "(DATA_UPLOAD_MAX_MEMORY_SIZE); send less.", "request_too_large")
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return error_answer(request, 400, "The form has more fields or files than the server accepts.",
                            "too_many_fields")
    if is_api_request(request):
        if isinstance(exception, MultiPartParserError | BadRequest):
            return api_error(400, f"The request could not be read: {exception}", "bad_request")
        # Other suspicious requests (a Host not served here, …): Django's words name settings.
        return api_error(400, "The request could not be read (a malformed header or body).", "bad_request")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api_request(request):
        return api_error(403, str(exception) or "You may not do this.", "permission_denied")
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api_request(request):
        if exception is None or isinstance(exception, Resolver404):
            return api_error(404, no_endpoint(request), "not_found")
        return api_error(404, str(exception) or "Not found.", "not_found")
    # A page's 404 keeps the promise of a `code` too: JSON for a script or a client
    # (a dataset page fetched by curl), the plain error page for a browser.
    if exception is None or isinstance(exception, Resolver404):
        detail = f"There is no page at {request.path_info}."
    else:
        detail = str(exception) or "Not found."
    return error_answer(request, 404, detail, "not_found")


def server_error(request: HttpRequest) -> HttpResponse:
    # Called while the exception is being handled: sys.exc_info() names it.
    exception = sys.exc_info()[1]
    if isinstance(exception, DATABASE_ERRORS):
        log_database_unavailable(exception)
        return error_answer(request, 503, DATABASE_UNAVAILABLE, "database_unavailable")
    if is_api_request(request):
        return api_error(500, "The server failed to answer this request; the error is logged.", "server_error")
    return defaults.server_error(request)


def no_endpoint(request: HttpRequest) -> str:
    return f"No API endpoint at {request.path_info} (the list is at /api/docs/)."
