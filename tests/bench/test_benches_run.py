"""Every script under bench/ still runs, at its smoke size.

A figure in docs/benchmarks.md is only worth something while the script that printed it
runs: a migration that adds a NOT NULL column breaks a bench's COPY, a renamed function
breaks its import. Each script is found by glob (a new bench is included without a line
here; private modules, `bench/_*.py`, are not scripts), must offer `--smoke`, and must
exit 0 with it against a scratch copy of this run's test database. The figures are not
judged: on a shared CI machine they mean nothing.

The benches start together, a few at a time (most of a smoke run is waiting: a server
coming up, a Celery beat, a database being copied), so the file costs about as long as
its slowest few benches rather than their sum.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.db import connection, connections

ROOT = Path(__file__).resolve().parents[2]
BENCHES = sorted(path for path in (ROOT / "bench").glob("*.py") if not path.name.startswith("_"))
# Seconds one bench may take at its smoke size before it counts as broken (a hang, a
# smoke size that grew): generous for a busy machine, far below a real run.
TIMEOUT_S = 600
AT_ONCE = min(4, os.cpu_count() or 1)

# django_db: pytest-django sets up the test database (the template) only for a module that asks for it.
pytestmark = [pytest.mark.bench, pytest.mark.django_db]


def has_smoke_mode(script: Path) -> bool:
    return "--smoke" in script.read_text()


def _server_url(settings: dict) -> str:
    user = quote(settings.get("USER") or "postgres")
    password = f":{quote(settings['PASSWORD'])}" if settings.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}"


def _run(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess | str:
    """The finished process, or what it printed before it ran out of time."""
    with tempfile.TemporaryDirectory() as cwd:
        try:
            return subprocess.run([sys.executable, str(script), "--smoke"], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as expired:
            return f"ran longer than {TIMEOUT_S} s:\n{_tail(expired.stdout, expired.stderr)}"


def selected(session: pytest.Session) -> set[str]:
    """The bench scripts whose test this session runs (`-k preflight` runs one): only those start."""
    return {item.callspec.params["script"].name for item in session.items
            if hasattr(item, "callspec") and "script" in item.callspec.params}


@pytest.fixture(scope="module")
def smoke_runs(request, django_db_setup, django_db_blocker):
    """Every selected bench with a smoke mode, started in a pool: {script name: Future}.

    Each bench gets a database URL of its own (it drops and re-creates it) and
    BENCH_TEMPLATE_DATABASE, a migrated copy of the test database, to copy instead of
    migrating from nothing (seconds saved per bench).
    """
    with django_db_blocker.unblock():
        settings = connection.settings_dict
        test_name = settings["NAME"]
        connections.close_all()  # CREATE DATABASE … TEMPLATE needs the source to have no session
    server = _server_url(settings)
    template = f"{test_name}_benchtpl"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{template}" TEMPLATE "{test_name}"')
    base = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    base.update({"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}", "BENCH_TEMPLATE_DATABASE": template})
    futures: dict[str, Future] = {}
    with ThreadPoolExecutor(AT_ONCE) as pool:
        wanted = selected(request.session)
        for index, script in enumerate(s for s in BENCHES if has_smoke_mode(s) and s.name in wanted):
            env = {**base, "BENCH_DATABASE_URL": f"{server}/{test_name}_{script.stem}_bench",
                   # A Redis database apart from the suite's, for the benches that start Celery.
                   "BENCH_BROKER_URL": os.environ.get("BENCH_BROKER_URL", f"redis://127.0.0.1:6379/{12 + index % 4}")}
            futures[script.name] = pool.submit(_run, script, env)
        yield futures
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        names = admin.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{test_name}\\_%bench%"]).fetchall()
        for (name,) in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_there_are_benches_to_run():
    assert len(BENCHES) >= 10, [path.name for path in BENCHES]


@pytest.mark.parametrize("script", BENCHES, ids=[path.stem for path in BENCHES])
def test_the_bench_runs_at_its_smoke_size(script: Path, smoke_runs):
    assert has_smoke_mode(script), (
        f"bench/{script.name} has no --smoke mode: give it one that runs in seconds, so CI can run it")
    done = smoke_runs[script.name].result()
    assert not isinstance(done, str), f"bench/{script.name} --smoke {done}"
    assert done.returncode == 0, f"bench/{script.name} --smoke exited {done.returncode}:\n{_tail(done.stdout, done.stderr)}"


def _tail(stdout, stderr) -> str:
    def text(value) -> str:
        return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")

    return f"--- stdout (end) ---\n{text(stdout)[-3000:]}\n--- stderr (end) ---\n{text(stderr)[-5000:]}"
