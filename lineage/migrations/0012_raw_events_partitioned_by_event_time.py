"""Raw events partitioned by month of event time (PostgreSQL).

On PostgreSQL the existing `lineage_runevent` becomes the partition of the
past, attached as it is (no rows copied): its rows stay where they are and
retention drops it whole once its newest month is older than the window. New
events go to monthly partitions (`lineage_runevent_pYYYYMM`), created ahead by
the beat (lineage.partitions), and to `lineage_runevent_default` when no month
holds them. An empty table is simply replaced.

Everything here is a catalog change except what a large table should have
prepared while the application ran (docs/operations.md, "Raw event
partitions"): the two unique indexes and the time index, built CONCURRENTLY,
and the bound CHECK added NOT VALID then validated. Whatever is missing is
built here, under the table's lock: right for a small table, a pause in
ingest for a large one.

On SQLite the table stays as it is, with the same unique key and index.
"""

import django.utils.timezone
from django.db import migrations, models
from django.db.migrations.operations.base import Operation

TABLE = "lineage_runevent"
LEGACY = "lineage_runevent_legacy"
# Names the preparation in docs/operations.md uses; found here when prepared.
PREPARED_PK = "lineage_runevent_legacy_pk"
PREPARED_CHECKSUM = "lineage_runevent_legacy_checksum"
PREPARED_TIME = "lineage_runevent_legacy_time"
PREPARED_BOUND = "lineage_runevent_legacy_bound"
MONTHS_AHEAD = 3

# The partitions change at run time (beat, retention), as the role the app serves
# as, which does not own the table (docs/operations.md, "Database roles"): these
# two functions run as their owner, the migrating role, and do only this.
FUNCTIONS = """
CREATE FUNCTION lineage_runevent_add_month(month_start timestamptz) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    start_utc timestamp := month_start AT TIME ZONE 'UTC';
    finish timestamptz := (start_utc + interval '1 month') AT TIME ZONE 'UTC';
    name text := 'lineage_runevent_p' || to_char(start_utc, 'YYYYMM');
BEGIN
    IF start_utc <> date_trunc('month', start_utc) THEN
        RAISE EXCEPTION 'a month starts on its first day at 00:00 UTC, not at %', month_start;
    END IF;
    -- Made apart, filled with what the default partition held for the month, then attached.
    EXECUTE format('CREATE TABLE %I (LIKE lineage_runevent INCLUDING DEFAULTS INCLUDING CONSTRAINTS '
                   'INCLUDING COMPRESSION)', name);
    EXECUTE format('WITH moved AS (DELETE FROM lineage_runevent_default WHERE event_time >= %L AND event_time < %L '
                   'RETURNING *) INSERT INTO %I SELECT * FROM moved', month_start, finish, name);
    EXECUTE format('ALTER TABLE lineage_runevent ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   name, month_start, finish);
    RETURN name;
END $$;

CREATE FUNCTION lineage_runevent_drop_partition(name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF name = 'lineage_runevent_default' OR NOT EXISTS (
            SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'lineage_runevent'::regclass AND c.relname = name) THEN
        RAISE EXCEPTION '% is not a month of lineage_runevent', name;
    END IF;
    EXECUTE format('DROP TABLE %I', name);
END $$;
"""


class NotOnPostgreSQL(Operation):
    """`operation` for the state and for other databases; on PostgreSQL the
    conversion below builds the same keys on the partitioned table."""

    reversible = True

    def __init__(self, operation):
        self.operation = operation

    def deconstruct(self):
        return (self.__class__.__name__, [self.operation], {})

    def state_forwards(self, app_label, state):
        self.operation.state_forwards(app_label, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            self.operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            self.operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"{self.operation.describe()} (PostgreSQL: by the partitioning)"


def _one(cursor, sql, params=()):
    cursor.execute(sql, params)
    row = cursor.fetchone()
    return row[0] if row else None


def _index_on(cursor, table, column):
    """The name of one of `table`'s indexes on `column` alone, if any."""
    return _one(cursor, "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                        "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] "
                        "WHERE x.indrelid = %s::regclass AND x.indnkeyatts = 1 AND a.attname = %s "
                        "ORDER BY i.relname LIMIT 1", [table, column])


