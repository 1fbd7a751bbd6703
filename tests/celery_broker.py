"""Point this process's Celery app at a real broker for one test, and back.

Celery caches its connection and producer pools on the app: changing
`broker_url` alone leaves later publishes on the old broker, so the pools are
dropped on the way in and on the way out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.test import override_settings

from registry.celery import app as celery_app


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
