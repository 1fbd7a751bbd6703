"""One JSON error shape for the API: {"detail": ..., "code": ...}, codes in snake_case.

DRF views answer their errors here; registry.errors answers the rest (Django's
own error views, a database that is down) in the same shape."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from registry.errors import (
    DATABASE_ERRORS,
    DATABASE_UNAVAILABLE,
    RETRY_AFTER_SECONDS,
    log_database_unavailable,
)
from registry.ratelimit import RateLimited

_SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _error_code(exc: DjangoValidationError) -> str:
    """A domain error's code in snake_case: its class (DatasetUnowned → dataset_unowned),
    else the code it was raised with, else "conflict"."""
    if type(exc) is not DjangoValidationError:
        return _WORD_START.sub("_", type(exc).__name__).lower()
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) and _SNAKE.fullmatch(code) else "conflict"


def _messages(data: Any, path: str = "") -> list[str]:
    """A validation error's messages, each prefixed with the field it is about."""
    if isinstance(data, dict):
        return [m for key, value in data.items()
                for m in _messages(value, key if key == "non_field_errors" or not path else f"{path}.{key}")]
    if isinstance(data, list):
        return [m for i, value in enumerate(data)
                for m in _messages(value, f"{path}[{i}]" if isinstance(value, dict | list) else path)]
    prefix = f"{path}: " if path and path != "non_field_errors" else ""
    return [f"{prefix}{data}"]


def exception_handler(exc, context):
    if isinstance(exc, DATABASE_ERRORS):
        set_rollback()
        log_database_unavailable(exc)
        return Response({"detail": DATABASE_UNAVAILABLE, "code": "database_unavailable"}, status=503,
                        headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    if isinstance(exc, DjangoValidationError):
        # Domain rules raise Django's ValidationError; the API answers 409 for a
        # rule about the current state ("already owned", "unowned") and says why.
        code = _error_code(exc)
        return Response(
            {"detail": " ".join(exc.messages), "code": code},
            status=getattr(exc, "http_status", status.HTTP_409_CONFLICT),
        )
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.NotAuthenticated):
        response.data = {
            "detail": "Authentication required: send 'Authorization: Bearer <token>' or log in.",
            "code": "token_missing",
        }
    elif isinstance(exc, exceptions.ValidationError):
        # Field errors stay under "fields" ({"team": ["This field is required."]}); the
        # detail says them all, each with its field, so that every error reads alike.
        fields = response.data
        codes = exc.get_codes()
        if isinstance(codes, list) and len(set(map(str, codes))) == 1 and isinstance(codes[0], str):
            codes = codes[0]  # ValidationError("...", code="x") raised by a view
        response.data = {"detail": " ".join(_messages(fields)) or "The request is invalid.",
                         "code": codes if isinstance(codes, str) and _SNAKE.fullmatch(codes) else "invalid"}
        if isinstance(fields, dict):
            response.data["fields"] = fields
    elif isinstance(exc, RateLimited):
        response.data = {"detail": exc.message, "code": "rate_limited", **exc.extra}
    elif isinstance(exc, exceptions.APIException) and isinstance(response.data, dict) and "detail" in response.data:
        codes = exc.get_codes()
        response.data = {"detail": str(response.data["detail"]), "code": codes if isinstance(codes, str) else "error"}
    return response
