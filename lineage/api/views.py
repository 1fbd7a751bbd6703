"""The lineage API.

POST /api/v1/lineage and /api/v1/lineage/batch are plain Django views rather
than DRF ones: they are the hot path (hundreds of events a second), and DRF's
request wrapping and content negotiation would cost more than the validation.
They keep DRF's error shape ({"detail", "code"}) and the bearer-token rules and
messages of registry.auth.

Status codes follow Marquez, so OpenLineage clients retry when they should:
201 stored (also for a retried duplicate), 400 unreadable body, 422 an event
that breaks the spec (nothing stored), 401 token missing/invalid/revoked,
403 a token that may not write lineage or an output dataset it may not
write (registry.auth.LineageWriter; nothing stored, counted in
lineage_writes_refused_total), 411 a chunked body the server cannot read,
413 over LINEAGE_MAX_BODY_BYTES or LINEAGE_MAX_BATCH_EVENTS,
429 a token over its budget of request bytes (LINEAGE_TOKEN_BYTES_PER_SECOND,
registry.ratelimit; with Retry-After),
503 database unavailable (with Retry-After; it says "nothing was stored" only
when the failure came before COMMIT, else that the event may not have been:
a retry is safe either way).

A facet that would change an input the token may not write (its schema,
quality checks, aliases, …) does not refuse the event: the event is stored
without it (201), and the answer lists each such facet under `warnings`
(path, code `facet_not_writable`, reason), counted in
lineage_facets_refused_total (lineage.facets).
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DataError, InterfaceError, OperationalError
from django.http import HttpRequest, JsonResponse
from django.utils.functional import SimpleLazyObject
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, extend_schema
from prometheus_client import Counter
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage.column_graph import column_lineage
from lineage.graph import GraphError, NodeNotFound, run_graph
from lineage.ingest import Gate, ParsedEvent, WriteRefused, refuse_foreign_outputs, store_event
from lineage.marquez.graph import marquez_graph
from lineage.static_events import ParsedStatic, store_static_event
from lineage.validation import EventKind, check_event, storage_problems
from registry.auth import (
    LineageWriter,
    TokenFailed,
    bearer_secret,
    check_token_usable,
    may_write_lineage,
    no_such_token,
    note_use,
    principal_of,
)
from registry.db import prepared_cursor
from registry.jsonbody import JsonBodyError, Work, parse_json
from registry.models import ApiToken, Dataset, hash_token
from registry.ratelimit import (
    REFUSALS,
    OverBudget,
    charge_refused_bytes,
    charge_token_bytes,
    charge_work_done,
    over_budget_fields,
    over_budget_message,
)

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MAX_LISTED_PROBLEMS = 50


class IngestRefused(Exception):
    """The ingest says no before storing anything: answered with `status` and a JSON body naming the problem."""

    def __init__(self, status: int, detail: str, code: str, **extra: Any):
        super().__init__(detail)
        self.status, self.detail, self.code, self.extra = status, detail, code, extra

    def response(self) -> JsonResponse:
        response = JsonResponse({"detail": self.detail, "code": self.code, **self.extra}, status=self.status)
        if self.status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="api"'
        if self.status == 503:
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        if self.status == 429:
            response["Retry-After"] = str(self.extra["retry_after"])
        return response


def _writer_gate(request: HttpRequest) -> tuple[Gate, SimpleLazyObject]:
    """The check that the request's bearer token may write lineage, and the
    token behind it, with its team and user (loaded only if something needs
    it, such as the audit row of a dataset first seen or of a freshness
    change). The check returns the LineageWriter (registry.auth): the token,
    the team the event is attributed to (a team token's own, a person's only
    team) and the teams whose datasets it may write outputs to.

    The rules and messages are registry.auth's; only the look-up differs: one
    plain query, which the ingest sends with the event's first statement. On
    this path the ORM look-up cost as much CPU as storing the event."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if not header:
        raise IngestRefused(401, "Authentication required: send 'Authorization: Bearer <token>' with a token that may write lineage.", "token_missing")
    try:
        secret = bearer_secret(header)
        if secret is None:
            raise TokenFailed("Malformed Authorization header: expected 'Bearer <token>'.", "token_malformed")
    except TokenFailed as failed:
        raise _unauthorized(failed) from None
    checked: list[int] = []
    key = hash_token(secret)

    def check(row: tuple | None) -> LineageWriter:
        try:
            if row is None:
                raise no_such_token()
            token_id, key_prefix, scopes, revoked_at, last_used_at, user_id, team_id = row
            user_active, member_of = True, frozenset()
            if user_id is not None:
                # Pipelines mostly hold team tokens: a person's is checked with a
                # query of its own, which also finds their teams.
                user_active, member_of = _person(user_id)
            check_token_usable(key_prefix=key_prefix, revoked_at=revoked_at, user_id=user_id, user_is_active=user_active)
        except TokenFailed as failed:
            refused = _unauthorized(failed)
            RECENT_TOKEN_CHECKS.remember(key, refused)
            raise refused from None
        if not may_write_lineage(scopes):
            _count_refusal("token_scope")
            refused = IngestRefused(403, f"Token {key_prefix}… may not write lineage; ask an admin for a token with "
                                         "the 'lineage:write' scope.", "token_cannot_write_lineage")
            RECENT_TOKEN_CHECKS.remember(key, refused)
            raise refused
        note_use(token_id, last_used_at)
        checked.append(token_id)
        RECENT_TOKEN_CHECKS.remember(key, None)
        return LineageWriter.of(token_id=token_id, key_prefix=key_prefix, scopes=scopes, token_team_id=team_id,
                                member_of=member_of)

    return Gate(_TOKEN_SQL, [key], check), SimpleLazyObject(lambda: _token(checked[0]))


