"""The audit log is append-only in the database itself: raw SQL cannot change it.

PostgreSQL refuses UPDATE, DELETE and TRUNCATE; SQLite (the embedded demo)
refuses UPDATE and DELETE. Both sets of triggers come from the migrations.
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from registry.models import AuditEvent, RegistryError


@pytest.fixture
def audit_row(db):
    return AuditEvent.objects.create(actor_label="system", action="test.recorded", object_type="test", object_id="1", object_repr="x")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE registry_auditevent SET action = 'tampered'",
        "DELETE FROM registry_auditevent",
        "TRUNCATE registry_auditevent",
    ],
    ids=["update", "delete", "truncate"],
)
def test_postgresql_refuses_to_change_audit_rows(audit_row, statement):
    assert connection.vendor == "postgresql"
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert AuditEvent.objects.get(pk=audit_row.pk).action == "test.recorded"


def test_the_orm_refuses_to_save_an_existing_audit_row(audit_row):
    audit_row.action = "tampered"
    with pytest.raises(RegistryError, match="append-only"):
        audit_row.save()


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite database migrated by the project's own migrations, as `make demo` does."""
    path = tmp_path_factory.mktemp("sqlite") / "demo.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "registry.settings"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=settings.BASE_DIR, env=env, check=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO registry_auditevent (actor_label, action, object_type, object_id, object_repr, at)"
            " VALUES ('system', 'test.recorded', 'test', '1', 'x', '2026-01-01')"
        )
    return path


@pytest.mark.parametrize(
    "statement",
    ["UPDATE registry_auditevent SET action = 'tampered'", "DELETE FROM registry_auditevent"],
    ids=["update", "delete"],
)
def test_sqlite_refuses_to_change_audit_rows(migrated_sqlite, statement):
    db = sqlite3.connect(migrated_sqlite)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(statement)
        assert db.execute("SELECT action FROM registry_auditevent").fetchall() == [("test.recorded",)]
    finally:
        db.close()
