"""The Dockerfile's server command serves the app: pages, the lineage ingest
(through the hot path) and the collected static files."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lineage.models import RunEvent
from tests.celery_broker import database_url
from tests.servers import free_port

from .conftest import run_event

ROOT = Path(__file__).resolve().parents[2]


def dockerfile_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return json.loads(re.search(r"^CMD (\[.*\])$", text, re.MULTILINE).group(1))


def with_option(command: list[str], option: str, value: str) -> list[str]:
    at = command.index(option)
    return [*command[:at + 1], value, *command[at + 2:]]


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body, headers or {})
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


@pytest.fixture
def production_server(tmp_path, db):
    static = tmp_path / "static"
    (static / "css").mkdir(parents=True)
    (static / "css" / "site.css").write_text("body { margin: 0 }")
    port = free_port()
    command = dockerfile_command()
    assert command[0] == "granian"
    command = with_option(with_option(with_option(command, "--host", "127.0.0.1"), "--port", str(port)),
                          "--static-path-mount", str(static))
    command = with_option(command, "--workers", "1")
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "tests-only-secret", "ALLOWED_HOSTS": "127.0.0.1",
           "DATABASE_URL": database_url(),
           "DJANGO_SETTINGS_MODULE": "registry.settings"}
    server = subprocess.Popen([sys.executable, "-m", *command], cwd=ROOT, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        try:
            if request(port, "GET", "/healthz")[0] == 200:
                break
        except OSError:
            pass
        if server.poll() is not None or time.time() > deadline:
            server.kill()
            pytest.fail(f"the server did not start: {server.stderr.read().decode()[-2000:]}")
        time.sleep(0.2)
    yield port
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_dockerfile_command_serves_pages_the_ingest_and_static_files(production_server, lineage_secret):
    port = production_server
    event = run_event("START", inputs=["raw.orders"], outputs=["mart.orders"])
    status, headers, body = request(port, "POST", "/api/v1/lineage", json.dumps(event).encode(),
                                    {"Content-Type": "application/json", "Authorization": f"Bearer {lineage_secret}"})
    assert status == 201, body
    assert json.loads(body)["status"] == "stored" and headers["content-length"] == str(len(body))
    assert RunEvent.objects.filter(run_uuid=event["run"]["runId"]).exists()

    assert request(port, "GET", "/login/")[0] == 200
    status, _, css = request(port, "GET", "/static/css/site.css")
    assert (status, css) == (200, b"body { margin: 0 }")