class RecentTokenChecks:
    """What this process found of each token it checked lately, by its secret's hash: nothing
    against it, or the 401/403 it was answered. Read only to answer a request that is refused
    anyway (a 429, an unreadable body): "a bad token is reported first" then costs no query
    for a token that keeps sending. Stored events always pass the full check, in their own
    statement; a token revoked within SECONDS may meanwhile see a refusal about its body
    rather than the 401 (nothing is stored either way)."""

    SECONDS = 10.0

    def __init__(self, max_keys: int = 10_000) -> None:
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._found: OrderedDict[str, tuple[float, IngestRefused | None]] = OrderedDict()

    def remember(self, key: str, refusal: IngestRefused | None) -> None:
        with self._lock:
            self._found.pop(key, None)
            self._found[key] = (time.monotonic() + self.SECONDS, refusal)
            if len(self._found) > self.max_keys:
                self._found.popitem(last=False)

    def lookup(self, key: str) -> tuple[bool, IngestRefused | None]:
        """(whether the token was checked lately, the refusal it got if any)."""
        with self._lock:
            found = self._found.get(key)
        if found is None or found[0] < time.monotonic():
            return False, None
        return True, found[1]

    def clear(self) -> None:
        with self._lock:
            self._found.clear()


RECENT_TOKEN_CHECKS = RecentTokenChecks()


def _refuse_bad_token_first(request: HttpRequest, gate: Gate | None = None) -> None:
    """Before a refusal about the request itself: the 401 or 403 its token gets, if it gets
    one. From RECENT_TOKEN_CHECKS when this process checked the token lately, else one query."""
    secret = bearer_secret(request.META.get("HTTP_AUTHORIZATION", ""))
    known, refusal = RECENT_TOKEN_CHECKS.lookup(hash_token(secret)) if secret else (False, None)
    if refusal is not None:
        raise refusal
    if not known:
        _lineage_writer(request, gate)


def _principal_of(token: ApiToken) -> SimpleLazyObject:
    """Who acts with the (lazily loaded) token: its person or its team."""
    return SimpleLazyObject(lambda: principal_of(token))


def _person(user_id: int) -> tuple[bool, frozenset[int]]:
    """Whether the token's person is active, and their teams (one query)."""
    rows = list(get_user_model().objects.filter(pk=user_id, is_active=True).values_list("memberships__team_id", flat=True))
    return bool(rows), frozenset(team for team in rows if team is not None)


def _unauthorized(failed: TokenFailed) -> IngestRefused:
    return IngestRefused(401, str(failed.detail), failed.get_codes())


def _lineage_writer(request: HttpRequest, gate: Gate | None = None,
                    token: SimpleLazyObject | None = None) -> tuple[SimpleLazyObject, LineageWriter]:
    """The token allowed to write lineage behind a request, and its LineageWriter (its own query)."""
    if gate is None or token is None:
        gate, token = _writer_gate(request)
    with prepared_cursor() as cursor:
        writer = gate.run_alone(cursor)
    return token, writer


# One table only: every table a statement touches costs PostgreSQL CPU, per event.
_TOKEN_SQL = (f"SELECT t.id, t.key_prefix, t.scopes, t.revoked_at, t.last_used_at, t.user_id, t.team_id "
              f"FROM {ApiToken._meta.db_table} t WHERE t.key_hash = %s")


def _token(token_id: int) -> ApiToken:
    return ApiToken.objects.select_related("user", "team").get(pk=token_id)


# --- refused writes ----------------------------------------------------------

# Why the ingest said no to a token; two values, so the series stays small.
WRITES_REFUSED = Counter("lineage_writes_refused", "Lineage events refused because of the token that sent them.",
                         ["reason"])


def _count_refusal(reason: str) -> None:
    """reason: token_scope (no lineage scope) or not_owner (an output of another team's dataset)."""
    WRITES_REFUSED.labels(reason=reason).inc()


