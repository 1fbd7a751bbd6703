"""Keyset pagination: a page is "the N rows after (or before) this row", never "skip M rows".

An OFFSET makes the database read and throw away every row before the page, so the
100th page of a million datasets costs a hundred pages; and a COUNT reads them all.
A keyset page seeks straight to its first row through the index of the ordering
(`WHERE (namespace, name) > (%s, %s) ORDER BY namespace, name LIMIT N`): every page
costs the same, whatever its number and whatever the size of the list.

    page = keyset_page(queryset, key=("namespace", "name"), size=100, after=token)
    page.rows, page.next_token, page.previous_token

The key must be unique (a unique constraint or the primary key last) and made of
non-null, ascending columns the index orders; a token is the key's values of the
page's last (or first) row, opaque to clients (base64 of JSON).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from django.db.models import F, QuerySet
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan


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


def encode_token(values: tuple) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(values), separators=(",", ":")).encode()).decode().rstrip("=")


def decode_token(token: str, width: int) -> tuple:
    try:
        padded = token + "=" * (-len(token) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise BadToken("This page link is not one the list gave out: start again from the first page.") from exc
    if not isinstance(values, list) or len(values) != width or not all(isinstance(v, str | int) for v in values):
        raise BadToken("This page link is not one the list gave out: start again from the first page.")
    return tuple(values)


def key_of(row, key: tuple[str, ...]) -> tuple:
    return tuple(getattr(row, name) for name in key)


def keyset_page(rows: QuerySet, *, key: tuple[str, ...], size: int, after: str | None = None,
                before: str | None = None) -> KeysetPage:
    """The page of `rows` after the row `after` names (or before the row `before`
    names; the first page with neither), ordered by `key`. One query: size + 1 rows
    are read, the extra one only to tell whether there is a next page."""
    columns = Tuple(*(F(name) for name in key))
    if before:
        values = decode_token(before, len(key))
        found = list(rows.filter(TupleLessThan(columns, values)).order_by(*(f"-{name}" for name in key))[: size + 1])
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
        query = query.filter(TupleGreaterThan(columns, decode_token(after, len(key))))
    found = list(query[: size + 1])
    more_after = len(found) > size
    found = found[:size]
    return KeysetPage(
        found, size=size,
        next_token=encode_token(key_of(found[-1], key)) if more_after else None,
        previous_token=encode_token(key_of(found[0], key)) if after and found else None,
    )
