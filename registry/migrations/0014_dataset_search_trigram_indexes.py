"""Dataset search through trigram indexes (PostgreSQL's pg_trgm).

The search (`DatasetQuerySet.matching`, an icontains on namespace, name and
description, which Django writes as `UPPER(col::text) LIKE UPPER('%…%')`) scanned
every dataset; a GIN trigram index on each of those expressions answers it from the
index. SQLite (the demo) keeps the plain scan: it has no trigram index, and its
worlds are small.

On a large existing table each CREATE INDEX takes a while and blocks writes to
registry_dataset meanwhile: docs/operations.md says how to build them CONCURRENTLY
first (this migration then finds them and does nothing).
"""

from django.db import migrations

COLUMNS = ("namespace", "name", "description")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for column in COLUMNS:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS dataset_{column}_trgm ON registry_dataset "
            f"USING gin (UPPER({column}::text) gin_trgm_ops)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for column in COLUMNS:
        schema_editor.execute(f"DROP INDEX IF EXISTS dataset_{column}_trgm")


class Migration(migrations.Migration):
    dependencies = [("registry", "0013_audit_time_from_database_for_the_serving_role")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
