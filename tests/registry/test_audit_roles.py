"""The audit log is out of the serving role's reach (issue 15, point 9; issue 25, point 5).

On a real PostgreSQL: a database owned by an owner role, migrated as that role
with DATABASE_SERVING_ROLE set, then used as the serving role. The serving role
writes and reads audit rows, and nothing else: it cannot disable the triggers,
change, delete or truncate rows, nor back-date one, and a row it writes by hand is
found out by its seal (verify_audit_log). `check --deploy` warns when the app
connects as the owner."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from psycopg import errors, sql

pytestmark = pytest.mark.slow

ROOT = Path(settings.BASE_DIR)
HOST = os.environ.get("TEST_PG_HOST", "127.0.0.1")
SUPERUSER = "postgres"


def url(role: str, database: str) -> str:
    return f"postgres://{role}@{HOST}:5432/{database}"


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "TEST_DATABASE_URL"}}
    clean.update({"DEBUG": "0", "SECRET_KEY": "tests-only-" + "s3cr3t!" * 8, "DJANGO_SETTINGS_MODULE": "registry.settings",
                  "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}, **env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def roles():
    """(owner role, serving role, database): created for this module, dropped after it."""
    suffix = uuid.uuid4().hex[:8]
    owner, app, database = f"registry_owner_{suffix}", f"registry_app_{suffix}", f"registry_roles_{suffix}"
    with psycopg.connect(f"host={HOST} user={SUPERUSER} dbname=postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(owner)))
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(app)))
        admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(database), sql.Identifier(owner)))
        try:
            migrated = manage("migrate", "--noinput", "-v0", DATABASE_URL=url(owner, database), DATABASE_SERVING_ROLE=app)
            assert migrated.returncode == 0, migrated.stderr
            yield owner, app, database
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(app)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(owner)))


@pytest.fixture
def serving(roles):
    owner, app, database = roles
    with psycopg.connect(f"host={HOST} user={app} dbname={database}", autocommit=True) as connection:
        yield connection


INSERT_AUDIT_ROW = ("INSERT INTO registry_auditevent (actor_label, action, object_type, object_id, object_repr, at)"
                    " VALUES ('system', 'test.recorded', 'test', '1', 'x', now()) RETURNING id")


def test_the_serving_role_writes_and_reads_audit_rows(serving):
    [row_id] = serving.execute(INSERT_AUDIT_ROW).fetchone()
    assert serving.execute("SELECT action FROM registry_auditevent WHERE id = %s", [row_id]).fetchone() == ("test.recorded",)


@pytest.mark.parametrize("statement", [
    "ALTER TABLE registry_auditevent DISABLE TRIGGER USER",
    "ALTER TABLE registry_auditevent DISABLE TRIGGER ALL",
    "UPDATE registry_auditevent SET action = 'tampered'",
    "DELETE FROM registry_auditevent",
    "TRUNCATE registry_auditevent",
    "DROP TRIGGER registry_audit_no_update ON registry_auditevent",
    "ALTER TABLE registry_auditevent OWNER TO CURRENT_USER",
], ids=["disable-user-triggers", "disable-all-triggers", "update", "delete", "truncate", "drop-trigger", "take-ownership"])
def test_the_serving_role_cannot_reach_around_the_triggers(serving, statement):
    serving.execute(INSERT_AUDIT_ROW)
    with pytest.raises(errors.InsufficientPrivilege):
        serving.execute(statement)
    assert serving.execute("SELECT count(*) FROM registry_auditevent WHERE action = 'tampered'").fetchone() == (0,)
    assert serving.execute("SELECT count(*) FROM registry_auditevent").fetchone()[0] >= 1


def test_the_serving_role_cannot_become_the_owner(serving, roles):
    owner, _, _ = roles
    with pytest.raises(errors.InsufficientPrivilege):
        serving.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(owner)))


def test_the_serving_role_changes_the_other_tables(serving):
    [team_id] = serving.execute("INSERT INTO registry_team (name, slug, description, created_at)"
                                " VALUES ('Roles', 'roles', '', now()) RETURNING id").fetchone()
    serving.execute("UPDATE registry_team SET description = 'changed' WHERE id = %s", [team_id])
    serving.execute("DELETE FROM registry_team WHERE id = %s", [team_id])


def test_check_deploy_warns_when_the_app_connects_as_the_owner(roles):
    owner, app, database = roles
    as_owner = manage("check", "--deploy", DATABASE_URL=url(owner, database))
    assert "registry.W006" in as_owner.stderr
    assert f"connects to PostgreSQL as {owner}, which owns the audit table registry_auditevent" in as_owner.stderr

    as_app = manage("check", "--deploy", DATABASE_URL=url(app, database))
    assert "registry.W006" not in as_app.stderr + as_app.stdout


def test_the_serving_role_cannot_back_date_a_row(serving):
    with serving.transaction():
        [at] = serving.execute("INSERT INTO registry_auditevent (actor_label, action, object_type, object_id, object_repr,"
                               " at) VALUES ('gina', 'test.backdated', 'test', '1', 'x', '2020-01-01T00:00:00Z')"
                               " RETURNING at").fetchone()
        [now] = serving.execute("SELECT now()").fetchone()
    assert at == now  # the database's clock (the transaction's start), not the statement's


def test_verify_audit_log_names_the_rows_the_serving_role_wrote_by_hand(roles, serving):
    owner, app, database = roles
    as_app = {"DATABASE_URL": url(app, database)}
    recorded = manage("shell", "-c", "from registry.models import AuditEvent, Team; "
                      "AuditEvent.record(None, 'test.by_the_app', Team.objects.create(name='Sealed', slug='sealed'))",
                      **as_app)
    assert recorded.returncode == 0, recorded.stderr
    [user_id] = serving.execute("INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
                                " is_staff, is_active, date_joined) VALUES ('', true, 'gina', '', '', '', true, true, now())"
                                " RETURNING id").fetchone()
    [forged_id] = serving.execute(
        "INSERT INTO registry_auditevent (actor_id, actor_label, action, object_type, object_id, object_repr, at, seal)"
        " VALUES (%s, 'gina', 'change_request.rejected', 'contracts_app.changerequest', '7', 'x', now(), %s)"
        " RETURNING id", [user_id, "0" * 64]).fetchone()
    checked = manage("verify_audit_log", **as_app)
    assert checked.returncode == 1, checked.stderr
    assert f"#{forged_id} " in checked.stdout
    assert "gina change_request.rejected contracts_app.changerequest 7 (seal does not match)" in checked.stdout
    assert "test.by_the_app" not in checked.stdout


def test_the_serving_role_makes_and_drops_raw_event_partitions_only_through_the_owners_functions(roles, serving):
    owner, app, database = roles
    long_ago = "2020-03-01 00:00:00+00"
    with pytest.raises(errors.InsufficientPrivilege):
        serving.execute("CREATE TABLE lineage_runevent_p202003 PARTITION OF lineage_runevent"
                        " FOR VALUES FROM ('2020-03-01 00:00:00+00') TO ('2020-04-01 00:00:00+00')")
    assert serving.execute("SELECT lineage_runevent_add_month(%s)", [long_ago]).fetchone() == ("lineage_runevent_p202003",)
    serving.execute("INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name,"
                    " payload, received_at) VALUES ('c', gen_random_uuid(), 'COMPLETE', '2020-03-02', 'a', 'b', '{}', now())")
    with pytest.raises(errors.InsufficientPrivilege):
        serving.execute("DROP TABLE lineage_runevent_p202003")
    # Retention as the serving role drops the month (and beat's months ahead are made the same way).
    pruned = manage("prune_lineage_events", "--older-than", "30d", DATABASE_URL=url(app, database))
    assert pruned.returncode == 0, pruned.stderr
    assert "dropped partition lineage_runevent_p202003" in pruned.stdout
    assert serving.execute("SELECT count(*) FROM lineage_runevent").fetchone() == (0,)
    with pytest.raises(errors.RaiseException, match="is not a month of lineage_runevent"):
        serving.execute("SELECT lineage_runevent_drop_partition('registry_auditevent')")
