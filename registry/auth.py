"""Bearer tokens for machines.

A missing, unknown or revoked token gets a 401 whose JSON body says which, so a
pipeline's log tells its operator what to fix.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from registry.models import ApiToken, hash_token

# Writing last_used_at on every request would turn each read into a write;
# once a minute is precise enough to tell a live token from a dead one.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenFailed(exceptions.AuthenticationFailed):
    def __init__(self, detail: str, code: str):
        super().__init__(detail=detail, code=code)


class TeamPrincipal:
    """Who a team-owned token acts as: the team, not a person."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None
    id = None

    def __init__(self, token: ApiToken):
        self.token = token
        self.team = token.team
        self.principal_team_ids = frozenset({token.team_id})

    def __str__(self) -> str:
        return f"token:{self.token.name}@{self.team.slug}"

    def get_username(self) -> str:
        return str(self)

    def has_perm(self, perm, obj=None) -> bool:
        return False


def authenticate_secret(secret: str) -> tuple[object, ApiToken]:
    """Resolve a bearer secret to (principal, token) or raise TokenFailed."""
    token = ApiToken.objects.select_related("user", "team").filter(key_hash=hash_token(secret)).first()
    if token is None:
        raise TokenFailed("Invalid bearer token: no such token.", "token_invalid")
    if token.revoked_at is not None:
        raise TokenFailed(f"Bearer token {token.key_prefix}… was revoked at {token.revoked_at:%Y-%m-%d %H:%M} UTC.", "token_revoked")
    if token.user_id and not token.user.is_active:
        raise TokenFailed("Bearer token belongs to an inactive user.", "token_invalid")
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    principal = token.user if token.user_id else TeamPrincipal(token)
    return principal, token


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        secret = secret.strip()
        if not secret or " " in secret:
            raise TokenFailed("Malformed Authorization header: expected 'Bearer <token>'.", "token_malformed")
        return authenticate_secret(secret)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'
