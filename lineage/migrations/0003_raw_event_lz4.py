"""Raw events over about 2 KB (those with columnLineage, SQL or large schemas)
are compressed by PostgreSQL on insert; lz4 costs a fraction of the default
pglz's CPU per event. Where the server lacks lz4, or on SQLite, nothing changes."""

from django.db import migrations

LZ4 = """
DO $$ BEGIN
    ALTER TABLE lineage_runevent ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
END $$;
"""


def use_lz4(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(LZ4)


def use_default(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE lineage_runevent ALTER COLUMN payload SET COMPRESSION DEFAULT")


class Migration(migrations.Migration):

    dependencies = [
        ("lineage", "0002_column_lineage"),
    ]

    operations = [migrations.RunPython(use_lz4, use_default)]
