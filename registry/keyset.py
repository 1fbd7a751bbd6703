"""Keyset pagination: a page is "the N rows after (or before) this row", never "skip M rows".

An OFFSET makes the database read and throw away every row before the page, so the
100th page of a million datasets costs a hundred pages; and a COUNT reads them all.
A keyset page seeks straight to its first row through the index of the ordering
(`WHERE (namespace, name) > (%s, %s) ORDER BY namespace, name LIMIT N`): every page
costs the same, whatever its number and whatever the size of the list.

    page = keyset_page(queryset, key=("namespace", "name"), size=100, after=token)
    page.rows, page.next_token, page.previous_token

The key must be unique (a unique constraint or the primary key last) and made of
non-null columns the index orders, all ascending or all descending ("-at", "-id"); a
token is the key's values of the page's last (or first) row, opaque to clients (base64
of JSON; a time is written as its ISO text).

A list ordered by a rank no index holds (the home page: stale first, then warning...)
is a sequence of segments, each seeking through its own index (`segmented_page`).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import date, datetime

from django.core.exceptions import ValidationError
from django.db.models import F, Q, QuerySet, prefetch_related_objects
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan

BAD_TOKEN = "This page link is not one the list gave out: start again from the first page."


class BadToken(ValueError):
    """A page token that this list did not hand out (edited, truncated, of another list)."""


@dataclass
class KeysetPage:
    rows: list
    next_token: str | None = None
    previous_token: str | None = None
    size: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def has_next(self) -> bool:
        return self.next_token is not None

    @property
    def has_previous(self) -> bool:
        return self.previous_token is not None


def _plain(value):
    # A time goes into the token as ISO text: the column's field reads it back.
    return value.isoformat() if isinstance(value, datetime | date) else value


def encode_token(values: tuple) -> str:
    plain = [_plain(v) for v in values]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_token(token: str, width: int | None = None) -> tuple:
    try:
        padded = token + "=" * (-len(token) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise BadToken(BAD_TOKEN) from exc
    if (not isinstance(values, list) or not values or (width is not None and len(values) != width)
            or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in values)):
        raise BadToken(BAD_TOKEN)
    return tuple(values)


def _attribute(row, path: str):
    for part in path.split("__"):
        row = getattr(row, part)
    return row


def key_of(row, key: tuple[str, ...]) -> tuple:
    return tuple(_attribute(row, name.lstrip("-")) for name in key)


def _direction(key: tuple[str, ...]) -> bool:
    """True when the key is descending. A row comparison `(a, b) > (x, y)` seeks through
    an index only when every column goes the same way."""
    descending = {name.startswith("-") for name in key}
    if len(descending) != 1:
        raise ValueError(f"A keyset key is all ascending or all descending: {key}")
    return descending.pop()


def _beyond(rows: QuerySet, key: tuple[str, ...], values: tuple, *, forward: bool) -> QuerySet:
    """The rows after `values` in the key's order (forward), or before them.

    The first column's bound is repeated on its own (`a >= x`): when the key spans two
    tables (a freshness row's last write, then the dataset's name) the row comparison is
    only a filter, and that bound is what lets the first table's index seek."""
    names = tuple(name.lstrip("-") for name in key)
    ascending = not _direction(key)
    up = forward == ascending
    columns = Tuple(*(F(name) for name in names))
    row = TupleGreaterThan(columns, values) if up else TupleLessThan(columns, values)
    try:
        return rows.filter(Q(row), **{f"{names[0]}__{'gte' if up else 'lte'}": values[0]})
    except (ValidationError, ValueError, TypeError) as exc:
        # A token whose values the columns cannot read (a time that is not one) is not ours.
        raise BadToken(BAD_TOKEN) from exc


