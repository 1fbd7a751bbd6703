"""The embedded demo: no broker, the evaluator runs in-process with the same evaluation code."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from freshness import runner
from freshness.constants import FreshnessStatus, TransitionSource
from freshness.evaluation import record_write, set_slo
from freshness.models import DatasetFreshness, EvaluatorState, FreshnessTransition
from tests.freshness.conftest import HOUR, T0

ROOT = Path(__file__).resolve().parents[2]


def test_evaluate_freshness_runs_one_pass_and_says_what_changed(dataset, owner, clock):
    set_slo(dataset, max_age=HOUR, by=owner)
    record_write(dataset, at=T0, row_count=1)
    clock.move_to(T0 + 2 * HOUR)
    out = StringIO()
    call_command("evaluate_freshness", stdout=out)
    assert out.getvalue().strip() == "Evaluated 1 due dataset(s): 1 transition(s) (1 stale)."
    assert EvaluatorState.objects.get().last_sweep_at == T0 + 2 * HOUR


def test_without_a_broker_no_deadline_task_is_published(dataset, owner, clock, settings):
    assert settings.CELERY_TASK_ALWAYS_EAGER  # the test settings have no broker, like the demo
    set_slo(dataset, max_age=timedelta(seconds=30), by=owner)
    record_write(dataset, at=T0, row_count=1)
    assert DatasetFreshness.objects.get(dataset=dataset).task_eta is None


def test_the_in_process_evaluator_sleeps_until_the_next_deadline(dataset, owner, clock):
    set_slo(dataset, max_age=timedelta(seconds=40), by=owner)
    record_write(dataset, at=T0, row_count=1)
    clock.move_to(T0 + timedelta(seconds=30))
    assert runner.seconds_until_next_check(interval=15.0) == 10.0
    assert runner.seconds_until_next_check(interval=5.0) == 5.0


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_in_process_evaluator_records_a_breach_at_its_deadline(dataset, owner):
    stop = threading.Event()

    def evaluate_in_background() -> None:
        try:
            runner.run_forever(stop)
        finally:
            connection.close()

    thread = threading.Thread(target=evaluate_in_background, daemon=True)
    thread.start()
    try:
        set_slo(dataset, max_age=timedelta(seconds=1), by=owner)
        written = timezone.now()
        record_write(dataset, at=written, row_count=1)  # wakes the evaluator: a nearer deadline
        # About a second on an idle machine; a loaded one (a shared CI host) may take several.
        give_up = time.monotonic() + 30
        while time.monotonic() < give_up:
            if FreshnessTransition.objects.filter(dataset=dataset, to_status=FreshnessStatus.STALE).exists():
                break
            time.sleep(0.05)
    finally:
        stop.set()
        runner.wake()
        thread.join(timeout=10)
    breach = FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE)
    assert breach.source == TransitionSource.EVALUATOR
    assert breach.due_at == written + timedelta(seconds=1)


@pytest.mark.slow
def test_the_sqlite_demo_migrates_and_evaluates_with_the_same_code(tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "registry.settings", "CELERY_BROKER_URL": ""}
    env.pop("TEST_DATABASE_URL", None)
    script = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from freshness.evaluation import record_write, set_slo
from freshness.models import FreshnessTransition
from freshness.scheduling import sweep
from registry.models import AuditEvent, Dataset
admin = get_user_model().objects.create_superuser("gina", "g@example.com", "pw")
d = Dataset.objects.create(namespace="demo://", name="orders")
now = timezone.now()
set_slo(d, max_age=timedelta(hours=1), warn_after=timedelta(minutes=30), by=admin, now=now - timedelta(hours=3))
record_write(d, at=now - timedelta(hours=2), row_count=5, now=now - timedelta(hours=2))
result = sweep(now)
print(result.transitions, list(FreshnessTransition.objects.filter(dataset=d).values_list("to_status", flat=True)),
      AuditEvent.objects.filter(action="freshness.transition").count())
"""
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "1 ['stale', 'fresh', 'unknown'] 3"


def test_beat_health_says_whether_the_sweep_ran_recently(db, clock):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="never run"):
        call_command("beat_health")
    EvaluatorState.objects.update_or_create(pk=1, defaults={"last_sweep_at": T0 - timedelta(seconds=20)})
    call_command("beat_health")
    EvaluatorState.objects.filter(pk=1).update(last_sweep_at=T0 - timedelta(minutes=5))
    with pytest.raises(CommandError, match="beat or the workers are down"):
        call_command("beat_health")
