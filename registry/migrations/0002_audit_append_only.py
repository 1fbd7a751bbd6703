"""Make the audit log append-only in the database itself.

The ORM's refusal (AuditEvent.save) only stops honest mistakes; these triggers
stop raw SQL, other services and a shell too.
"""

from django.db import migrations

TABLE = "registry_auditevent"

POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION registry_audit_refuse() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit events are append-only: %% on {TABLE} refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER registry_audit_no_update BEFORE UPDATE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION registry_audit_refuse();
CREATE TRIGGER registry_audit_no_delete BEFORE DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION registry_audit_refuse();
CREATE TRIGGER registry_audit_no_truncate BEFORE TRUNCATE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION registry_audit_refuse();
"""
POSTGRES_DOWN = f"""
DROP TRIGGER IF EXISTS registry_audit_no_update ON {TABLE};
DROP TRIGGER IF EXISTS registry_audit_no_delete ON {TABLE};
DROP TRIGGER IF EXISTS registry_audit_no_truncate ON {TABLE};
DROP FUNCTION IF EXISTS registry_audit_refuse();
"""
SQLITE_UP = [
    f"""CREATE TRIGGER registry_audit_no_update BEFORE UPDATE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only: UPDATE on {TABLE} refused'); END;""",
    f"""CREATE TRIGGER registry_audit_no_delete BEFORE DELETE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only: DELETE on {TABLE} refused'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS registry_audit_no_update;",
    "DROP TRIGGER IF EXISTS registry_audit_no_delete;",
]


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP)
    elif vendor == "sqlite":
        for statement in SQLITE_UP:
            schema_editor.execute(statement)
    else:
        raise RuntimeError(f"No append-only triggers for database vendor {vendor!r}")


def uninstall(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN)
    elif vendor == "sqlite":
        for statement in SQLITE_DOWN:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("registry", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