def _foreign_output(refused: WriteRefused) -> IngestRefused:
    _count_refusal("not_owner")
    namespace, name = refused.dataset
    return IngestRefused(403, str(refused), "dataset_not_writable", dataset={"namespace": namespace, "name": name})


def _read_json(request: HttpRequest) -> Any:
    media_type = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        # As the rest of the API (and Marquez) answers: a form post or text/plain is no event.
        raise IngestRefused(415, f"Content-Type {media_type or '(none)'!r} is not supported; send the event as "
                                 "'Content-Type: application/json'.", "unsupported_media_type")
    limit = settings.LINEAGE_MAX_BODY_BYTES
    declared = _admit(request)
    if declared > limit:
        raise IngestRefused(413, f"The body is {declared} bytes; the limit is {limit} bytes (LINEAGE_MAX_BODY_BYTES). Send fewer events per batch.", "too_large",
                             limit="LINEAGE_MAX_BODY_BYTES", allowed=limit, found=declared)
    body = _read_body(request, limit)
    request.budget_bytes_read = len(body)
    if not declared:  # a chunked body: charged once its length is known
        _charge(request, len(body))
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding == "gzip":
        try:
            body = _gunzip(body, limit)
        except IngestRefused as refused:
            if refused.code == "too_large":  # inflated up to the limit before it was refused
                _charge(request, limit)
                request.budget_bytes_read += limit
            raise
        _charge(request, len(body))  # the inflated bytes are parsed: they count as well
        request.budget_bytes_read += len(body)
    elif encoding not in ("", "identity"):
        raise IngestRefused(415, f"Content-Encoding {encoding!r} is not supported; send gzip or no encoding.", "unsupported_encoding")
    if not body:
        raise IngestRefused(400, "The body is empty; send an OpenLineage event as JSON.", "empty_body")
    try:
        return parse_json(body)
    except JsonBodyError as exc:
        raise IngestRefused(400, exc.detail, exc.code) from None


