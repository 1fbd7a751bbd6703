"""The checkout's .env: written by `make demo`, read by manage.py under the real environment,
ignored by the test settings and by production."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from registry.env import load_env_file, load_local_settings, read_env_file

ROOT = Path(__file__).resolve().parents[2]
WRITE_DEMO_ENV = ROOT / "scripts" / "write-demo-env"


@pytest.fixture
def clean_environment(monkeypatch):
    for name in ("DEBUG", "SECRET_KEY", "SITE_URL", "EMAIL_BACKEND", "ENV_FILE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_local_settings_file_fills_in_only_what_the_environment_does_not_set(tmp_path, clean_environment):
    env_file = tmp_path / ".env"
    env_file.write_text("# the demo\n\nDEBUG=1\nexport SITE_URL='http://127.0.0.1:9000'\nSECRET_KEY=from-the-file\n")
    clean_environment.setenv("SECRET_KEY", "from-the-shell")
    assert load_env_file(env_file) == ["DEBUG", "SITE_URL"]
    assert (os.environ["DEBUG"], os.environ["SITE_URL"]) == ("1", "http://127.0.0.1:9000")
    assert os.environ["SECRET_KEY"] == "from-the-shell"


def test_a_missing_file_sets_nothing(tmp_path, clean_environment):
    assert load_env_file(tmp_path / ".env") == []
    assert "DEBUG" not in os.environ


def test_a_line_that_is_not_key_value_stops_start_up_naming_the_file_and_the_line(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("DEBUG=1\nSITE_URL http://127.0.0.1:8000\n")
    with pytest.raises(ImproperlyConfigured, match=r"\.env:2: 'SITE_URL http://127.0.0.1:8000' is not a KEY=VALUE line"):
        read_env_file(env_file)


def test_the_test_settings_never_read_the_checkouts_file(tmp_path, clean_environment):
    (tmp_path / ".env").write_text("DEBUG=1\n")
    clean_environment.setenv("DJANGO_SETTINGS_MODULE", "tests.settings")
    assert load_local_settings(tmp_path) == []
    clean_environment.setenv("DJANGO_SETTINGS_MODULE", "registry.settings")
    assert load_local_settings(tmp_path) == ["DEBUG"]


def test_an_empty_env_file_setting_reads_no_file_as_the_docker_image_says(tmp_path, clean_environment):
    (tmp_path / ".env").write_text("DEBUG=1\n")
    clean_environment.setenv("DJANGO_SETTINGS_MODULE", "registry.settings")
    clean_environment.setenv("ENV_FILE", "")
    assert load_local_settings(tmp_path) == []
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENV_FILE=""' in dockerfile
    assert ".env" in (ROOT / ".dockerignore").read_text().splitlines()
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()


def test_manage_py_runs_with_the_demos_settings_from_the_file_and_the_shell_wins(tmp_path):
    """No SECRET_KEY, no DEBUG in the shell: manage.py takes them from the file, as after make demo."""
    env_file = tmp_path / "demo.env"
    subprocess.run([sys.executable, str(WRITE_DEMO_ENV), "--file", str(env_file), "DEBUG=1",
                    "SITE_URL=http://127.0.0.1:9000",
                    "EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend"], check=True)
    env = {key: value for key, value in os.environ.items()
           if key not in {"DEBUG", "SECRET_KEY", "SITE_URL", "EMAIL_BACKEND", "DJANGO_SETTINGS_MODULE"}}
    env.update(ENV_FILE=str(env_file), DATABASE_URL=f"sqlite:///{tmp_path / 'unused.sqlite3'}",
               EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
    script = "from django.conf import settings; print(settings.DEBUG, settings.SITE_URL, settings.EMAIL_BACKEND, len(settings.SECRET_KEY))"
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == \
        "True http://127.0.0.1:9000 django.core.mail.backends.locmem.EmailBackend 67"


def test_make_demo_generates_the_key_once_and_keeps_your_own_lines_when_the_port_moves(tmp_path):
    env_file = tmp_path / ".env"

    def write(*settings: str) -> dict[str, str]:
        subprocess.run([sys.executable, str(WRITE_DEMO_ENV), "--file", str(env_file), *settings], check=True)
        return read_env_file(env_file)

    first = write("DEBUG=1", "SITE_URL=http://127.0.0.1:8000")
    assert len(first["SECRET_KEY"]) >= 50 and oct(env_file.stat().st_mode & 0o777) == "0o600"
    env_file.write_text(env_file.read_text() + "DATABASE_URL=postgres://postgres@127.0.0.1:5432/mine\n")
    second = write("DEBUG=1", "SITE_URL=http://127.0.0.1:9000")
    assert second == {**first, "SITE_URL": "http://127.0.0.1:9000",
                      "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/mine"}
