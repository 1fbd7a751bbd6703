"""marquez-python, Marquez's own client, in a virtualenv of its own.

As tests/odcs/tools.py does for datacontract-cli: `.venv-tools/marquez-python`
(git-ignored) is created on first use and reused after; a marker file records
what was installed, so a half-made virtualenv is made again. A missing tool
fails the tests that need it; it never skips them.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
from pathlib import Path
from typing import Any

from tests.odcs.tools import build_venv

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".venv-tools" / "marquez-python"
# marquez-python imports pytz, which it used to get through pyRFC3339 (2.x no longer requires it).
REQUIREMENTS = ("marquez-python==0.50.0", "pytz")
REQUIREMENT = " ".join(REQUIREMENTS)
MARKER = TOOLS / ".installed"
SCRIPT = Path(__file__).with_name("marquez_reads.py")


def ensure_marquez_python() -> Path:
    """The virtualenv's python, with marquez-python installed (first use installs it)."""
    TOOLS.parent.mkdir(parents=True, exist_ok=True)
    with open(TOOLS.parent / ".marquez-python.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes must not build it at once
        if not (MARKER.exists() and MARKER.read_text().strip() == REQUIREMENT):
            build_venv(TOOLS, REQUIREMENTS)
            MARKER.write_text(REQUIREMENT + "\n")
    python = TOOLS / "bin" / "python"
    if not python.exists():
        raise RuntimeError(f"{REQUIREMENT} installed into {TOOLS} but {python} is missing")
    return python


def read_with_marquez_python(url: str, token: str, calls: list[tuple[str, list, dict]]) -> list[dict[str, Any]]:
    """Each (method, args, kwargs) called on a MarquezClient(url, api_key=token)
    in the tool's virtualenv: [{"call", "answer"} or {"call", "status", "body"}]."""
    python = ensure_marquez_python()
    done = subprocess.run([str(python), str(SCRIPT), url, token], input=json.dumps(calls), capture_output=True,
                          text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"marquez-python failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)
