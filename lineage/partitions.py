"""The raw events' monthly partitions on PostgreSQL (migration 0012 makes the table partitioned).

`lineage_runevent` is partitioned by RANGE on `event_time`: one partition per
calendar month in UTC, named `lineage_runevent_pYYYYMM`; before them, the
table as it was when it was partitioned (`lineage_runevent_legacy`, every
event time up to its bound), if it held rows; and `lineage_runevent_default`
for any time no partition covers (an event from long ago, or further ahead
than the partitions made so far).

Two things change the set, each under one advisory lock so that two beat
schedulers, or a beat and a retention run, never race:

1. `create_ahead` makes the partitions of this month and the next
   LINEAGE_EVENT_PARTITIONS_AHEAD months that no partition covers yet. Rows
   the default partition already holds for such a month are moved into it in
   the same transaction (PostgreSQL refuses a new partition whose rows sit in
   the default one).
2. `drop_before` drops the partitions that end at or before a cutoff: a
   catalog change, however many rows a month holds. Retention then deletes
   row by row only what the cutoff leaves in the month it cuts and in the
   default partition.

On SQLite there is one plain table and both are no-ops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from lineage.models import RunEvent

TABLE = RunEvent._meta.db_table
# One key for every change to the set of partitions (pg_advisory_xact_lock).
LOCK_KEY = 7_316_502_012
# A DROP waits for the readers of the table; past this, it gives up (the next run tries again)
# rather than hold every ingest behind it.
DROP_LOCK_TIMEOUT = "5s"

# The partitions and their bounds, as PostgreSQL prints them ("FOR VALUES FROM
# (MINVALUE) TO ('2027-01-01 00:00:00+00')", or "DEFAULT").
PARTITIONS_SQL = """
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = %s::regclass
ORDER BY c.relname
"""

# Making and dropping a partition takes the table's owner; the role the app
# serves as does it through two functions of the owner's (migration 0012):
# lineage_runevent_add_month(start) makes a month's partition apart, fills it
# with what the default partition held for that month, then attaches it;
# lineage_runevent_drop_partition(name) drops one of the table's partitions.
ADD_MONTH_SQL = "SELECT lineage_runevent_add_month(%s)"
DROP_PARTITION_SQL = "SELECT lineage_runevent_drop_partition(%s)"

_BOUND = re.compile(r"FROM \((MINVALUE|'[^']*')\) TO \((MAXVALUE|'[^']*')\)")


@dataclass(frozen=True)
class Partition:
    name: str
    start: datetime | None  # None: from the earliest time (MINVALUE)
    end: datetime | None  # None: to the latest (MAXVALUE); both None for the default partition
    is_default: bool = False

    def covers(self, start: datetime, end: datetime) -> bool:
        """Whether this partition holds any of [start, end)."""
        if self.is_default:
            return False
        return (self.start is None or self.start < end) and (self.end is None or start < self.end)


def is_partitioned() -> bool:
    return connection.vendor == "postgresql" and _relkind() == "p"


def _relkind() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [TABLE])
        row = cursor.fetchone()
    return row[0] if row else None


def partitions() -> list[Partition]:
    """The raw events' partitions, oldest first, the default last."""
    with connection.cursor() as cursor:
        cursor.execute(PARTITIONS_SQL, [TABLE])
        rows = cursor.fetchall()
    found = []
    for name, bound in rows:
        if bound == "DEFAULT":
            found.append(Partition(name, None, None, is_default=True))
            continue
        match = _BOUND.search(bound)
        if match is None:
            raise ValueError(f"{name}: a partition bound this module does not read: {bound}")
        found.append(Partition(name, _moment(match[1]), _moment(match[2])))
    return sorted(found, key=lambda p: (p.is_default, p.start or datetime.min.replace(tzinfo=UTC)))


def wholly_before(cutoff: datetime) -> list[Partition]:
    """The partitions drop_before(cutoff) would drop, oldest first."""
    if not is_partitioned():
        return []
    return [p for p in partitions() if not p.is_default and p.end is not None and p.end <= cutoff]


def rows_in(partition: Partition) -> tuple[int, bool]:
    """(rows, exact): the planner's count of the partition's rows where ANALYZE
    (autovacuum's, on every partition) has counted them, else an exact count. An
    exact count of a month at a million datasets is a scan of millions of rows,
    seconds, for a number only said in the output and the audit row."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)", [partition.name])
        row = cursor.fetchone()
        if row and row[0] >= 0:
            return row[0], False
    # Through the table (the serving role reads no partition by name): its bounds prune to this one.
    rows = RunEvent.objects.filter(event_time__lt=partition.end)
    if partition.start is not None:
        rows = rows.filter(event_time__gte=partition.start)
    return rows.count(), True


def _moment(value: str) -> datetime | None:
    if value in ("MINVALUE", "MAXVALUE"):
        return None
    return datetime.fromisoformat(value.strip("'")).astimezone(UTC)


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def add_months(start: datetime, months: int) -> datetime:
    index = start.year * 12 + start.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def month_name(start: datetime) -> str:
    return f"{TABLE}_p{start:%Y%m}"


def create_ahead(now: datetime | None = None, ahead: int | None = None) -> list[str]:
    """Make the partitions of the month of `now` and the `ahead` months after
    it (LINEAGE_EVENT_PARTITIONS_AHEAD) that no partition covers; returns the
    names made (none when another run made them first). One transaction."""
    if not is_partitioned():
        return []
    ahead = settings.LINEAGE_EVENT_PARTITIONS_AHEAD if ahead is None else ahead
    first = month_start(now or timezone.now())
    made = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
        existing = partitions()  # read under the lock: another beat's months are seen
        for offset in range(ahead + 1):
            start, end = add_months(first, offset), add_months(first, offset + 1)
            if any(p.covers(start, end) for p in existing):
                continue
            cursor.execute(ADD_MONTH_SQL, [start])
            made.append(cursor.fetchone()[0])
    return made


def drop_before(cutoff: datetime) -> list[str]:
    """Drop the partitions whose every event time is before `cutoff`; returns
    their names. One short transaction per partition, each under the lock."""
    if not is_partitioned():
        return []
    dropped = []
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
            old = [p for p in partitions() if not p.is_default and p.end is not None and p.end <= cutoff]
            if not old:
                return dropped
            cursor.execute(f"SET LOCAL lock_timeout = '{DROP_LOCK_TIMEOUT}'")
            # Dropping a partition detaches it as it goes.
            cursor.execute(DROP_PARTITION_SQL, [old[0].name])
        dropped.append(old[0].name)

