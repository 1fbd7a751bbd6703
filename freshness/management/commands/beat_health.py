"""`manage.py beat_health`: exit 0 when Celery beat's freshness sweep ran recently, 1 otherwise.

For container health checks (compose.yaml's beat service): a beat process that is up
but no longer sweeping is as bad as one that is down."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from freshness.models import EvaluatorState


class Command(BaseCommand):
    help = "Exit 0 when the freshness sweep ran within four sweep intervals (at least a minute), else 1."

    def handle(self, *args, **options):
        allowed = max(4 * settings.FRESHNESS_SWEEP_INTERVAL, timedelta(minutes=1))
        state = EvaluatorState.objects.filter(pk=1).first()
        last = state.last_sweep_at if state else None
        if last is None:
            raise CommandError("The freshness sweep has never run: is Celery beat running, and a worker?")
        age = timezone.now() - last
        if age > allowed:
            raise CommandError(f"The last freshness sweep finished {int(age.total_seconds())} s ago "
                               f"(allowed: {int(allowed.total_seconds())} s): beat or the workers are down.")
        self.stdout.write(f"ok: the last freshness sweep finished {int(age.total_seconds())} s ago")
