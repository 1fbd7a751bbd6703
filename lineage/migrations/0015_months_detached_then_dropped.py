"""Retention detaches a month in one transaction and drops it in the next (PostgreSQL).

Dropping a partition holds an ACCESS EXCLUSIVE lock on `lineage_runevent` until
its commit, and the commit is where the month's files are removed: about a second
for a month of 3.3 million events (3 GB) on a quiet machine, more on a slower
disk, and every ingest waits behind it. Detached first, the table is locked for a
catalog change only; the drop then removes files nobody reads.

Two functions of the table's owner, as lineage_runevent_drop_partition (0012),
for the role the app serves as: one detaches a month (or the legacy partition),
the other drops a table that such a detach left, and nothing else.
"""

from django.db import migrations

FUNCTIONS = """
CREATE FUNCTION lineage_runevent_detach_partition(name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF name = 'lineage_runevent_default' OR NOT EXISTS (
            SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'lineage_runevent'::regclass AND c.relname = name) THEN
        RAISE EXCEPTION '% is not a month of lineage_runevent', name;
    END IF;
    EXECUTE format('ALTER TABLE lineage_runevent DETACH PARTITION %I', name);
END $$;

CREATE FUNCTION lineage_runevent_drop_detached(name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF name !~ '^lineage_runevent_(p[0-9]{6}|legacy)$' OR NOT EXISTS (
            SELECT 1 FROM pg_class c
             WHERE c.relname = name AND c.relnamespace = current_schema()::regnamespace
               AND c.relkind = 'r' AND NOT c.relispartition AND c.relowner = current_user::regrole) THEN
        RAISE EXCEPTION '% is not a detached month of lineage_runevent', name;
    END IF;
    EXECUTE format('DROP TABLE %I', name);
END $$;
"""


def create_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(FUNCTIONS)


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("DROP FUNCTION lineage_runevent_detach_partition(text), lineage_runevent_drop_detached(text)")


class Migration(migrations.Migration):

    dependencies = [
        ('lineage', '0014_runs_by_token_team'),
    ]

    operations = [
        migrations.RunPython(create_functions, drop_functions),
    ]
