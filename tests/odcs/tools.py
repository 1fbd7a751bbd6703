"""Real clients in virtualenvs of their own: datacontract-cli, the Open Data Contract Standard's
own tool, and pandera as a user without optional extras has it (no pyarrow).

Each lives under `.venv-tools/<name>` (git-ignored), created on first use and reused after (a
marker file records what was installed, so a half-made or outdated virtualenv is made again).
A missing tool fails the tests that need it; it never skips them.
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


# pandera as its own docs install it, pinned to the versions the product is tested with; no pyarrow
PANDERA = ROOT / ".venv-tools" / "pandera"
PANDERA_REQUIREMENTS = ("pandera==0.35.0", "pandas==3.1.1", "numpy==2.4.6", "pyyaml")


def _ensure_venv(folder: Path, requirements: tuple[str, ...], *, check: str | None = None) -> None:
    """Make `folder` a virtualenv holding `requirements` unless its marker says it already is;
    `check` is a Python snippet run in it afterwards that must succeed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    wanted = "\n".join(requirements)
    marker = folder / ".installed"
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes must not build it at once
        if not (marker.exists() and marker.read_text().strip() == wanted):
            build_venv(folder, requirements)
            if check:
                subprocess.run([str(folder / "bin" / "python"), "-c", check], check=True)
            marker.write_text(wanted + "\n")


def build_venv(folder: Path, requirements: tuple[str, ...]) -> None:
    """A new virtualenv in `folder` holding `requirements`: installed by uv where the suite's own
    virtualenv has it (the Makefile puts it there when the index has it), else by the new
    virtualenv's pip. On a fresh clone these virtualenvs are made on every run; uv resolves and
    installs datacontract-cli's hundred-odd packages several times faster than pip, and needs
    no pip in the new virtualenv (whose bootstrap is seconds more)."""
    uv = Path(sys.executable).parent / "uv"
    if uv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(folder)], check=True)
        subprocess.run([str(uv), "pip", "install", "--quiet", "--python", str(folder / "bin" / "python"),
                        *requirements], check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        subprocess.run([str(folder / "bin" / "pip"), "install", "--quiet", *requirements], check=True)


def ensure_datacontract_cli() -> Path:
    """The `datacontract` executable, installing it first if needed."""
    _ensure_venv(TOOLS, (REQUIREMENT,))
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


_NO_PYARROW = """
import importlib.util, sys
if importlib.util.find_spec("pyarrow") is not None:
    sys.exit("pyarrow is installed in the pandera tool virtualenv; it must read our exports without it")
"""


def ensure_pandera_without_pyarrow() -> Path:
    """The Python of a virtualenv with pandera, pandas, numpy and PyYAML and no pyarrow."""
    _ensure_venv(PANDERA, PANDERA_REQUIREMENTS, check=_NO_PYARROW)
    subprocess.run([str(PANDERA / "bin" / "python"), "-c", _NO_PYARROW], check=True)
    return PANDERA / "bin" / "python"
