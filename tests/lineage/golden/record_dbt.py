"""Record the golden dbt events: `dbt-ol run` and `dbt-ol test` on the small
project in dbt_shop/, once without a catalog and once after `dbt docs generate`.

    python tests/lineage/golden/record_dbt.py [--tools .venv-tools/dbt/bin]

Needs PostgreSQL (GOLDEN_PG_URL, default postgres://postgres@127.0.0.1:5432; a
scratch database `golden_shop` is created and dropped) and a virtualenv with
dbt-core<1.12, dbt-postgres and openlineage-dbt (bench/_impact_dbt.py builds one
in .venv-tools/dbt). Writes dbt_no_catalog.jsonl and dbt_with_catalog.jsonl
next to this file, the events in the order dbt-ol sent them, with the machine's
paths replaced by `<project>`. The tests read those files; they never run dbt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "dbt_shop"
ROOT = HERE.parents[2]
DATABASE = "golden_shop"
JOB_NAMESPACE = "shop_dbt"

RAW = {
    "orders": ("id integer, customer_id integer, status text, amount_cents integer, ordered_at timestamp",
               [(1, 10, "placed", 1200, "2026-01-02 10:00"), (2, 10, "shipped", 800, "2026-01-03 11:00"),
                (3, 11, "returned", 500, "2026-01-04 12:00"), (4, 12, "placed", 2500, "2026-01-05 09:30")]),
    "customers": ("id integer, email text, country text",
                  [(10, "ada@example.com", "GB"), (11, "lin@example.com", "FR"), (12, "sam@example.com", "US")]),
}


def recreate(url: str) -> None:
    with psycopg.connect(f"{url}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    with psycopg.connect(f"{url}/{DATABASE}") as conn:
        conn.execute("CREATE SCHEMA raw")
        for table, (columns, rows) in RAW.items():
            conn.execute(f"CREATE TABLE raw.{table} ({columns})")
            with conn.cursor().copy(f"COPY raw.{table} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)


def run(tools: Path, work: Path, args: list[str], env: dict, *, ol: bool) -> None:
    command = [str(tools / ("dbt-ol" if ol else "dbt")), *args]
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    # `dbt test` exits 1 when a test fails; the warning test is meant to.
    if os.environ.get("GOLDEN_VERBOSE"):
        print(proc.stdout[-4000:], proc.stderr[-4000:])
    if proc.returncode not in (0, 1) or "Traceback" in proc.stderr or "Encountered an error" in proc.stdout:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")


def record(tools: Path, url: str, work: Path, out: Path, *, catalog: bool) -> int:
    events = work / "events.jsonl"
    events.unlink(missing_ok=True)
    config = work / "openlineage.yml"
    config.write_text(json.dumps({"transport": {"type": "file", "log_file_path": str(events), "append": True}}))
    env = {**os.environ, "GOLDEN_DBNAME": DATABASE, "DBT_PROFILES_DIR": str(work), "PYTHONDONTWRITEBYTECODE": "1",
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "PATH": f"{tools}:{os.environ.get('PATH', '')}", "DBT_USE_COLORS": "false",
           "OPENLINEAGE_CONFIG": str(config), "OPENLINEAGE_NAMESPACE": JOB_NAMESPACE}
    host = url.split("@")[-1].split("/")[0]
    env["GOLDEN_PGHOST"], _, port = host.partition(":")
    env["GOLDEN_PGPORT"] = port or "5432"
    shutil.rmtree(work / "target", ignore_errors=True)
    run(tools, work, ["run"], env, ol=False)  # the tables exist before the catalog reads them
    if catalog:
        run(tools, work, ["docs", "generate"], env, ol=False)
    events.unlink(missing_ok=True)
    run(tools, work, ["run"], env, ol=True)
    run(tools, work, ["test"], env, ol=True)
    lines = [line for line in events.read_text().splitlines() if line.strip()]
    text = "\n".join(lines) + "\n"
    text = text.replace(str(work), "<project>").replace(str(ROOT), "<repository>")
    out.write_text(text)
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, default=ROOT / ".venv-tools" / "dbt" / "bin",
                        help="the bin/ folder holding dbt and dbt-ol")
    parser.add_argument("--pg-url", default=os.environ.get("GOLDEN_PG_URL", "postgres://postgres@127.0.0.1:5432"))
    args = parser.parse_args()
    if not (args.tools / "dbt-ol").exists():
        sys.exit(f"no dbt-ol in {args.tools}: run bench/impact.py once (it builds .venv-tools/dbt) or pass --tools")
    with tempfile.TemporaryDirectory(prefix="golden-dbt-") as tmp:
        work = Path(tmp) / "shop"
        shutil.copytree(PROJECT, work)
        try:
            for catalog, name in ((False, "dbt_no_catalog.jsonl"), (True, "dbt_with_catalog.jsonl")):
                recreate(args.pg_url)
                count = record(args.tools, args.pg_url, work, HERE / name, catalog=catalog)
                print(f"{name}: {count} events")
        finally:
            with psycopg.connect(f"{args.pg_url}/postgres", autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))


if __name__ == "__main__":
    main()
