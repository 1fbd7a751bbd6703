"""PostgreSQL backend for the test suite only.

Transactional tests end with a flush (TRUNCATE of every table), which the audit
log's append-only triggers rightly refuse. Between tests, and only here, the
flush lifts the audit table's triggers around its TRUNCATE. Production uses the
stock backend; tests that prove the refusals run with the triggers in place.
"""

from django.db.backends.postgresql import base, operations

AUDIT_TABLE = "registry_auditevent"


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        if statements and AUDIT_TABLE in tables:
            return [
                f"ALTER TABLE {AUDIT_TABLE} DISABLE TRIGGER USER;",
                *statements,
                f"ALTER TABLE {AUDIT_TABLE} ENABLE TRIGGER USER;",
            ]
        return statements


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
