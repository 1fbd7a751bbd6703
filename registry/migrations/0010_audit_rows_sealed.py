"""Audit rows carry the app's seal (registry.auditseal), and on PostgreSQL take their
time from the database: a trigger sets `at` to now() on every insert, so the serving
role cannot back-date a row. SQLite (the embedded demo) gets the column only: a
nullable column is added in place there, so the append-only triggers stay."""

from django.db import migrations, models

TABLE = "registry_auditevent"

POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION registry_audit_stamp() RETURNS trigger AS $$
BEGIN
    NEW.at := now();
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER registry_audit_stamp BEFORE INSERT ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION registry_audit_stamp();
"""
POSTGRES_DOWN = f"""
DROP TRIGGER IF EXISTS registry_audit_stamp ON {TABLE};
DROP FUNCTION IF EXISTS registry_audit_stamp();
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN)


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0009_identifiers_refuse_bidi_controls_and_combining_marks'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditevent',
            name='seal',
            field=models.CharField(blank=True, editable=False, null=True, help_text="The app's HMAC of the row (registry.auditseal); a row without a valid one was not written by the app.", max_length=64),
        ),
        migrations.RunPython(install, uninstall),
    ]
