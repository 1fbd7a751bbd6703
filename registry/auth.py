"""Bearer tokens for machines.

A missing, unknown or revoked token gets a 401 whose JSON body says which, so a
pipeline's log tells its operator what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions

from registry.constants import TokenScope
from registry.models import ApiToken, hash_token, parse_scopes
from registry.ratelimit import OverBudget, RateLimited, charge_token_bytes, hold_refusal

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


@dataclass(frozen=True)
class LineageWriter:
    """The token behind a lineage event: what the stored event records as its
    sender, and whose datasets' outputs it may write.

    A team token writes its team's datasets; a person's token writes the
    datasets of every team the person is in. Either writes unowned datasets
    (which is how a new dataset first appears), and a platform-wide ingest
    token (lineage:write:any) writes any."""

    token_id: int
    key_prefix: str
    team_id: int | None  # the team the event is attributed to: a team token's own, a person's only team
    team_ids: frozenset[int]  # the teams whose datasets it may write
    any_dataset: bool = False
    token_team_id: int | None = None  # the token's own team (None for a person's token)

    @classmethod
    def of(cls, *, token_id: int, key_prefix: str, scopes: str, token_team_id: int | None,
           member_of: frozenset[int] = frozenset()) -> LineageWriter:
        """A token's writer: a team token (`token_team_id`), or a person's in the teams `member_of`."""
        team_ids = frozenset({token_team_id}) if token_team_id is not None else member_of
        attributed = token_team_id if token_team_id is not None else next(iter(member_of)) if len(member_of) == 1 else None
        return cls(token_id, key_prefix, attributed, team_ids, TokenScope.LINEAGE_WRITE_ANY in parse_scopes(scopes),
                   token_team_id)

    def may_write(self, owner_team_id: int | None) -> bool:
        return self.any_dataset or owner_team_id is None or owner_team_id in self.team_ids


def may_write_lineage(scopes: str) -> bool:
    found = parse_scopes(scopes)
    return TokenScope.LINEAGE_WRITE in found or TokenScope.LINEAGE_WRITE_ANY in found


def bearer_secret(header: str) -> str | None:
    """The secret of an 'Authorization: Bearer <secret>' header; None for no header
    or another scheme; TokenFailed for a malformed one."""
    scheme, _, secret = header.partition(" ")
    if not header or scheme.lower() != "bearer":
        return None
    secret = secret.strip()
    if not secret or " " in secret:
        raise TokenFailed("Malformed Authorization header: expected 'Bearer <token>'.", "token_malformed")
    return secret


def check_token_usable(*, key_prefix: str, revoked_at, user_id, user_is_active: bool) -> None:
    """The rules every bearer token passes, with the messages a pipeline's operator reads."""
    if revoked_at is not None:
        raise TokenFailed(f"Bearer token {key_prefix}… was revoked at {revoked_at:%Y-%m-%d %H:%M} UTC.", "token_revoked")
    if user_id and not user_is_active:
        raise TokenFailed("Bearer token belongs to an inactive user.", "token_invalid")


def note_use(token_id: int, last_used_at) -> None:
    """Record the token's last use, at most once per LAST_USED_RESOLUTION."""
    now = timezone.now()
    if last_used_at is not None and timezone.is_naive(last_used_at):  # SQLite hands back naive values to raw SQL
        last_used_at = timezone.make_aware(last_used_at, UTC)
    if last_used_at is None or now - last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)


def no_such_token() -> TokenFailed:
    return TokenFailed("Invalid bearer token: no such token.", "token_invalid")


def authenticate_secret(secret: str) -> tuple[object, ApiToken]:
    """Resolve a bearer secret to (principal, token) or raise TokenFailed."""
    token = ApiToken.objects.select_related("user", "team").filter(key_hash=hash_token(secret)).first()
    if token is None:
        raise no_such_token()
    check_token_usable(key_prefix=token.key_prefix, revoked_at=token.revoked_at, user_id=token.user_id,
                       user_is_active=token.user.is_active if token.user_id else True)
    note_use(token.pk, token.last_used_at)
    return principal_of(token), token


def principal_of(token: ApiToken):
    """Who acts with a token: its person, or its team (select the user and team with it)."""
    return token.user if token.user_id else TeamPrincipal(token)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        secret = bearer_secret(authentication.get_authorization_header(request).decode("latin-1"))
        if not secret:
            return None
        found = authenticate_secret(secret)
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            _charge_write(secret, request.META.get("CONTENT_LENGTH"))
        return found

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


def _charge_write(secret: str, content_length: str | None) -> None:
    """A write's body charged to its token's budget of request bytes (registry.ratelimit), before it is parsed."""
    try:
        size = int(content_length or 0)
    except ValueError:
        size = 0
    try:
        charge_token_bytes(hash_token(secret), size)
    except OverBudget as over:
        hold_refusal(over)
        raise RateLimited(over) from None


def login_client_ip(request) -> str:
    """The client address failed logins are counted against (django-axes): the last
    entry of LOGIN_CLIENT_IP_HEADER when set (the one the trusted proxy appended;
    earlier entries are the client's to forge), else REMOTE_ADDR."""
    header = settings.LOGIN_CLIENT_IP_HEADER
    if header:
        forwarded = request.META.get(header, "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")
