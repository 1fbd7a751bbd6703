"""Command start-up: how long `manage.py` takes to run a command that does nothing.

    .venv/bin/python bench/startup.py [--repeat 5] [--smoke]

Each command runs in a fresh interpreter, as a person or a CI job runs it, against the
embedded default (SQLite under a scratch directory, `DEBUG=1`, as `make demo` runs):

- `shell -c pass`: settings, every app's `ready()`, nothing else (the floor of any command);
- `check`: the same plus the URLs and every view module (what `runserver` also loads);
- `help verify_audit_log`: a command's own help.

Wall time and CPU time (user + system of the child) are medians over `--repeat` runs;
wall time is what a person waits, CPU time what the start-up costs on an idle machine.
It also says whether any output carries django-axes' `AXES: BEGIN` banner (it must not).
`--smoke` runs each command once. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("shell -c pass", ["shell", "-c", "pass"]),
            ("check", ["check"]),
            ("help verify_audit_log", ["help", "verify_audit_log"]))


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its output) for one `manage.py` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="each command once, for CI")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    scratch = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    env = {**os.environ, "DEBUG": "1", "ENV_FILE": "", "DJANGO_SETTINGS_MODULE": "registry.settings",
           "DATABASE_URL": f"sqlite:///{scratch / 'registry.sqlite3'}", "CONTRACT_STORE": str(scratch / "store"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}
    env.pop("CELERY_BROKER_URL", None)
    run_once(["shell", "-c", "pass"], env)  # the first run writes the bytecode caches: not measured
    figures: dict[str, dict] = {}
    banner = False
    for label, command in COMMANDS:
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu, output = run_once(command, env)
            walls.append(wall)
            cpus.append(cpu)
            banner = banner or "AXES: BEGIN" in output
        figures[label] = {"wall_s": round(statistics.median(walls), 2), "cpu_s": round(statistics.median(cpus), 2)}
        print(f"{label:<24} wall {figures[label]['wall_s']:>6.2f} s   cpu {figures[label]['cpu_s']:>6.2f} s")
    load = os.getloadavg()[0]
    print(f"load average while measuring: {load:.2f} on {os.cpu_count()} cores; AXES banner printed: {banner}")
    result = {"bench": "startup", "repeat": repeat, "commands": figures, "axes_banner": banner,
              "load_average": round(load, 2), "cores": os.cpu_count()}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