def _admit(request: HttpRequest, gate: Gate | None = None) -> int:
    """The body's declared length, charged to the token's budget before the body is read
    or parsed, and whether or not it is then refused: a refused shape costs its sender's
    budget as an accepted one does (once per request)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise IngestRefused(400, "Content-Length is not a number.", "bad_request") from None
    if not getattr(request, "budget_admitted", False):
        request.budget_admitted = True
        _charge(request, declared, gate)
    return declared


def _charge(request: HttpRequest, size: int, gate: Gate | None = None) -> None:
    """Charge `size` bytes to the request's bearer token (registry.ratelimit); 429 when its budget is
    spent (a bad token's 401 or 403 first, known without a query if this process checked it lately).
    The token is known by its secret's hash, before the database is asked: the views have refused
    a missing or malformed Authorization header already."""
    secret = bearer_secret(request.META.get("HTTP_AUTHORIZATION", ""))
    if secret is None:
        return
    try:
        charge_token_bytes(hash_token(secret), size)
    except OverBudget as over:
        _refuse_bad_token_first(request, gate)
        raise IngestRefused(429, over_budget_message(over), "rate_limited", **over_budget_fields(over)) from None


def _charge_datasets_created(request: HttpRequest, created: int) -> None:
    """Each dataset the request's events created (a row, an audit row and a signal each, some
    milliseconds) charged to its token's budget as LINEAGE_TOKEN_NEW_DATASET_BYTES of body, once
    stored: a token naming new datasets by the hundred is held back as one sending large bodies."""
    secret = bearer_secret(request.META.get("HTTP_AUTHORIZATION", ""))
    if created and secret is not None:
        charge_work_done(hash_token(secret), created * settings.LINEAGE_TOKEN_NEW_DATASET_BYTES)


# A refused request's body is read to its end up to this size, so that its connection can
# take the next request; a larger one is left unread and the connection closed.
DRAIN_REFUSED_BODY_BYTES = 64 * 1024


def _after_refusal(request: HttpRequest, refused: IngestRefused, response: JsonResponse) -> JsonResponse:
    """What a refusal costs its token beyond the bytes charged already: a body it had to read
    and then refused as unreadable or too large (400, 413) is charged to the token's budget of
    refused bytes (registry.ratelimit). A 429 is answered before its body is read: a small one
    is read (discarded) to keep the connection usable; a larger one is not, and the connection
    is closed, so that a client that keeps sending without waiting pays a new connection; and it
    is answered late (registry.ratelimit.RefusalHold), so that such a client sends about once a second."""
    read = getattr(request, "budget_bytes_read", None)
    if refused.status in (400, 413) and read:
        secret = bearer_secret(request.META.get("HTTP_AUTHORIZATION", ""))
        if secret is not None:
            charge_refused_bytes(hash_token(secret), read)
    if refused.status == 429 and read is None:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if 0 < declared <= DRAIN_REFUSED_BODY_BYTES:
            request.body  # noqa: B018 - read to its end, discarded
        elif declared and not request.META.get("SERVER_SOFTWARE", "").startswith("WSGIServer/"):
            # Said, so that the client reads the 429 before the connection goes (granian, left
            # to itself, resets it under the client's upload). wsgiref (runserver, the live test
            # server) refuses the header from an application, and closes such a connection itself.
            response["Connection"] = "close"
        REFUSALS.hold(refused.extra.get("retry_after", 0))
    return response


def _read_body(request: HttpRequest, limit: int) -> bytes:
    """The body as sent. A chunked body (no Content-Length) is read to its end
    when the server decoded the chunks and says where they end (gunicorn sets
    `wsgi.input_terminated`); a server that does not is asked for a length (411)
    rather than the body taken as empty."""
    if "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return request.body
    if not request.META.get("wsgi.input_terminated"):
        raise IngestRefused(411, "A chunked body cannot be read here; send the event with a Content-Length.", "length_required")
    body = request.META["wsgi.input"].read(limit + 1)
    if len(body) > limit:
        raise IngestRefused(413, f"The body is more than {limit} bytes (LINEAGE_MAX_BODY_BYTES). Send fewer events per batch.", "too_large",
                             limit="LINEAGE_MAX_BODY_BYTES", allowed=limit)
    return body


# A gzip member's input is fed in slices that start this small and double: the
# bytes zlib copies out past a member's end (its unused_data) stay within twice
# the member, so many small members cost no more than their bytes.
_GZIP_FIRST_SLICE = 64


def _gunzip(body: bytes, limit: int, work: Work | None = None) -> bytes:
    """A gzip body inflated, every member of it (RFC 1952 allows several, as
    `cat a.gz b.gz` makes), up to `limit` bytes and LINEAGE_MAX_GZIP_MEMBERS
    members, in time linear in the body and what it inflates to. Refused: a
    member cut short (its CRC and length missing), a CRC that does not match,
    and bytes after the last member that are not gzip. `work`, if given,
    counts the bytes handed to and copied out of zlib."""
    most_members = settings.LINEAGE_MAX_GZIP_MEMBERS
    view, end = memoryview(body), len(body)
    parts, size, pos, members = [], 0, 0, 0
    while True:
        if members == most_members:
            raise _over_budget("LINEAGE_MAX_GZIP_MEMBERS", most_members, f"The gzip body has more than {most_members} members",
                               "too_many_gzip_members")
        members += 1
        inflater, window = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), _GZIP_FIRST_SLICE
        while not inflater.eof:
            if pos == end:
                raise IngestRefused(400, f"The gzip body ends inside member {members}: its CRC and length are missing "
                                         "(a truncated upload?).", "bad_gzip")
            start, stop = pos, min(end, pos + window)
            try:
                part = inflater.decompress(view[pos:stop], limit + 1 - size)
            except zlib.error as exc:
                raise IngestRefused(400, f"Content-Encoding is gzip but member {members} of the body is not valid gzip: {exc}.", "bad_gzip") from None
            size += len(part)
            parts.append(part)
            if size > limit or inflater.unconsumed_tail:
                raise IngestRefused(413, f"The body inflates to more than {limit} bytes (LINEAGE_MAX_BODY_BYTES).",
                                    "too_large", limit="LINEAGE_MAX_BODY_BYTES", allowed=limit)
            pos = stop - len(inflater.unused_data)
            window *= 2
            if work is not None:
                work.add(stop - start + len(inflater.unused_data) + len(part))
        if pos == end:
            return b"".join(parts)
        if view[pos:pos + 2] != b"\x1f\x8b":
            raise IngestRefused(400, f"{end - pos} bytes after gzip member {members} are not gzip (trailing garbage).", "bad_gzip")


def _over_budget(setting: str, allowed: int, what: str, code: str, **extra: Any) -> IngestRefused:
    """The 413 for a request over one of its limits: `limit` names the setting, `allowed` is its value."""
    return IngestRefused(413, f"{what}; the limit is {allowed} ({setting}). Send less in one request.", code,
                         limit=setting, allowed=allowed, **extra)


def _over_limits(event: Any, where: str = "The event") -> IngestRefused | None:
    """An event naming more datasets than LINEAGE_MAX_DATASETS_PER_EVENT, counted
    before the spec checks look at each one: each dataset first seen is a row,
    an audit row and a signal, so one event of 10,000 outputs held a thread for
    half a minute."""
    if not isinstance(event, dict):
        return None
    limit = settings.LINEAGE_MAX_DATASETS_PER_EVENT
    named = sum(len(event[key]) for key in ("inputs", "outputs") if isinstance(event.get(key), list))
    if named <= limit and isinstance(event.get("outputs"), list) and named + _column_lineage_entries(event["outputs"]) > limit:
        # A columnLineage facet's sources are created too (first seen, unowned);
        # only when their entries could pass the limit are they told apart.
        sources = _column_lineage_sources(event["outputs"])
        if sources:
            named = len(sources | _dataset_keys([d for key in ("inputs", "outputs") for d in event.get(key) or []]))
    if named > limit:
        return IngestRefused(422, f"{where} names {named} datasets (inputs, outputs and column lineage sources); the limit is {limit} "
                                  "(LINEAGE_MAX_DATASETS_PER_EVENT). Split it into several events.", "too_many_datasets",
                             limit="LINEAGE_MAX_DATASETS_PER_EVENT", allowed=limit, found=named)
    return None


def _over_request_budget(events: list) -> IngestRefused | None:
    """A request whose events together name more datasets the registry has not
    seen, facets or schema columns than its budget (LINEAGE_MAX_REQUEST_NEW_DATASETS,
    _FACETS, _COLUMNS): the per-event limits alone let a batch of events, each
    within them, hold a thread for minutes. Counted from the parsed body before
    any check, a few lookups per dataset; the database is asked only when the
    datasets named could be over the budget."""
    budget = settings.LINEAGE_MAX_REQUEST_NEW_DATASETS
    # One event is held to LINEAGE_MAX_DATASETS_PER_EVENT already, its columnLineage sources included.
    count_sources = len(events) > 1 or settings.LINEAGE_MAX_DATASETS_PER_EVENT > budget
    datasets = facets = columns = 0
    for event in events:
        if not isinstance(event, dict):
            continue
        for key in ("run", "job"):
            part = event.get(key)
            if isinstance(part, dict) and isinstance(part.get("facets"), dict):
                facets += len(part["facets"])
        for key in ("inputs", "outputs", "dataset"):  # a DatasetEvent names one dataset
            named = event.get(key)
            if isinstance(named, dict):
                named = [named]
            elif not isinstance(named, list):
                continue
            datasets += len(named)
            for entry in named:
                if not isinstance(entry, dict):
                    continue
                found = entry.get("facets")
                if isinstance(found, dict):  # where the schema and columnLineage facets are
                    facets += len(found)
                    columns += _columns_in(found)
                for facet_key in ("inputFacets", "outputFacets"):
                    found = entry.get(facet_key)
                    if isinstance(found, dict):
                        facets += len(found)
        if count_sources and isinstance(event.get("outputs"), list):
            datasets += _column_lineage_entries(event["outputs"])
    if datasets > budget:
        # The references counted are an upper bound of the datasets first seen (each a row,
        # an audit row and a signal); only past the budget are they told apart and looked up.
        distinct = set()
        for event in events:
            if isinstance(event, dict):
                distinct |= _dataset_keys([d for key in ("inputs", "outputs") if isinstance(event.get(key), list)
                                           for d in event[key]] + [event.get("dataset")])
                if isinstance(event.get("outputs"), list):
                    distinct |= _column_lineage_sources(event["outputs"])
        new, counted_all = _new_datasets(distinct, budget) if len(distinct) > budget else (0, True)
        if new > budget:
            return _over_budget("LINEAGE_MAX_REQUEST_NEW_DATASETS", budget,
                                f"The request names {'' if counted_all else 'at least '}{new} datasets the registry "
                                "has not seen", "too_many_new_datasets", found=new)
    for setting, found, what, code in (
            ("LINEAGE_MAX_REQUEST_FACETS", facets, "facets", "too_many_facets"),
            ("LINEAGE_MAX_REQUEST_COLUMNS", columns, "schema and column lineage fields", "too_many_columns")):
        allowed = getattr(settings, setting)
        if found > allowed:
            return _over_budget(setting, allowed, f"The request has {found} {what}", code, found=found)
    return None


def _new_datasets(keys: set[tuple[str, str]], budget: int) -> tuple[int, bool]:
    """How many of the (namespace, name) keys are no registered dataset, and whether
    that is all of them: counted up to the first count past `budget`, a query per
    namespace and 500 names (SQLite's limit on parameters is near)."""
    by_namespace: dict[str, list[str]] = {}
    for namespace, name in keys:
        by_namespace.setdefault(namespace, []).append(name)
    new = checked = 0
    for namespace, names in by_namespace.items():
        for start in range(0, len(names), 500):
            chunk = names[start:start + 500]
            new += len(chunk) - Dataset.objects.filter(namespace=namespace, name__in=chunk).count()
            checked += len(chunk)
            if new > budget:
                return new, checked == len(keys)
    return new, True


def _columns_in(facets: dict) -> int:
    """The fields of a dataset's schema facet (nested ones too) and of its columnLineage facet."""
    columns = 0
    schema = facets.get("schema")
    pending = [schema.get("fields")] if isinstance(schema, dict) else []
    while pending:
        fields = pending.pop()
        if isinstance(fields, list):
            columns += len(fields)
            pending.extend(f["fields"] for f in fields if isinstance(f, dict) and "fields" in f)
    lineage = facets.get("columnLineage")
    if isinstance(lineage, dict) and isinstance(lineage.get("fields"), dict):
        columns += len(lineage["fields"])
    return columns


def _column_lineage_facets(outputs: list) -> Iterator[dict]:
    for out in outputs:
        facets = out.get("facets") if isinstance(out, dict) else None
        facet = facets.get("columnLineage") if isinstance(facets, dict) else None
        if isinstance(facet, dict):
            yield facet


def _column_lineage_entries(outputs: list) -> int:
    """How many source entries the outputs' columnLineage facets have: the
    most datasets they can name (counting is cheaper than telling them apart)."""
    entries = 0
    for facet in _column_lineage_facets(outputs):
        if isinstance(facet.get("dataset"), list):
            entries += len(facet["dataset"])
        fields = facet.get("fields")
        if isinstance(fields, dict):
            entries += sum(len(f["inputFields"]) for f in fields.values()
                           if isinstance(f, dict) and isinstance(f.get("inputFields"), list))
    return entries


def _column_lineage_sources(outputs: list) -> set:
    """The (namespace, name) of every dataset the outputs' columnLineage facets name."""
    sources = set()
    for facet in _column_lineage_facets(outputs):
        fields = facet.get("fields")
        entries = [*(facet.get("dataset") or [])] if isinstance(facet.get("dataset"), list) else []
        if isinstance(fields, dict):
            for field in fields.values():
                if isinstance(field, dict) and isinstance(field.get("inputFields"), list):
                    entries.extend(field["inputFields"])
        sources |= _dataset_keys(entries)
    return sources


def _dataset_keys(entries: list) -> set:
    """(namespace, name) of the entries that have both as strings (the spec checks judge the rest)."""
    return {(e["namespace"], e["name"]) for e in entries
            if isinstance(e, dict) and isinstance(e.get("namespace"), str) and isinstance(e.get("name"), str)}


def _invalid(problems: list, *, what: str) -> IngestRefused:
    first = str(problems[0])
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return IngestRefused(
        422, f"{what} does not follow the OpenLineage 2-0-2 spec: {first}{more}.", "invalid_event",
        errors=[p.to_dict() for p in problems[:MAX_LISTED_PROBLEMS]],
    )


def _unstorable(exc: DataError) -> IngestRefused:
    # Something the checks above let through and the database refused; say so
    # rather than answer 500, and keep the database's words for the operator.
    return IngestRefused(422, f"The database refused a value in the event: {str(exc).splitlines()[0]}", "unstorable_value")


def _database_unavailable(exc: Exception) -> IngestRefused:
    """The 503 for a database failure, saying only what the server knows: that
    nothing was stored when the failure came before COMMIT (lineage.ingest.
    in_own_transaction marks it), else that it may not have been. A retry is
    safe either way: a stored event comes back as 'duplicate'."""
    log.warning("lineage ingest: database unavailable: %s", exc)
    stored_before = getattr(exc, "stored_before", None)
    extra = {} if stored_before is None else {"stored": stored_before}
    if getattr(exc, "nothing_stored", False):
        what = ("nothing was stored" if not stored_before else
                f"the first {stored_before} events of the batch are stored, the rest were not")
    else:
        what = ("the event may not have been stored" if not stored_before else
                f"the first {stored_before} events of the batch are stored; the next may not have been")
    return IngestRefused(503, f"The database is unavailable; {what}. Retrying is safe: an event already stored "
                              "is answered 'duplicate'.", "database_unavailable", **extra)


def _answers_errors(view: Callable[[HttpRequest], JsonResponse]) -> Callable[[HttpRequest], JsonResponse]:
    """The ingest views' refusals and database failures as JSON answers."""
    @wraps(view)
    def answer(request: HttpRequest) -> JsonResponse:
        try:
            return view(request)
        except IngestRefused as refused:
            return _after_refusal(request, refused, refused.response())
        except (OperationalError, InterfaceError) as exc:
            return _database_unavailable(exc).response()
        except DataError as exc:
            return _unstorable(exc).response()
    return answer


def _checked(event: Any) -> tuple[ParsedEvent | ParsedStatic | None, list]:
    """The event ready to store (a RunEvent, or a DatasetEvent or JobEvent), or the problems that refuse it."""
    checked = check_event(event)
    if checked.problems:
        return None, checked.problems
    # A facet that breaks its own schema is left out, not the event (lineage.facet_schemas.without_facets).
    if checked.kind == EventKind.RUN:
        parsed = ParsedEvent.of(event, checked.invalid_facets)
    else:
        parsed = ParsedStatic.of(event, checked.kind, checked.invalid_facets)
    return parsed, storage_problems(event, kind=checked.kind, canonical=parsed.canonical)


def _store(parsed: ParsedEvent | ParsedStatic, *, token, gate: Gate | None = None, writer: LineageWriter | None = None):
    """Store one event sent with `token`: through the `gate`, or by a `writer` already checked.
    An output the token may not write refuses it (403, nothing stored)."""
    by = _principal_of(token)
    try:
        if isinstance(parsed, ParsedStatic):
            return store_static_event(parsed, by=by, gate=gate, writer=writer)
        return store_event(parsed, by=by, gate=gate, writer=writer, token=token)
    except WriteRefused as refused:
        raise _foreign_output(refused) from None


@csrf_exempt
@_answers_errors
def ingest(request: HttpRequest) -> JsonResponse:
    """POST /api/v1/lineage: one RunEvent, DatasetEvent or JobEvent."""
    if request.method != "POST":
        return JsonResponse({"detail": "Method not allowed: POST an OpenLineage event here, or GET /api/v1/lineage?nodeId=….", "code": "method_not_allowed"}, status=405)
    gate, token = _writer_gate(request)
    try:
        event = _read_json(request)
        if isinstance(event, list):
            raise IngestRefused(400, "The body is a JSON array; POST arrays of events to /api/v1/lineage/batch.", "expected_object")
        over = _over_limits(event) or _over_request_budget([event])
        if over is not None:
            raise over
        parsed, problems = _checked(event)
        if problems:
            raise _invalid(problems, what="The event")
    except IngestRefused as refused:
        # A bad token is reported before a bad body; a good one is checked
        # with the event's first statement (the gate) instead. (A 429 has
        # reported it already.)
        if refused.status != 429:
            _refuse_bad_token_first(request, gate)
        raise
    result = _store(parsed, token=token, gate=gate)
    _charge_datasets_created(request, result.datasets_created)
    return JsonResponse(result.to_dict(), status=201)


@csrf_exempt
@_answers_errors
def ingest_batch(request: HttpRequest) -> JsonResponse:
    """POST /api/v1/lineage/batch: a JSON array of events (RunEvents, DatasetEvents, JobEvents).

    Every event is checked before any is stored: one invalid event refuses the
    batch (422, each problem prefixed with its index), as does an output the
    token may not write (403, one query for the whole batch), and nothing is
    stored. Valid batches are stored event by event, each in its own
    transaction; if the database fails midway the answer is 503 and a retry of
    the whole batch stores only what is missing."""
    if request.method != "POST":
        return JsonResponse({"detail": "Method not allowed: POST a JSON array of OpenLineage events.", "code": "method_not_allowed"}, status=405)
    gate, token = _writer_gate(request)
    _admit(request, gate)  # a token past its budget is answered before its token is queried
    token, writer = _lineage_writer(request, gate, token)
    events = _read_json(request)
    if not isinstance(events, list):
        raise IngestRefused(400, "A batch is a JSON array of OpenLineage events; POST a single event to /api/v1/lineage.", "expected_array")
    if not events:
        raise IngestRefused(400, "The batch is empty.", "empty_batch")
    most = settings.LINEAGE_MAX_BATCH_EVENTS
    if len(events) > most:
        raise IngestRefused(413, f"The batch has {len(events)} events; the limit is {most} (LINEAGE_MAX_BATCH_EVENTS). "
                                 "Send it in several batches.", "too_many_events",
                             limit="LINEAGE_MAX_BATCH_EVENTS", allowed=most, found=len(events))
    for i, event in enumerate(events):
        over = _over_limits(event, f"Event [{i}] of the batch")
        if over is not None:
            raise over
    over = _over_request_budget(events)
    if over is not None:
        raise over
    parsed, problems = [], []
    for i, event in enumerate(events):
        ready, found = _checked(event)
        parsed.append(ready)
        problems.extend(p.__class__(f"[{i}].{p.path}" if p.path else f"[{i}]", p.message) for p in found)
    if problems:
        raise _invalid(problems, what=f"The batch of {len(events)} events")
    try:
        refuse_foreign_outputs(writer, parsed)
    except WriteRefused as refused:
        raise _foreign_output(refused) from None
    # Each event in its own transaction, in order; each checks its outputs again
    # (an owner may have claimed a dataset since), against the rows it reads anyway.
    results = []
    try:
        for ready in parsed:
            results.append(_store(ready, token=token, writer=writer))
    except (OperationalError, InterfaceError) as exc:
        exc.stored_before = len(results)  # stored (or stored before): what the 503 can say
        raise
    _charge_datasets_created(request, sum(r.datasets_created for r in results))
    stored = sum(r.stored for r in results)
    answer = {"received": len(results), "stored": stored, "duplicates": len(results) - stored}
    warnings = [{**facet.to_dict(), "path": f"[{i}].{facet.path}"}
                for i, result in enumerate(results) for facet in result.refused]
    if warnings:
        answer["warnings"] = warnings
    return JsonResponse(answer, status=201)


class LineageGraphView(APIView):
    """GET /api/v1/lineage?nodeId=…&depth=N[&direction=…] or ?runId=…"""

    @extend_schema(
        parameters=[
            OpenApiParameter("nodeId", str, description="dataset:<namespace>:<name> or job:<namespace>:<name>"),
            OpenApiParameter("depth", int, description="How many jobs away to walk (default 20, at most 100)."),
            OpenApiParameter("direction", str, enum=["upstream", "downstream", "both"], description="Default both."),
            OpenApiParameter("runId", str, description="Instead of nodeId: what one run read and wrote."),
        ],
        responses={200: dict},
        summary="The lineage graph around a dataset, job or run, in Marquez's shape.",
    )
    def get(self, request):
        params = request.query_params
        try:
            if params.get("runId"):
                graph = run_graph(params["runId"])
            elif params.get("nodeId"):
                # Marquez's full node payload (lineage/marquez/graph.py).
                return Response(marquez_graph(params["nodeId"], depth=params.get("depth"),
                                              direction=params.get("direction", "both")))
            else:
                raise GraphError("Send nodeId=dataset:<namespace>:<name> (or job:…), or runId=<uuid>.")
        except GraphError as exc:
            return Response({"detail": str(exc), "code": "bad_request"}, status=400)
        except NodeNotFound as exc:
            return Response({"detail": str(exc), "code": "not_found"}, status=404)
        return Response(graph.to_marquez())


    @extend_schema(
        request={"application/json": {"type": "object", "description": "An OpenLineage 2-0-2 event (RunEvent, DatasetEvent or JobEvent); gzip allowed."}},
        responses={201: dict, 400: dict, 401: dict, 403: dict, 413: dict, 422: dict, 429: dict, 503: dict},
        summary="Store one OpenLineage event (bearer token with a lineage:write scope; 403 for another team's output).",
    )
    def post(self, request):
        # Reached only through LineageGraphView.as_view(); the URL routes POST
        # straight to `ingest`, past DRF (see lineage_endpoint).
        return ingest(request._request)


class LineageBatchView(APIView):
    @extend_schema(
        request={"application/json": {"type": "array", "items": {"type": "object"},
                                      "description": "OpenLineage 2-0-2 events (RunEvent, DatasetEvent, JobEvent); gzip allowed."}},
        responses={201: dict, 400: dict, 401: dict, 403: dict, 413: dict, 422: dict, 429: dict, 503: dict},
        summary="Store a batch of OpenLineage events, each in its own transaction; one invalid event refuses the batch.",
    )
    def post(self, request):
        return ingest_batch(request._request)


class ColumnLineageView(APIView):
    """GET /api/v1/column-lineage?nodeId=datasetField:<namespace>:<name>:<field>&depth=N&withDownstream=…"""

    @extend_schema(
        parameters=[
            OpenApiParameter("nodeId", str, description="datasetField:<namespace>:<name>:<field>, or "
                             "dataset:<namespace>:<name> for every field of the dataset with column lineage"),
            OpenApiParameter("depth", int, description="How many field hops to walk (default 20, at most 100)."),
            OpenApiParameter("withDownstream", bool, description="Also walk downstream (default false: upstream only)."),
        ],
        responses={200: dict},
        summary="The column lineage around a dataset field, in Marquez's shape.",
    )
    def get(self, request):
        params = request.query_params
        try:
            if not params.get("nodeId"):
                raise GraphError("Send nodeId=datasetField:<namespace>:<name>:<field> (or dataset:<namespace>:<name>).")
            graph = column_lineage(params["nodeId"], depth=params.get("depth"),
                                   with_downstream=params.get("withDownstream"))
        except GraphError as exc:
            return Response({"detail": str(exc), "code": "bad_request"}, status=400)
        except NodeNotFound as exc:
            return Response({"detail": str(exc), "code": "not_found"}, status=404)
        return Response(graph)


@extend_schema(exclude=True)
class ColumnLineageWithSlashView(ColumnLineageView):
    """/api/v1/column-lineage/: the same operation, which the OpenAPI document lists once."""


_graph_view = LineageGraphView.as_view()


@csrf_exempt
def lineage_endpoint(request: HttpRequest):
    """One URL, as in Marquez: POST ingests, GET reads the graph."""
    if request.method == "POST":
        return ingest(request)
    return _graph_view(request)


@csrf_exempt
def lineage_endpoint_with_slash(request: HttpRequest):
    """/api/v1/lineage/, as Marquez's Java client asks: the same operation, which the
    OpenAPI document lists once (a plain view, with no DRF class to document)."""
    return lineage_endpoint(request)


@csrf_exempt
def ingest_batch_with_slash(request: HttpRequest):
    """/api/v1/lineage/batch/: the same operation, listed once in the OpenAPI document."""
    return ingest_batch(request)


# The OpenAPI generator documents a URL by its view class: point it at the DRF
# classes that describe these endpoints, while requests take the lean path.
for _endpoint, _cls in ((lineage_endpoint, LineageGraphView), (ingest_batch, LineageBatchView)):
    _endpoint.cls = _cls
    _endpoint.initkwargs = {}
