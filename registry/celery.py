"""The Celery app. Apps register their tasks in their own tasks.py and their
beat entries through CELERY_BEAT_SCHEDULE additions in their AppConfig.ready()."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
