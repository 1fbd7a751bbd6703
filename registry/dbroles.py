"""Two database roles on PostgreSQL: one owns the tables, one serves.

The audit log's triggers refuse UPDATE, DELETE and TRUNCATE, but a table's owner
can `ALTER TABLE … DISABLE TRIGGER` and then rewrite it. So the role the web
app, the worker and beat connect as must not own the audit table:

- migrations run as the owner role (its DATABASE_URL in the migrate step) with
  DATABASE_SERVING_ROLE naming the serving role; after every `migrate`,
  `grant_serving_role` gives that role what serving needs: SELECT, INSERT,
  UPDATE, DELETE on every table and the sequences, and on the audit table
  SELECT and INSERT only;
- `serving_role_problem` says when the role connected now could reach around
  the triggers (it owns the audit table, is a member of its owner, or is a
  superuser); `check --deploy` warns with it (registry.W006).

docs/operations.md, "Database roles", has the SQL an operator runs once.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

log = logging.getLogger(__name__)

AUDIT_TABLE = "registry_auditevent"


def grant_serving_role(connection, role: str) -> None:
    """Grant `role` what serving needs on every table in the current schema, and
    only SELECT and INSERT on the audit table. Run as the owner of the tables."""
    from psycopg import sql

    quoted = sql.Identifier(role)
    statements = [
        sql.SQL("GRANT USAGE ON SCHEMA {} TO {}"),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}"),
        sql.SQL("GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {} TO {}"),
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = sql.Identifier(cursor.fetchone()[0])
        for statement in statements:
            cursor.execute(statement.format(schema, quoted))
        cursor.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(sql.Identifier(AUDIT_TABLE), quoted))
        cursor.execute(sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(sql.Identifier(AUDIT_TABLE), quoted))
    log.info("granted role %s SELECT/INSERT on %s and DML on the other tables", role, AUDIT_TABLE)


def serving_role_problem(connection) -> str:
    """Why the role connected now could rewrite the audit log, or "" (also "" when the
    database is not PostgreSQL, cannot be reached, or has no audit table yet)."""
    if connection.vendor != "postgresql":
        return ""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_user, r.rolsuper, pg_get_userbyid(c.relowner), pg_has_role(current_user, c.relowner, 'USAGE')"
                " FROM pg_class c JOIN pg_roles r ON r.rolname = current_user"
                " WHERE c.oid = to_regclass(%s)", [AUDIT_TABLE])
            row = cursor.fetchone()
    except DatabaseError as exc:
        log.debug("could not check the database role: %s", exc)
        return ""
    if row is None:
        return ""
    user, superuser, owner, acts_as_owner = row
    if superuser:
        return f"The app connects to PostgreSQL as {user}, a superuser"
    if acts_as_owner:
        return (f"The app connects to PostgreSQL as {user}, which owns the audit table {AUDIT_TABLE}"
                + ("" if owner == user else f" (through role {owner})"))
    return ""