def _literal(moment):
    return f"'{moment.isoformat()}'"


def _create_months(cursor, first, last):
    """Monthly partitions from the month starting `first` to the one holding `last`."""
    cursor.execute(
        "SELECT m AT TIME ZONE 'UTC' FROM generate_series("
        "date_trunc('month', %s::timestamptz AT TIME ZONE 'UTC'), date_trunc('month', %s::timestamptz AT TIME ZONE 'UTC'),"
        " interval '1 month') AS m", [first, last])
    for (start,) in cursor.fetchall():
        cursor.execute("SELECT lineage_runevent_add_month(%s)", [start])


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        # Ingest waits from here to the commit; with the preparation done, that is a moment.
        cursor.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        next_id = _one(cursor, f"SELECT COALESCE(max(id), 0) + 1 FROM {TABLE}")
        has_rows = _one(cursor, f"SELECT EXISTS (SELECT 1 FROM {TABLE})")
        run_uuid_index = _index_on(cursor, TABLE, "run_uuid")
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {LEGACY}")
        cursor.execute(f"ALTER TABLE {LEGACY} RENAME CONSTRAINT {TABLE}_pkey TO {LEGACY}_id_pkey")
        # The id's sequence moves to the new table (a partitioned table has no identity column before PostgreSQL 17).
        cursor.execute(f"ALTER TABLE {LEGACY} ALTER COLUMN id DROP IDENTITY IF EXISTS")
        cursor.execute(f"ALTER TABLE {LEGACY} ALTER COLUMN id DROP DEFAULT")
        cursor.execute(f"DROP SEQUENCE IF EXISTS {TABLE}_id_seq")
        cursor.execute(f"ALTER INDEX {run_uuid_index} RENAME TO {LEGACY}_run_uuid")
        cursor.execute(f"CREATE SEQUENCE {TABLE}_id_seq START WITH {next_id}")
        cursor.execute(f"CREATE TABLE {TABLE} (LIKE {LEGACY} INCLUDING DEFAULTS INCLUDING COMPRESSION) "
                       "PARTITION BY RANGE (event_time)")
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{TABLE}_id_seq')")
        cursor.execute(f"ALTER SEQUENCE {TABLE}_id_seq OWNED BY {TABLE}.id")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, event_time)")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_checksum_time_unique UNIQUE (checksum, event_time)")
        cursor.execute(f"CREATE INDEX {run_uuid_index} ON {TABLE} (run_uuid)")
        cursor.execute(f"CREATE INDEX {TABLE}_time_idx ON {TABLE} (event_time, id)")
        now = _one(cursor, "SELECT now()")
        if has_rows:
            bound = _attach_legacy(cursor, now)
        else:
            cursor.execute(f"DROP TABLE {LEGACY}")
            bound = now
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")
        cursor.execute(FUNCTIONS)
        _create_months(cursor, bound, _one(cursor, f"SELECT %s::timestamptz + interval '{MONTHS_AHEAD} months'", [now]))


