"""The Celery app. Apps register their tasks in their own tasks.py (found by the
worker's autodiscovery; a process that only sends a task sends it by name); the beat
entries live in registry/settings.py (CELERY_BEAT_SCHEDULE), one block per app,
naming the tasks by string so the settings import no app. The one entry at a time of
day is added here, so that the settings do not import Celery."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def add_daily_entries(sender: Celery, **kwargs) -> None:
    from celery.schedules import crontab
    from django.conf import settings

    sender.conf.beat_schedule = {
        **sender.conf.beat_schedule,
        "inbox-digest": {"task": "change_requests.inbox_digest",
                         "schedule": crontab(hour=settings.INBOX_DIGEST_HOUR, minute=0)},
    }
