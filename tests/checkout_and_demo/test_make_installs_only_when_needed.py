"""A second `make demo` or `make test` does not reinstall: pip runs only when a
pyproject.toml is newer than the virtualenv's stamp (the Makefile's install targets)."""

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
    """The Makefile and both pyproject.toml files, and a virtualenv whose pip only says what it was asked."""
    (tmp_path / "client").mkdir()
    for name in ("Makefile", "pyproject.toml", "client/pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
        os.utime(tmp_path / name, (LONG_AGO, LONG_AGO))
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\n")
    (bin_dir / "pip").write_text('#!/bin/sh\necho "pip $*"\n')
    for tool in ("python", "pip"):
        (bin_dir / tool).chmod(0o755)
    return tmp_path


def make(checkout: Path, target: str) -> str:
    return subprocess.run(["make", "--no-print-directory", target], cwd=checkout, capture_output=True,
                          text=True, check=True).stdout


def test_the_runtime_install_runs_once_and_again_only_after_pyproject_changes(checkout):
    assert "pip install --quiet -e ./client -e ." in make(checkout, "install")
    assert "pip install" not in make(checkout, "install")
    (checkout / "pyproject.toml").touch()
    assert "pip install --quiet -e ./client -e ." in make(checkout, "install")
    (checkout / "client" / "pyproject.toml").touch()
    assert "pip install --quiet -e ./client -e ." in make(checkout, "install")


def test_the_development_install_counts_for_the_runtime_one_too(checkout):
    assert 'pip install --quiet -e ./client -e .[dev]' in make(checkout, "install-dev")
    assert "pip install" not in make(checkout, "install-dev")
    assert "pip install" not in make(checkout, "install")
