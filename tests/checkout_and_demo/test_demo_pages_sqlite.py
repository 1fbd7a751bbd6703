"""The embedded demo (SQLite, as `make demo` serves it): every main page answers for each
demo person, without a PostgreSQL-only lookup or aggregate on the way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
from contracts_app.models import Contract
from lineage.models import Job
from registry.models import Dataset, Team

client, failed, seen = Client(), [], 0
for who in ("alice", "carol", "gina"):
    client.force_login(get_user_model().objects.get(username=who))
    paths = ["/", "/inbox/", "/freshness/", "/contracts/", "/change-requests/", "/lineage/jobs/"]
    paths += [f"/inbox/teams/{t.slug}/" for t in Team.objects.all()]
    paths += [f"/lineage/jobs/{j.pk}/" for j in Job.objects.all()]
    paths += [d.get_absolute_url() for d in Dataset.objects.all()]
    paths += [c.get_absolute_url() for c in Contract.objects.all()]
    for path in paths:
        seen += 1
        status = client.get(path).status_code
        if status >= 500:
            failed.append([who, path, status])
print(json.dumps({"seen": seen, "failed": failed}))
"""


@pytest.mark.slow
def test_every_main_page_of_the_sqlite_demo_answers_for_each_demo_person(tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}", "ENV_FILE": "",
           "CONTRACT_STORE": str(tmp_path / "store"), "DJANGO_SETTINGS_MODULE": "registry.settings",
           "CELERY_BROKER_URL": ""}
    env.pop("TEST_DATABASE_URL", None)
    for command in (["migrate", "-v0"], ["load_demo"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["seen"] > 50 and result["failed"] == []
