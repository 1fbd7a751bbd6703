"""One JSON error shape for the API: {"detail": ..., "code": ...}, codes in snake_case."""

from __future__ import annotations

import re

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

_SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _error_code(exc: DjangoValidationError) -> str:
    """A domain error's code in snake_case: its class (DatasetUnowned → dataset_unowned),
    else the code it was raised with, else "conflict"."""
    if type(exc) is not DjangoValidationError:
        return _WORD_START.sub("_", type(exc).__name__).lower()
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) and _SNAKE.fullmatch(code) else "conflict"


def exception_handler(exc, context):
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
    elif isinstance(exc, exceptions.APIException) and isinstance(response.data, dict) and "detail" in response.data:
        codes = exc.get_codes()
        response.data = {"detail": str(response.data["detail"]), "code": codes if isinstance(codes, str) else "error"}
    return response
