"""Real Celery for the tests and the benchmarks.

`publishing_to` points this process's Celery app at a real broker for one
test, and back. Celery caches its connection and producer pools on the app:
changing `broker_url` alone leaves later publishes on the old broker, so the
pools are dropped on the way in and on the way out.

`start_celery` / `stop` run `celery -A registry ...` as a subprocess,
`database_url` is the URL of the database Django is connected to (for a
subprocess's DATABASE_URL) and `wait_for` polls until something holds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from django.db import connection
from django.test import override_settings

from registry.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[1]

T = TypeVar("T")


def _drop_pools() -> None:
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
        celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextmanager
def publishing_to(broker_url: str) -> Iterator[None]:
    saved = {key: celery_app.conf[key] for key in ("broker_url", "task_always_eager")}
    _drop_pools()
    celery_app.conf.update(broker_url=broker_url, task_always_eager=False)
    try:
        with override_settings(CELERY_TASK_ALWAYS_EAGER=False, CELERY_BROKER_URL=broker_url):
            yield
    finally:
        _drop_pools()
        celery_app.conf.update(saved)


def database_url() -> str:
    """postgres://user@host:port/name of the database Django is connected to (the test database in a test)."""
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def start_celery(args: list[str], log: Path, env: dict[str, str], ready: str, *,
                 attempts: int = 300) -> subprocess.Popen:
    """`celery -A registry *args`, its output in `log`, once `ready` shows in the log (every 0.1 s, `attempts` times).

    Raises RuntimeError with the log's tail if it exits or is not ready in time (and kills it).
    """
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "registry", *args, "--loglevel=INFO"],
                                   cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(attempts):
        if ready in log.read_text():
            return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    process.wait()
    raise RuntimeError(f"celery {args[0]} did not start:\n{log.read_text()[-3000:]}")


def stop(process: subprocess.Popen) -> None:
    """Terminate, and kill if still running after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for(predicate: Callable[[], T], timeout: float = 30.0, interval: float = 0.05) -> T | None:
    """The predicate's first truthy value, polling every `interval` s, or None after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return None
