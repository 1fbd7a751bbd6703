"""Moving the test database back to an earlier migration and forward again, for
the tests of data migrations (transactional tests only: migrations commit)."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets) -> MigrationExecutor:
    """Migrate to `targets` ([(app, migration)]); an executor whose loader sees what was just applied."""
    MigrationExecutor(connection).migrate(targets)
    return MigrationExecutor(connection)


def latest() -> list[tuple[str, str]]:
    """The last migration of every app."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def migrate_to_latest() -> MigrationExecutor:
    return migrate(latest())
