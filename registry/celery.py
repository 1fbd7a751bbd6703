"""The Celery app. Apps register their tasks in their own tasks.py; the beat
entries live in registry/settings.py (CELERY_BEAT_SCHEDULE), one block per app,
naming the tasks by string so the settings import no app."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
