"""Shared set-up for benchmark scripts: Django against a throwaway PostgreSQL database.

BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/registry_bench) is dropped and
re-created by `fresh_database()`; never point it at a database you care about.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
BENCH_DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry_bench")


def machine() -> dict:
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cores": os.cpu_count(), "memory_gib": round(mem_gib, 1), "python": platform.python_version()}


def fresh_database() -> None:
    """Drop and create BENCH_DATABASE_URL's database (a copy of BENCH_TEMPLATE_DATABASE,
    already migrated, when that is set: see bench/_common.py)."""
    import psycopg

    parts = urlsplit(BENCH_DATABASE_URL)
    name = parts.path.lstrip("/")
    admin_url = BENCH_DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    template = os.environ.get("BENCH_TEMPLATE_DATABASE")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


def setup_django(url: str | None = None, *, migrate: bool = True) -> None:
    """Django set up against `url` (BENCH_DATABASE_URL by default), migrated unless the
    database is a copy of the already migrated BENCH_TEMPLATE_DATABASE."""
    sys.path[:0] = [str(ROOT), str(ROOT / "client")]
    os.environ["DATABASE_URL"] = url or BENCH_DATABASE_URL
    os.environ.setdefault("SECRET_KEY", "bench")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
    os.environ["DJANGO_SETTINGS_MODULE"] = "registry.settings"
    import django

    django.setup()
    if migrate and not os.environ.get("BENCH_TEMPLATE_DATABASE"):
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
