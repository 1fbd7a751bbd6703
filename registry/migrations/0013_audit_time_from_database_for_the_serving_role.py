"""The database stamps an audit row's time when the role inserting it does not own the
audit table (the serving role): that role cannot back-date a row. The owner role, which
runs migrations and loads the demo (whose fictional timeline is dated), keeps the time the
app gives; it could rewrite the table anyway."""

from django.db import migrations

POSTGRES_UP = """
CREATE OR REPLACE FUNCTION registry_audit_stamp() RETURNS trigger AS $$
BEGIN
    IF NOT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        NEW.at := now();
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""
POSTGRES_DOWN = """
CREATE OR REPLACE FUNCTION registry_audit_stamp() RETURNS trigger AS $$
BEGIN
    NEW.at := now();
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN)


class Migration(migrations.Migration):

    dependencies = [("registry", "0012_merge_identifiers_and_audit_seal")]

    operations = [migrations.RunPython(install, uninstall)]
