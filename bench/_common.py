"""Helpers shared by the benchmarks: a scratch PostgreSQL database and a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def migrated_template() -> str | None:
    """BENCH_TEMPLATE_DATABASE: an already migrated database to copy instead of migrating.

    The CI run of every bench (tests/bench/test_benches_run.py) sets it: a copy takes a
    second where migrating from nothing takes many, once per bench.
    """
    return os.environ.get("BENCH_TEMPLATE_DATABASE") or None


def recreate_database(url: str) -> bool:
    """Drop and create the database named in `url`; True when it was copied from the
    migrated template (so it needs no migration)."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres", query=""))
    template = migrated_template()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return template is not None


def fresh_database(url: str) -> None:
    """Drop and create the database named in `url`, then migrate it."""
    if recreate_database(url):
        return
    env = django_env(url)
    subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0", "--skip-checks"], cwd=ROOT, env=env, check=True)


def django_env(url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DATABASE_URL": url, "DEBUG": "0", "SECRET_KEY": "bench-only-secret", "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SETTINGS_MODULE": "registry.settings", "LOG_LEVEL": "WARNING", "PYTHONPATH": f"{ROOT}:{ROOT / 'client'}",
    })
    env.update(extra)
    return env


def plain_url(url: str) -> str:
    """The URL without Django-only query options, for psycopg."""
    return urlunsplit(urlsplit(url)._replace(query=""))


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
