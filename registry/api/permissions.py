"""The API's one permission: authenticated, and for a bearer token, the scope
the request needs (registry.constants.TokenScope).

A GET (or HEAD, OPTIONS) needs `read`; anything else needs the view's
`write_scope`, `write` unless the view says otherwise (publishing a contract
version says `contracts:publish`; a POST that only reads says `read`). A
logged-in person (session) is not scoped: their rights are their teams'."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.permissions import SAFE_METHODS, IsAuthenticated

from registry.constants import TokenScope
from registry.models import ApiToken


class TokenScopeMissing(exceptions.PermissionDenied):
    default_code = "token_scope_missing"


def scope_needed(request, view) -> str:
    if request.method in SAFE_METHODS:
        return TokenScope.READ
    return getattr(view, "write_scope", TokenScope.WRITE)


class ScopedToken(IsAuthenticated):
    def has_permission(self, request, view) -> bool:
        if not super().has_permission(request, view):
            return False
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        needed = scope_needed(request, view)
        if not token.has_scope(needed):
            raise TokenScopeMissing(
                f"Token {token.key_prefix}… lacks the scope {str(needed)!r} that {request.method} here needs "
                f"(it has: {', '.join(sorted(token.scope_set))}); ask an admin for a token with it.")
        return True
