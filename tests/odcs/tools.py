"""datacontract-cli, the Open Data Contract Standard's own tool, in a virtualenv of its own.

It pulls in far more than the product needs, so it lives under `.venv-tools/datacontract`
(git-ignored), created on first use and reused after (a marker file records what was
installed, so a half-made virtualenv is made again). A missing tool fails the tests that
need it; it never skips them.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".venv-tools" / "datacontract"
REQUIREMENT = "datacontract-cli[postgres]==1.2.8"
MARKER = TOOLS / ".installed"


def ensure_datacontract_cli() -> Path:
    """The `datacontract` executable, installing it first if needed."""
    TOOLS.parent.mkdir(parents=True, exist_ok=True)
    with open(TOOLS.parent / ".datacontract.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes must not build it at once
        if not (MARKER.exists() and MARKER.read_text().strip() == REQUIREMENT):
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(TOOLS)], check=True)
            subprocess.run([str(TOOLS / "bin" / "pip"), "install", "--quiet", REQUIREMENT], check=True)
            MARKER.write_text(REQUIREMENT + "\n")
    executable = TOOLS / "bin" / "datacontract"
    if not executable.exists():
        raise RuntimeError(f"{REQUIREMENT} installed into {TOOLS} but {executable} is missing")
    return executable


def odcs_json_schema(version: str) -> Path:
    """The ODCS JSON Schema the installed CLI ships for `version` (e.g. "3.1.0")."""
    found = sorted(TOOLS.glob(f"lib/python*/site-packages/datacontract/schemas/odcs-{version}.schema.json"))
    if not found:
        raise RuntimeError(f"datacontract-cli in {TOOLS} ships no ODCS {version} JSON Schema")
    return found[0]
