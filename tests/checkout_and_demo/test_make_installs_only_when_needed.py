"""A second `make demo` or `make test` starts at once: pip runs only when a pyproject.toml
is newer than the virtualenv's stamp, and the demo is migrated and loaded only when
something that reads changed or its database is gone (the Makefile's stamps)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LONG_AGO = time.time() - 3600


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The Makefile, both pyproject.toml files, the demo's fixtures and .env writer, and a
    virtualenv whose pip and python only say what they were asked."""
    for folder in ("client", "scripts", "fixtures"):
        (tmp_path / folder).mkdir()
    for name in ("Makefile", "pyproject.toml", "client/pyproject.toml", "scripts/write-demo-env", "fixtures/demo.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
        os.utime(tmp_path / name, (LONG_AGO, LONG_AGO))
    (tmp_path / "scripts" / "write-demo-env").chmod(0o755)
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text('#!/bin/sh\necho "python $*"\n')
    (bin_dir / "pip").write_text('#!/bin/sh\necho "pip $*"\n')
    for tool in ("python", "pip"):
        (bin_dir / tool).chmod(0o755)
    return tmp_path


def make(checkout: Path, target: str) -> str:
    return subprocess.run(["make", "--no-print-directory", target], cwd=checkout, capture_output=True,
                          text=True, check=True).stdout


def edit(path: Path, stamp: Path) -> None:
    """Change `path` after `stamp` was made. The kernel stamps files with a coarse
    clock (a few milliseconds), so a touch right after the stamp can carry the same time."""
    later = stamp.stat().st_mtime + 1
    os.utime(path, (later, later))


def test_the_runtime_install_runs_once_and_again_only_after_pyproject_changes(checkout):
    stamp = checkout / ".venv" / ".installed"
    assert "pip install --progress-bar on -e ./client -e ." in make(checkout, "install")
    assert "pip install" not in make(checkout, "install")
    edit(checkout / "pyproject.toml", stamp)
    assert "pip install --progress-bar on -e ./client -e ." in make(checkout, "install")
    edit(checkout / "client" / "pyproject.toml", stamp)
    assert "pip install --progress-bar on -e ./client -e ." in make(checkout, "install")


def test_the_development_install_counts_for_the_runtime_one_too(checkout):
    assert 'pip install --progress-bar on -e ./client -e .[dev]' in make(checkout, "install-dev")
    assert "pip install" not in make(checkout, "install-dev")
    assert "pip install" not in make(checkout, "install")


def test_the_install_says_what_it_does_and_uses_uv_when_the_virtualenv_has_it(checkout):
    said = make(checkout, "install")
    assert "Installing the dependencies into .venv" in said
    assert "pip install --progress-bar on -e ./client -e ." in said  # no uv: pip, with its progress bar
    uv = checkout / ".venv" / "bin" / "uv"
    uv.write_text('#!/bin/sh\necho "uv $*"\n')
    uv.chmod(0o755)
    edit(checkout / "pyproject.toml", checkout / ".venv" / ".installed")
    said = make(checkout, "install")
    assert "uv pip install --python .venv/bin/python -e ./client -e ." in said
    assert "pip install --progress-bar" not in said


def test_a_second_make_demo_loads_nothing_unless_a_demo_input_changed_or_the_database_is_gone(checkout):
    first = make(checkout, "demo-setup")
    assert "python manage.py migrate --noinput" in first and "python manage.py load_demo" in first
    assert (checkout / ".env").exists()
    (checkout / "var" / "registry.sqlite3").touch()  # what the real migrate creates
    assert "manage.py" not in make(checkout, "demo-setup")
    loaded = checkout / "var" / "demo-loaded.txt"
    os.utime(loaded, (LONG_AGO + 60, LONG_AGO + 60))
    (checkout / "fixtures" / "demo.yaml").touch()
    assert "python manage.py load_demo" in make(checkout, "demo-setup")
    assert "manage.py" not in make(checkout, "demo-setup")
    (checkout / "var" / "registry.sqlite3").unlink()
    assert "python manage.py load_demo" in make(checkout, "demo-setup")
