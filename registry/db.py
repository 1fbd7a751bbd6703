"""Prepared statements for the few hot, fixed statements on PostgreSQL.

Django sends every query with client-side parameters, so PostgreSQL plans it
again each time. For the per-event and per-request statements of the apps
built on the core (lineage's ingest, token check and graph walk, freshness's
routine write) planning costs about as much as running them; a
server-binding cursor that prepares them plans each once per connection.
Django leaves psycopg's prepared statements off (prepare_threshold None); only
this cursor asks for them, so the rest of the app is unchanged. Behind a
transaction-pooling PgBouncer set LINEAGE_PREPARED_STATEMENTS=0 (the setting
keeps the name of the app that first used this cursor).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections

_PREPARE_THRESHOLD = 5


@cache
def on_postgresql() -> bool:
    """Whether the database is PostgreSQL (asked once: the ingest asks per value)."""
    return connection.vendor == "postgresql"


def use_prepared() -> bool:
    return on_postgresql() and settings.LINEAGE_PREPARED_STATEMENTS


def prepared_cursor():
    """A Django-wrapped cursor (logged, counted, errors translated) whose
    statements are prepared; Django's own cursor where that does not apply.

    The hot statements run one after another (an event's three, a page's
    one), so a connection keeps one such cursor and lends it again rather than
    build a new one each time (a psycopg cursor costs a copy of the
    connection's adapters); a cursor asked for while the spare one is out is
    a new one, closed as usual."""
    db = connections[DEFAULT_DB_ALIAS]  # once: each use of the `connection` proxy costs a look-up
    if not use_prepared():
        return db.cursor()
    db.ensure_connection()
    pg = db.connection
    spare = getattr(db, "_spare_prepared_cursor", None)
    if spare is not None and spare.connection is pg and not spare.lent and not spare.closed:
        spare.lent = True
        return db._prepare_cursor(spare)
    if pg.prepare_threshold is None:
        # ClientCursor, Django's default, never prepares whatever this says.
        pg.prepare_threshold = _PREPARE_THRESHOLD
    cursor = prepared_cursor_class()(pg)
    if spare is None or spare.connection is not pg or spare.closed:
        cursor.spare = cursor.lent = True
        db._spare_prepared_cursor = cursor
    return db._prepare_cursor(cursor)


@cache
def prepared_cursor_class():
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparedCursor(ServerBindingCursor):
        spare = lent = False

        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

        def close(self) -> None:
            # The spare cursor goes back to its connection; its last result
            # is dropped by the next execute (or with the connection).
            if self.spare:
                self.lent = False
            else:
                super().close()

    return PreparedCursor


# PostgreSQL holds timestamps from 4713 BC to 294276 AD; Python's datetime
# only years 1-9999. A row outside (an event time sent before the ingest
# refused them, or written by hand) failed every query that read it, and so
# every page showing it. Such a value reads as the nearest time Python can
# hold, a day inside its range so that showing it in a local time zone still works.
LATEST_READABLE = datetime(9999, 12, 30, tzinfo=UTC)
EARLIEST_READABLE = datetime(1, 1, 2, tzinfo=UTC)


def read_out_of_range_times(sender, connection, **kwargs) -> None:
    """connection_created: text timestamptz values out of Python's range read as
    LATEST_READABLE or EARLIEST_READABLE instead of raising DataError."""
    if connection.vendor != "postgresql":
        return
    import psycopg
    from psycopg.pq import Format

    adapters = connection.connection.adapters
    oid = psycopg.adapters.types["timestamptz"].oid
    # Text only: what Django and the ingest read (no query here asks for binary results).
    loader = adapters.get_loader(oid, Format.TEXT)
    if loader is not None and not getattr(loader, "clamps_out_of_range", False):
        adapters.register_loader(oid, _clamping(loader))


@cache  # one class per loader, not per connection
def _clamping(loader: type) -> type:
    import psycopg

    class ClampingLoader(loader):
        clamps_out_of_range = True

        def load(self, data):
            try:
                return super().load(data)
            except psycopg.DataError:
                # "… BC" is before year 1; anything else out of range is after 9999.
                moment = EARLIEST_READABLE if bytes(data).endswith(b"BC") else LATEST_READABLE
                # Django's loader sets its connection's zone (None: naive).
                return moment.replace(tzinfo=None) if getattr(self, "timezone", UTC) is None else moment

    return ClampingLoader


def read_json_with_orjson(sender, connection, **kwargs) -> None:
    """connection_created: values of type json (what `json_build_object` and `json_agg`
    make: the lineage walk's node payloads) decoded by orjson, several times faster than
    the json module. jsonb stays text, as Django has it, for JSONField to decode."""
    if connection.vendor == "postgresql":
        decode_json_with_orjson(connection.connection.adapters)


def decode_json_with_orjson(adapters) -> None:
    """Values of type json read through `adapters` (a psycopg connection's or cursor's)
    decoded by orjson, with the json module for what orjson reads otherwise."""
    from psycopg.types.json import JsonBinaryLoader, JsonLoader

    adapters.register_loader("json", _orjson_loader(JsonLoader))
    adapters.register_loader("json", _orjson_loader(JsonBinaryLoader))


@cache
def _orjson_loader(loader: type) -> type:
    import json

    import orjson  # here, not at start-up: only PostgreSQL connections use it

    # orjson reads an integer past 64 bits (which PostgreSQL's json holds) as a float:
    # above 2**64 - 1 (20 digits) or below -2**63 (19 digits already). A run of 19 digits
    # is rare: where one stands, the json module reads the value. Found by mapping every
    # digit to "0" and anything else to " " (a pattern search for the run cost more than
    # the json module's whole reading).
    digits_only = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
    long_run = b"0" * 19

    def loads(data: bytes | memoryview) -> Any:
        text = bytes(data)
        if long_run not in text.translate(digits_only):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                pass  # the json module's reading, or its error
        return json.loads(text)

    return type(f"Orjson{loader.__name__}", (loader,), {"_loads": staticmethod(loads)})
