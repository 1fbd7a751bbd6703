"""Several replicas of each role against one database and one Redis: the fleet
the replica test (tests/replicas/test_replicas.py) and bench/replicas.py run.

- `Fleet` starts `celery worker` processes (solo pool: one process each),
  `celery beat` processes (each its own schedule file: every beat sends every
  periodic task, as two schedulers deployed by mistake, or during a rolling
  deploy, would) and web processes (the Dockerfile's granian command, one
  worker each), all with the same environment;
- `Receiver` is the channel: a loopback webhook receiver that counts the
  deliveries of each outbox row (by its table and `X-Registry-Delivery`);
- `post_events` sends OpenLineage events through a web process.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.celery_broker import ROOT, start_celery, stop
from tests.servers import free_port


def dockerfile_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return json.loads(re.search(r"^CMD (\[.*\])$", text, re.MULTILINE).group(1))


def _with_option(command: list[str], option: str, value: str) -> list[str]:
    at = command.index(option)
    return [*command[:at + 1], value, *command[at + 2:]]


class Receiver:
    """A webhook receiver on a free loopback port. `delivered[(kind, id)]` counts the
    accepted deliveries of each outbox row: kind is the payload's event prefix
    (change_request, incident), id its X-Registry-Delivery."""

    def __init__(self) -> None:
        self.delivered: Counter[tuple[str, int]] = Counter()
        self.events: Counter[str] = Counter()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                event = str(body.get("event", ""))
                with receiver.lock:
                    receiver.delivered[(event.split(".")[0], int(self.headers["X-Registry-Delivery"]))] += 1
                    receiver.events[event] += 1
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/registry"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Fleet:
    """`workers` celery workers, `beats` celery beats and `webs` granian servers with `env`;
    their logs in `logs`. A context manager: everything is stopped on the way out."""

    def __init__(self, env: dict[str, str], logs: Path, *, workers: int = 3, beats: int = 2, webs: int = 2,
                 static: Path | None = None) -> None:
        self.env, self.logs = env, logs
        self.counts = {"worker": workers, "beat": beats, "web": webs}
        self.static = static or logs / "static"
        self.workers: list[subprocess.Popen] = []
        self.beats: list[subprocess.Popen] = []
        self.webs: list[subprocess.Popen] = []
        self.web_ports: list[int] = []

    def __enter__(self) -> Fleet:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.static.mkdir(parents=True, exist_ok=True)
        for i in range(self.counts["web"]):
            self._start_web(i)
        for i in range(self.counts["worker"]):
            self.workers.append(start_celery(
                ["worker", "--pool", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
                 "-n", f"replica{i}@%h"], self.logs / f"worker{i}.log", self.env, "ready", attempts=1200))
        for i in range(self.counts["beat"]):
            self.beats.append(start_celery(
                ["beat", "-s", str(self.logs / f"beat{i}-schedule")], self.logs / f"beat{i}.log", self.env,
                "Starting...", attempts=1200))
        for port, process in zip(self.web_ports, self.webs, strict=True):
            self._wait_for_web(port, process)

    def _start_web(self, i: int) -> None:
        port = free_port()
        command = dockerfile_command()
        for option, value in (("--host", "127.0.0.1"), ("--port", str(port)), ("--workers", "1"),
                              ("--static-path-mount", str(self.static))):
            command = _with_option(command, option, value)
        log = (self.logs / f"web{i}.log").open("w")
        self.webs.append(subprocess.Popen([sys.executable, "-m", *command], cwd=ROOT, env=self.env,
                                          start_new_session=True, stdout=log, stderr=subprocess.STDOUT))
        log.close()
        self.web_ports.append(port)

    def _wait_for_web(self, port: int, process: subprocess.Popen) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if process.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"web process on port {port} did not start:\n{self.log_tail('web')}")

    def log_tail(self, role: str, chars: int = 3000) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-chars:]}"
                         for p in sorted(self.logs.glob(f"{role}*.log")))

    def stop(self) -> None:
        for process in self.webs:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.beats, *self.workers]:
            stop(process)
        for process in self.webs:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.webs, self.beats, self.workers = [], [], []


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
            timeout: float = 60) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body, headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def post_event(port: int, secret: str, event: dict) -> None:
    """POST one OpenLineage event to a web process; RuntimeError unless it is stored (or a known retry)."""
    status, body = request(port, "POST", "/api/v1/lineage", json.dumps(event).encode(),
                           {"Content-Type": "application/json", "Authorization": f"Bearer {secret}"})
    if status not in (200, 201):
        raise RuntimeError(f"the lineage ingest answered {status}: {body[:500]!r}")