def _reversed(key: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(name[1:] if name.startswith("-") else f"-{name}" for name in key)


def _read(query) -> list:
    # As in _beyond: some fields read a token's values only when the query is compiled.
    try:
        return list(query)
    except (ValidationError, ValueError, TypeError) as exc:
        raise BadToken(BAD_TOKEN) from exc


def keyset_page(rows: QuerySet, *, key: tuple[str, ...], size: int, after: str | None = None,
                before: str | None = None) -> KeysetPage:
    """The page of `rows` after the row `after` names (or before the row `before`
    names; the first page with neither), ordered by `key`. One query: size + 1 rows
    are read, the extra one only to tell whether there is a next page."""
    _direction(key)
    if before:
        values = decode_token(before, len(key))
        found = _read(_beyond(rows, key, values, forward=False).order_by(*_reversed(key))[: size + 1])
        more_before = len(found) > size
        found = found[:size][::-1]
        return KeysetPage(
            found, size=size,
            # Rows came before `before`: the row it names follows this page.
            next_token=encode_token(key_of(found[-1], key)) if found else None,
            previous_token=encode_token(key_of(found[0], key)) if more_before and found else None,
        )
    query = rows.order_by(*key)
    if after:
        query = _beyond(query, key, decode_token(after, len(key)), forward=True)
    found = _read(query[: size + 1])
    more_after = len(found) > size
    found = found[:size]
    return KeysetPage(
        found, size=size,
        next_token=encode_token(key_of(found[-1], key)) if more_after else None,
        previous_token=encode_token(key_of(found[0], key)) if after and found else None,
    )


@dataclass(frozen=True)
class Segment:
    """One part of a segmented list: its rows, listed after the segments before it,
    ordered by its own unique, indexed key (non-null in these rows)."""

    rows: QuerySet
    key: tuple[str, ...]


def segmented_page(segments: list[Segment], *, size: int, after: str | None = None,
                   before: str | None = None) -> KeysetPage:
    """The page after (or before) the row a token names, in a list made of `segments`:
    all of the first segment in its key's order, then all of the second, and so on.
    A token is the segment's number and its key's values.

    Each segment the page spans is one query, a seek through the segment's own index
    for at most the rows still missing (+ 1, to know whether more follow): the token's
    segment first, then the next ones (the ones before, for `before`) until the page is
    full. Segments past the page's end are never read. A page inside one segment is one
    query, whatever its depth and the list's length.
    """
    forward = not before
    token = before or after
    start, values = (len(segments) - 1 if before else 0), None
    if token:
        decoded = decode_token(token)
        start, values = decoded[0], decoded[1:]
        if not isinstance(start, int) or not 0 <= start < len(segments) or len(values) != len(segments[start].key):
            raise BadToken(BAD_TOKEN)
    found: list[tuple[int, object]] = []
    # Related rows are fetched once for the whole page, not once a segment.
    prefetch = segments[start].rows._prefetch_related_lookups
    for number in range(start, -1, -1) if before else range(start, len(segments)):
        segment = segments[number]
        query = segment.rows.prefetch_related(None)
        if number == start and values is not None:
            query = _beyond(query, segment.key, values, forward=forward)
        query = query.order_by(*(segment.key if forward else _reversed(segment.key)))
        found += [(number, row) for row in _read(query[: size + 1 - len(found)])]
        if len(found) > size:
            break
    more = len(found) > size
    found = found[:size] if forward else found[:size][::-1]
    for number, row in found:
        row.keyset_segment = number

    def token_of(entry: tuple[int, object]) -> str:
        number, row = entry
        return encode_token((number, *key_of(row, segments[number].key)))

    rows = [row for _, row in found]
    if prefetch:
        prefetch_related_objects(rows, *prefetch)
    if forward:
        return KeysetPage(rows, size=size, next_token=token_of(found[-1]) if more else None,
                          previous_token=token_of(found[0]) if token and found else None)
    return KeysetPage(rows, size=size, next_token=token_of(found[-1]) if found else None,
                      previous_token=token_of(found[0]) if more and found else None)