def _attach_legacy(cursor, now):
    """Attach the old table as the partition of everything before its bound
    (the first month after its newest event and after now); returns the bound."""
    bound = _one(cursor, "SELECT substring(pg_get_constraintdef(oid) FROM '''([^'']+)''')::timestamptz "
                         "FROM pg_constraint WHERE conname = %s AND conrelid = %s::regclass", [PREPARED_BOUND, LEGACY])
    if bound is None:
        newest = _one(cursor, f"SELECT max(event_time) FROM {LEGACY}")
        bound = _one(cursor, "SELECT date_trunc('month', greatest(%s, %s) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' "
                             "+ interval '1 month'", [newest, now])
        cursor.execute(f"ALTER TABLE {LEGACY} ADD CONSTRAINT {PREPARED_BOUND} CHECK (event_time < {_literal(bound)})")
    else:
        # Validated already when prepared; a no-op then, a scan if it was left NOT VALID.
        cursor.execute(f"ALTER TABLE {LEGACY} VALIDATE CONSTRAINT {PREPARED_BOUND}")
    # The partition's own unique keys must be constraints matching the parent's.
    for name, columns in ((PREPARED_PK, "id, event_time"), (PREPARED_CHECKSUM, "checksum, event_time")):
        if _one(cursor, "SELECT to_regclass(%s)", [name]) is None:
            cursor.execute(f"CREATE UNIQUE INDEX {name} ON {LEGACY} ({columns})")
        cursor.execute(f"ALTER TABLE {LEGACY} ADD CONSTRAINT {name} UNIQUE USING INDEX {name}")
    if _one(cursor, "SELECT to_regclass(%s)", [PREPARED_TIME]) is None:
        cursor.execute(f"CREATE INDEX {PREPARED_TIME} ON {LEGACY} (event_time, id)")
    # The old keys: the id alone, the checksum alone, the received time (nothing reads by it now).
    cursor.execute(f"ALTER TABLE {LEGACY} DROP CONSTRAINT {LEGACY}_id_pkey")
    for column in ("checksum", "received_at"):
        for (name,) in _constraints_on(cursor, column):
            cursor.execute(f"ALTER TABLE {LEGACY} DROP CONSTRAINT {name}")
        while (index := _index_on(cursor, LEGACY, column)) is not None:
            cursor.execute(f"DROP INDEX {index}")
    cursor.execute(f"ALTER TABLE {TABLE} ATTACH PARTITION {LEGACY} FOR VALUES FROM (MINVALUE) TO ({_literal(bound)})")
    cursor.execute(f"ALTER TABLE {LEGACY} DROP CONSTRAINT {PREPARED_BOUND}")
    return bound


def _constraints_on(cursor, column):
    cursor.execute(
        "SELECT c.conname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey) "
        "WHERE c.conrelid = %s::regclass AND c.contype = 'u' AND a.attname = %s AND cardinality(c.conkey) = 1",
        [LEGACY, column])
    return cursor.fetchall()


def unpartition(apps, schema_editor):
    """Back to one table: every row copied into a plain table with the old keys."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        cursor.execute("DROP FUNCTION lineage_runevent_add_month(timestamptz), lineage_runevent_drop_partition(text)")
        next_id = _one(cursor, f"SELECT COALESCE(max(id), 0) + 1 FROM {TABLE}")
        run_uuid_index = _index_on(cursor, TABLE, "run_uuid")
        cursor.execute(f"CREATE TABLE {TABLE}_plain (LIKE {TABLE} INCLUDING COMPRESSION)")
        cursor.execute(f"INSERT INTO {TABLE}_plain SELECT * FROM {TABLE}")
        cursor.execute(f"DROP TABLE {TABLE}")
        cursor.execute(f"ALTER TABLE {TABLE}_plain RENAME TO {TABLE}")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id)")
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (START WITH {next_id})")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_checksum_key UNIQUE (checksum)")
        cursor.execute(f"CREATE INDEX {run_uuid_index} ON {TABLE} (run_uuid)")
        cursor.execute(f"CREATE INDEX {TABLE}_received_at_idx ON {TABLE} (received_at)")


class Migration(migrations.Migration):

    dependencies = [
        ('lineage', '0011_field_edges_from_quality_checks'),
        ('registry', '0015_merge_quality_reads_and_search_indexes'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='runevent',
            options={'ordering': ['-event_time', '-id']},
        ),
        NotOnPostgreSQL(migrations.AddConstraint(
            model_name='runevent',
            constraint=models.UniqueConstraint(fields=('checksum', 'event_time'), name='lineage_runevent_checksum_time_unique', violation_error_message='This event is already recorded.'),
        )),
        NotOnPostgreSQL(migrations.AlterField(
            model_name='runevent',
            name='checksum',
            field=models.CharField(help_text='SHA-256 of the canonical JSON: a retry stores nothing new.', max_length=64),
        )),
        NotOnPostgreSQL(migrations.AlterField(
            model_name='runevent',
            name='received_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        )),
        NotOnPostgreSQL(migrations.AddIndex(
            model_name='runevent',
            index=models.Index(fields=['event_time', 'id'], name='lineage_runevent_time_idx'),
        )),
        migrations.RunPython(partition, unpartition),
    ]
