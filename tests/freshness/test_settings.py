"""The freshness settings: the beat entry, and loud failures on bad values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


def test_beat_sweeps_for_freshness_every_interval_and_drops_a_sweep_that_waited_too_long():
    entry = settings.CELERY_BEAT_SCHEDULE["freshness-sweep"]
    assert entry["task"] == "freshness.sweep"
    assert entry["schedule"] == settings.FRESHNESS_SWEEP_INTERVAL.total_seconds() == 15.0
    assert entry["options"]["expires"] == 15.0


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("FRESHNESS_SWEEP_INTERVAL", "0.5s", "FRESHNESS_SWEEP_INTERVAL must be at least 1s"),
    ("FRESHNESS_SWEEP_INTERVAL", "often", "'often' is not a duration"),
    ("FRESHNESS_ETA_HORIZON", "-1m", "is negative"),
    ("FRESHNESS_SWEEP_BATCH", "0", "FRESHNESS_SWEEP_BATCH='0' must be at least 1"),
])
def test_a_bad_freshness_setting_stops_start_up_naming_it(variable, value, message):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": "sqlite:///var/unused.sqlite3", variable: value,
           "DJANGO_SETTINGS_MODULE": "registry.settings"}
    result = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert message in result.stderr
