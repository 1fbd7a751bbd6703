"""The dbt side of bench/impact.py: the warehouse, the tooling, real OpenLineage
events, generated breaking changes and their ground truth.

Nothing here knows about the product: the ground truth comes from running dbt
itself (which models error, which tests fail), never from our lineage.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import psycopg
from psycopg import sql

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PROJECT = BENCH / "dbt_impact"
CAPTURED = PROJECT / "captured"          # committed: the product's input and the cached ground truth
WORK = ROOT / "var" / "impact"           # scratch (git-ignored): dbt's work copy, targets, logs
TOOLS = ROOT / ".venv-tools" / "dbt"
TOOL_REQUIREMENTS = ["dbt-core<1.12", "dbt-postgres", "openlineage-dbt"]

PG_URL = os.environ.get("IMPACT_PG_URL", "postgres://postgres@127.0.0.1:5432")
WAREHOUSE = os.environ.get("IMPACT_WAREHOUSE_DB", "impact_wh")   # the clean build; template of every change
WORK_DB = WAREHOUSE + "_work"                                       # one change at a time
JOB_NAMESPACE = "impact_dbt"
THREADS = "2"
# Bump when the raw data or the change generator changes: it is part of the cache key.
GENERATOR_VERSION = "3"


def log(message: str) -> None:
    print(message, flush=True)


# --- tooling ----------------------------------------------------------------------

def ensure_tools() -> Path:
    """dbt, dbt-postgres and openlineage-dbt in their own virtualenv, created once."""
    if not (TOOLS / "bin" / "dbt-ol").exists():
        log(f"Creating {TOOLS.relative_to(ROOT)} ({', '.join(TOOL_REQUIREMENTS)}) …")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(TOOLS)], check=True)
        subprocess.run([str(TOOLS / "bin" / "pip"), "install", "-q", *TOOL_REQUIREMENTS], check=True)
    return TOOLS / "bin"


# --- the raw tables the ingest team lands ----------------------------------------------

# Every landed table also carries its loader's bookkeeping, which no model reads.
LOADER_COLUMNS = [("_loaded_at", "timestamp"), ("_batch_id", "text")]

RAW_TABLES: dict[str, list[tuple[str, str]]] = {
    "customers": [("id", "integer"), ("first_name", "text"), ("last_name", "text"), ("email", "text"),
                  ("country_code", "text"), ("signup_date", "date"), ("segment", "text"), ("is_deleted", "boolean"),
                  ("marketing_opt_in", "boolean"),
                  ("phone", "text"), ("last_login_at", "timestamp"), ("referral_code", "text"), *LOADER_COLUMNS],
    "products": [("id", "integer"), ("sku", "text"), ("name", "text"), ("category", "text"), ("brand", "text"),
                 ("unit_cost_cents", "integer"), ("is_active", "boolean"), ("launched_at", "timestamp"),
                 ("weight_grams", "integer"), ("supplier_code", "text"), *LOADER_COLUMNS],
    "orders": [("id", "integer"), ("customer_id", "integer"), ("ordered_at", "timestamp"), ("status", "text"),
               ("channel_code", "text"), ("coupon_code", "text"), ("currency", "text"),
               ("sales_rep_code", "text"), ("ip_country", "text"), *LOADER_COLUMNS],
    "order_items": [("id", "integer"), ("order_id", "integer"), ("product_id", "integer"), ("quantity", "integer"),
                    ("unit_price_cents", "integer"), ("discount_cents", "integer"),
                    ("gift_wrap", "boolean"), *LOADER_COLUMNS],
    "payments": [("id", "integer"), ("order_id", "integer"), ("method", "text"), ("amount_cents", "integer"),
                 ("status", "text"), ("created_at", "timestamp"),
                 ("processor_ref", "text"), ("card_last4", "text"), *LOADER_COLUMNS],
    "shipments": [("id", "integer"), ("order_id", "integer"), ("carrier", "text"), ("shipped_at", "timestamp"),
                  ("delivered_at", "timestamp"), ("warehouse_code", "text"), ("weight_grams", "integer"),
                  ("tracking_number", "text"), ("package_count", "integer"), *LOADER_COLUMNS],
    "tickets": [("id", "integer"), ("customer_id", "integer"), ("order_id", "integer"), ("opened_at", "timestamp"),
                ("closed_at", "timestamp"), ("priority", "text"), ("category", "text"), ("csat_score", "integer"),
                ("subject", "text"), ("agent_id", "integer"), *LOADER_COLUMNS],
    "sessions": [("id", "integer"), ("customer_id", "integer"), ("started_at", "timestamp"), ("device", "text"),
                 ("utm_source", "text"), ("utm_campaign", "text"), ("pageviews", "integer"),
                 ("converted_order_id", "integer"),
                 ("user_agent", "text"), ("landing_page", "text"), *LOADER_COLUMNS],
}

FIRST = ["ada", "bo", "chen", "dara", "eli", "fatima", "gus", "hana", "ivan", "jo", "kai", "lena", "mo", "nia", "oto"]
LAST = ["smith", "garcia", "mueller", "rossi", "tanaka", "dubois", "jansen", "kowalski", "silva", "okafor"]


def raw_rows(seed: int = 7) -> dict[str, list[tuple]]:
    """A small retailer's raw data, the same for the same seed."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1)

    def pick(weights: dict):
        return rng.choices(list(weights), weights=list(weights.values()))[0]

    customers = []
    for i in range(1, 601):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        customers.append((i, first.title(), last.title(), f"{first}.{last}{i}@Example.com",
                          rng.choice(["us", "US", "CA", "GB", "DE", "FR", "NL", "ES", "IT", "AU", "JP", "BR"]),
                          date(2023, 1, 1) + timedelta(days=rng.randrange(640)),
                          pick({"consumer": 70, "smb": 20, "enterprise": 10}), rng.random() < 0.03, rng.random() < 0.6))
    categories = ["electronics", "home", "garden", "toys", "apparel", "books", "sports", "beauty"]
    products = [(i, f"SKU-{i:05d}", f"Product {i}", rng.choice(categories), f"brand_{rng.randrange(12)}",
                 rng.randrange(200, 20000), rng.random() < 0.9, start - timedelta(days=rng.randrange(900)))
                for i in range(1, 121)]
    orders, items, payments, shipments = [], [], [], []
    orders_of: dict[int, list[int]] = {}
    for i in range(1, 3001):
        customer = rng.randrange(1, 601)
        at = start + timedelta(minutes=rng.randrange(366 * 24 * 60))
        status = pick({"completed": 60, "shipped": 15, "placed": 8, "returned": 10, "cancelled": 7})
        orders.append((i, customer, at, status, pick({"web": 50, "app": 30, "store": 10, "marketplace": 7, "phone": 3}),
                       None if rng.random() < 0.8 else rng.choice(["SAVE10", "WELCOME", "VIP"]),
                       pick({"USD": 50, "EUR": 25, "GBP": 15, "JPY": 5, "CAD": 5})))
        orders_of.setdefault(customer, []).append(i)
        total = 0
        for _ in range(rng.randint(1, 4)):
            product = products[rng.randrange(len(products))]
            quantity = rng.randint(1, 5)
            price = int(product[5] * rng.uniform(1.3, 2.5))
            discount = 0 if rng.random() < 0.7 else rng.randrange(0, price // 4 + 1)
            items.append((len(items) + 1, i, product[0], quantity, price, discount))
            total += quantity * price - discount
        if status != "cancelled":
            if rng.random() < 0.15:
                payments.append((len(payments) + 1, i, "card", total, "failed", at + timedelta(minutes=1)))
            if status != "placed" or rng.random() < 0.5:
                payments.append((len(payments) + 1, i, pick({"card": 60, "paypal": 20, "bank_transfer": 10, "gift_card": 10}),
                                 total, "success", at + timedelta(minutes=rng.randrange(2, 600))))
        if status in ("shipped", "completed", "returned"):
            shipped = at + timedelta(hours=rng.randrange(2, 96))
            delivered = None if status == "shipped" else shipped + timedelta(hours=rng.randrange(20, 200))
            shipments.append((len(shipments) + 1, i, pick({"dhl": 40, "ups": 25, "fedex": 20, "postnl": 15}), shipped,
                              delivered, rng.choice(["AMS1", "FRA2", "LHR1", "JFK3"]), rng.randrange(100, 20000)))
    tickets = []
    for i in range(1, 701):
        customer = rng.randrange(1, 601)
        own = orders_of.get(customer, [])
        opened = start + timedelta(minutes=rng.randrange(366 * 24 * 60))
        closed = opened + timedelta(hours=rng.randrange(1, 240)) if rng.random() < 0.85 else None
        tickets.append((i, customer, rng.choice(own) if own and rng.random() < 0.7 else None, opened, closed,
                        pick({"low": 30, "normal": 45, "high": 20, "urgent": 5}),
                        rng.choice(["delivery", "refund", "product", "account", "billing"]),
                        None if rng.random() < 0.4 else rng.randint(1, 5)))
    sessions = []
    for i in range(1, 6001):
        customer = rng.randrange(1, 601) if rng.random() < 0.6 else None
        own = orders_of.get(customer, []) if customer else []
        sessions.append((i, customer, start + timedelta(minutes=rng.randrange(366 * 24 * 60)),
                         pick({"desktop": 45, "mobile": 45, "tablet": 10}),
                         rng.choice(["google", "Google", "facebook", "newsletter", "direct", "affiliate", "tiktok"]),
                         None if rng.random() < 0.3 else rng.choice(["spring_sale", "black_friday", "evergreen", "launch_x"]),
                         rng.randint(1, 30), rng.choice(own) if own and rng.random() < 0.15 else None))
    tables = {"customers": customers, "products": products, "orders": orders, "order_items": items,
              "payments": payments, "shipments": shipments, "tickets": tickets, "sessions": sessions}
    # The columns a loader lands beside them (their own generator: the columns above keep their values).
    extra = random.Random(seed + 1)
    more = {
        "customers": lambda r: (f"+1-555-{extra.randrange(10**7):07d}" if extra.random() < 0.8 else None,
                                start + timedelta(minutes=extra.randrange(366 * 24 * 60)),
                                f"REF{extra.randrange(10**5):05d}" if extra.random() < 0.2 else None),
        "products": lambda r: (extra.randrange(50, 25000), f"SUP-{extra.randrange(40):03d}"),
        "orders": lambda r: (f"rep_{extra.randrange(25)}" if r[4] in ("store", "phone") else None,
                             extra.choice(["US", "CA", "GB", "DE", "FR", "NL", "JP", None])),
        "order_items": lambda r: (extra.random() < 0.05,),
        "payments": lambda r: (f"psp_{extra.randrange(16**10):010x}", f"{extra.randrange(10**4):04d}" if r[2] == "card" else None),
        "shipments": lambda r: (f"{r[2].upper()}{extra.randrange(10**9):09d}", extra.randint(1, 3)),
        "tickets": lambda r: (f"About my {r[6]}", extra.randrange(1, 41) if extra.random() < 0.9 else None),
        "sessions": lambda r: (extra.choice(["Mozilla/5.0 (Windows NT 10.0)", "Mozilla/5.0 (iPhone)", "Mozilla/5.0 (Macintosh)"]),
                               extra.choice(["/", "/sale", "/new", "/product", "/blog"])),
    }
    loaded = datetime(2025, 1, 2, 3, 0)
    return {table: [(*row, *more[table](row), loaded + timedelta(seconds=n // 500), f"batch_{n // 500:04d}")
                    for n, row in enumerate(rows)] for table, rows in tables.items()}


def db_url(name: str) -> str:
    return f"{PG_URL}/{name}"


def recreate_database(name: str, *, template: str | None = None) -> None:
    with psycopg.connect(db_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if template:
            conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template)))
        else:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(name: str) -> None:
    with psycopg.connect(db_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def load_raw(database: str) -> None:
    """The raw schema and its tables, written with COPY."""
    with psycopg.connect(db_url(database)) as conn:
        conn.execute("CREATE SCHEMA raw")
        for table, rows in raw_rows().items():
            columns = RAW_TABLES[table]
            conn.execute(sql.SQL("CREATE TABLE raw.{} ({})").format(
                sql.Identifier(table), sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t))
                                                          for c, t in columns)))
            with conn.cursor().copy(sql.SQL("COPY raw.{} FROM STDIN").format(sql.Identifier(table))) as copy:
                for row in rows:
                    copy.write_row(row)


# --- running dbt ------------------------------------------------------------------

def project_hash() -> str:
    """The project's files (not captured/), the raw data's and the generator's version."""
    digest = hashlib.sha256(GENERATOR_VERSION.encode())
    for path in sorted(PROJECT.rglob("*")):
        relative = path.relative_to(PROJECT)
        if path.is_file() and relative.parts[0] not in ("captured", "target", "logs") and path.name != ".gitignore":
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def sync_work_copy(*, clean: bool) -> Path:
    """The project copied to var/impact/project (dbt writes target/ and logs/ there)."""
    dest = WORK / "project"
    if clean and dest.exists():
        shutil.rmtree(dest)
    for path in PROJECT.rglob("*"):
        relative = path.relative_to(PROJECT)
        if relative.parts[0] in ("captured", "target", "logs"):
            continue
        target = dest / relative
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists() or target.read_bytes() != path.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return dest


def dbt(tools: Path, args: list[str], *, database: str, executable: str = "dbt", extra_env: dict | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    project = WORK / "project"
    env = dict(os.environ)
    env.update({"IMPACT_DBNAME": database, "DBT_PROFILES_DIR": str(project), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                "DBT_USE_COLORS": "false", "DBT_PRINTER_WIDTH": "120", "PATH": f"{tools}:{env.get('PATH', '')}"})
    env.update(extra_env or {})
    command = [str(tools / executable), *args, "--threads", THREADS] if args[0] in ("run", "test", "seed", "build") \
        else [str(tools / executable), *args]
    proc = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    (WORK / "logs").mkdir(parents=True, exist_ok=True)
    (WORK / "logs" / f"{executable}-{args[0]}.out").write_text(proc.stdout + proc.stderr)
    if check and proc.returncode != 0:
        raise SystemExit(f"{executable} {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return proc


def read_target(name: str) -> dict:
    return json.loads((WORK / "project" / "target" / name).read_text())


# --- the project as data --------------------------------------------------------------

def describe_project(manifest: dict, catalog: dict) -> dict:
    """What the harness and the product side need from manifest.json and catalog.json."""
    nodes: dict[str, dict] = {}
    entries = {**{k: v for k, v in manifest["nodes"].items() if v["resource_type"] in ("model", "seed")},
               **manifest["sources"]}
    for unique_id, node in entries.items():
        kind = node["resource_type"]
        table = node["name"] if kind == "source" else node["alias"]
        cat = (catalog["sources"] if kind == "source" else catalog["nodes"]).get(unique_id, {})
        columns = sorted(cat.get("columns", {}).values(), key=lambda c: c["index"])
        nodes[unique_id] = {
            "kind": kind, "name": node["name"] if kind != "source" else f"{node['source_name']}.{node['name']}",
            "schema": node["schema"], "table": table, "relation": f"{node['database']}.{node['schema']}.{table}",
            "owner_team": (node.get("config", {}).get("meta") or node.get("meta") or {}).get("owner_team")
            or (node.get("source_meta") or {}).get("owner_team"),
            "parents": sorted(p for p in manifest["parent_map"].get(unique_id, []) if not p.startswith("test.")),
            "children": sorted(c for c in manifest["child_map"].get(unique_id, []) if c.startswith("model.")),
            "columns": [{"name": c["name"], "type": c["type"]} for c in columns],
            "code": node.get("raw_code", ""), "path": node.get("original_file_path"),
        }
    tests = {}
    for unique_id, node in manifest["nodes"].items():
        if node["resource_type"] != "test":
            continue
        meta = node.get("test_metadata") or {}
        kwargs = meta.get("kwargs") or {}
        attached = node.get("attached_node") or node["depends_on"]["nodes"][-1]
        tests[unique_id] = {"attached": attached,
                            "test": meta.get("name") or "singular", "column": node.get("column_name"),
                            "parents": node["depends_on"]["nodes"],
                            "values": [str(v) for v in kwargs.get("values") or []],
                            # A singular test names its team (config meta); a generic one is its model's.
                            "owner_team": (node.get("config", {}).get("meta") or node.get("meta") or {}).get("owner_team")}
    for unique_id, node in nodes.items():
        if not node["owner_team"]:
            raise SystemExit(f"{unique_id} has no meta.owner_team")
    for test in tests.values():
        test["owner_team"] = test["owner_team"] or nodes[test["attached"]]["owner_team"]
    return {"database": WAREHOUSE, "job_namespace": JOB_NAMESPACE, "nodes": nodes, "tests": tests}


def count_nulls(project: dict, database: str) -> None:
    """Each column's NULLs in the clean build (a column without any is one a contract calls not nullable)."""
    with psycopg.connect(db_url(database)) as conn:
        for node in project["nodes"].values():
            table = sql.SQL("{}.{}").format(sql.Identifier(node["schema"]), sql.Identifier(node["table"]))
            counts = sql.SQL(", ").join(sql.SQL("count(*) - count({})").format(sql.Identifier(c["name"]))
                                        for c in node["columns"])
            row = conn.execute(sql.SQL("SELECT count(*), {} FROM {}").format(counts, table)).fetchone()
            node["rows"] = row[0]
            for column, nulls in zip(node["columns"], row[1:], strict=True):
                column["nulls"] = nulls


def teams_of(project: dict) -> list[str]:
    return sorted({n["owner_team"] for n in project["nodes"].values()})


# --- 1. the clean build and the baseline events -----------------------------------------

def build_baseline(tools: Path) -> tuple[dict, list[dict], dict]:
    """Build the clean warehouse, capture one `dbt-ol run` + `dbt-ol test`; returns
    (project, events, timings). The clean database stays as every change's template."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    log(f"Building the clean warehouse {WAREHOUSE} …")
    recreate_database(WAREHOUSE)
    load_raw(WAREHOUSE)
    sync_work_copy(clean=True)
    for step in (["deps"] if (PROJECT / "packages.yml").exists() else []) + ["seed", "run"]:
        dbt(tools, [step], database=WAREHOUSE)
    # The catalog gives dbt-ol each table's real columns for the schema facet, as in a
    # deployment that runs `dbt docs generate`.
    dbt(tools, ["docs", "generate"], database=WAREHOUSE)
    timings["clean_build_s"] = round(time.perf_counter() - started, 1)

    events_file = WORK / "openlineage" / "events.jsonl"
    events_file.parent.mkdir(parents=True, exist_ok=True)
    events_file.unlink(missing_ok=True)
    config = WORK / "openlineage" / "openlineage.yml"
    config.write_text(json.dumps({"transport": {"type": "file", "log_file_path": str(events_file), "append": True}}))
    ol_env = {"OPENLINEAGE_CONFIG": str(config), "OPENLINEAGE_NAMESPACE": JOB_NAMESPACE}
    started = time.perf_counter()
    dbt(tools, ["run"], database=WAREHOUSE, executable="dbt-ol", extra_env=ol_env)
    run_results = read_target("run_results.json")
    dbt(tools, ["test"], database=WAREHOUSE, executable="dbt-ol", extra_env=ol_env)
    test_results = read_target("run_results.json")
    timings["dbt_ol_run_test_s"] = round(time.perf_counter() - started, 1)
    bad = [r["unique_id"] for r in run_results["results"] + test_results["results"] if r["status"] not in ("success", "pass")]
    if bad:
        raise SystemExit(f"the clean project does not pass: {bad}")
    project = describe_project(read_target("manifest.json"), read_target("catalog.json"))
    count_nulls(project, WAREHOUSE)
    project["hash"] = project_hash()
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    if not events:
        raise SystemExit(f"dbt-ol wrote no events to {events_file}")
    project["counts"] = {"models": len(run_results["results"]), "tests": len(test_results["results"])}
    mark_warehouse(project["hash"])
    return project, events, timings


def mark_warehouse(digest: str) -> None:
    with psycopg.connect(db_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(WAREHOUSE), sql.Literal(digest)))


def ensure_warehouse(tools: Path, project: dict) -> None:
    """The clean build every change starts from, rebuilt (without events) if missing or stale."""
    with psycopg.connect(db_url("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                           (WAREHOUSE,)).fetchone()
    if row and row[0] == project["hash"]:
        sync_work_copy(clean=False)
        return
    log(f"Rebuilding the clean warehouse {WAREHOUSE} (the template of every change) …")
    recreate_database(WAREHOUSE)
    load_raw(WAREHOUSE)
    sync_work_copy(clean=True)
    for step in ("seed", "run"):
        dbt(tools, [step], database=WAREHOUSE)
    mark_warehouse(project["hash"])


def summarize_events(events: list[dict], project: dict) -> dict:
    """What the captured events carry, checked against the manifest."""
    by_type: dict[str, int] = {}
    jobs, with_sql, with_column_lineage, inputs, inputs_with_schema = set(), 0, 0, 0, 0
    lineage_fields, lineage_to_datasets, test_jobs, assertions = 0, 0, 0, 0
    seed_relations = {n["relation"] for n in project["nodes"].values() if n["kind"] == "seed"}
    seeds_as_inputs = 0
    for e in events:
        by_type[e.get("eventType", "?")] = by_type.get(e.get("eventType", "?"), 0) + 1
        jobs.add(e["job"]["name"])
        if e["eventType"] != "COMPLETE":
            continue
        job_type = ((e["job"].get("facets") or {}).get("jobType") or {}).get("jobType")
        if job_type == "TEST":
            test_jobs += 1
            assertions += sum(len(((i.get("inputFacets") or {}).get("dataQualityAssertions") or {}).get("assertions", []))
                              for i in e.get("inputs", []))
            continue
        if "sql" in (e["job"].get("facets") or {}):
            with_sql += 1
        names = {d["name"] for d in e.get("inputs", [])}
        for o in e.get("outputs", []):
            if "columnLineage" in (o.get("facets") or {}):
                with_column_lineage += 1
                for f in o["facets"]["columnLineage"].get("fields", {}).values():
                    for source in f.get("inputFields", []):
                        lineage_fields += 1
                        lineage_to_datasets += source["name"] in names
        for i in e.get("inputs", []):
            inputs += 1
            inputs_with_schema += "schema" in (i.get("facets") or {})
            seeds_as_inputs += i["name"] in seed_relations
    models_reading_seeds = sum(1 for n in project["nodes"].values()
                               if n["kind"] == "model" and any(p.startswith("seed.") for p in n["parents"]))
    namespaces = sorted({d["namespace"] for e in events for d in e.get("inputs", []) + e.get("outputs", [])})
    return {"events": len(events), "by_type": by_type, "jobs": len(jobs),
            "complete_with_sql_facet": with_sql, "outputs_with_column_lineage": with_column_lineage,
            "column_lineage_input_fields": lineage_fields, "column_lineage_fields_naming_an_input": lineage_to_datasets,
            "inputs": inputs, "inputs_with_schema_facet": inputs_with_schema,
            "test_jobs": test_jobs, "test_assertions": assertions,
            "seed_inputs": seeds_as_inputs, "models_reading_seeds": models_reading_seeds,
            "dataset_namespaces": namespaces}


# --- 2. breaking changes ---------------------------------------------------------------

KINDS = ("drop", "rename", "type", "nulls", "enum", "precision")
NUMERIC = ("integer", "bigint", "smallint", "numeric", "double precision", "real")


@dataclass
class Change:
    id: str
    kind: str            # drop | rename | type | nulls | enum | precision
    node: str            # dbt unique id of the changed source, seed or model
    relation: str        # <db>.<schema>.<table>, as dbt-ol names the dataset
    column: str          # the touched column (for a rename: the old name)
    detail: str          # what exactly happens, for people
    new_name: str | None = None
    new_type: str | None = None
    owner_team: str = ""
    old_value: str | None = None     # enum: the value no longer produced …
    new_value: str | None = None     # … and the accepted value its rows take instead


def type_change(column_type: str) -> tuple[str, str]:
    """(new type, SQL expression of the old value `{c}` in it): an incompatible change."""
    t = column_type.lower()
    if t.startswith(("text", "character")):
        return "integer", "hashtext({c})"          # a status code instead of a label: not numeric text
    return "text", "cast({c} as text)"              # numbers, dates, timestamps and booleans become text


# Transitive cases the generated draw might miss: a column lost through a model that
# passes its parent on with `select *` (customers_public, orders_public), or NULLs that
# travel two hops before a test sees them. Each is a change to a dataset whose
# dataset-granular consumers are not the teams it breaks.
HAND_PICKED = [
    ("drop", "model.impact.dim_customers", "segment"),
    ("rename", "model.impact.fct_orders", "net_usd"),
    ("type", "model.impact.fct_orders", "order_status"),
    ("nulls", "model.impact.stg_orders", "customer_id"),
    # NULL join keys: payments whose order is NULL drop out of risk's join, and exec's
    # check of completed orders (reading only what the join produced) fails.
    ("nulls", "model.impact.int_payments_by_order", "order_id"),
    ("nulls", "model.impact.stg_payments", "order_id"),
    # A cross-team relationships test (marketing's, on platform's model) and a singular
    # test of support's reading logistics' enum column.
    ("precision", "model.impact.dim_customers", "customer_id"),
    ("enum", "model.impact.stg_shipments", "service_level"),
]


def precision_change(column_type: str) -> str | None:
    """SQL of the old value `{c}` with less precision, in the same type; None: no precision to lose."""
    t = column_type.lower()
    if t in ("integer", "bigint", "smallint"):
        return "({c} / 100) * 100"
    if t.startswith(("numeric", "double", "real")):
        return "cast(round(cast({c} as numeric), 0) as " + t + ")"
    if t.startswith(("text", "character")):
        return "left({c}, 3)"
    if t.startswith("timestamp"):
        return "date_trunc('day', {c})"
    if t == "date":
        return "cast(date_trunc('month', {c}) as date)"
    return None


def accepted_values(project: dict) -> dict[tuple[str, str], list[str]]:
    """(node, column) -> the values its accepted_values test allows: the enum columns."""
    return {(t["attached"], t["column"]): t["values"] for t in project["tests"].values()
            if t["test"] == "accepted_values" and t.get("values")}


def descendants(project: dict, uid: str) -> set[str]:
    found, todo = set(), [uid]
    while todo:
        for child in project["nodes"][todo.pop()]["children"]:
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def generate_changes(project: dict, *, count: int, seed: int) -> list[Change]:
    """The hand-picked changes, then the four kinds in turn up to `count`, over the
    sources, seeds and models with a descendant owned by another team (a change
    nobody else can see is not worth a run); (dataset, column) pairs are drawn in
    a seeded random order, one per dataset per kind before any dataset gets a second.
    NULLs are injected only into columns that have none in the clean build and that
    a not_null test checks or a model below reads: making a column nullable."""
    nodes = project["nodes"]
    not_null = {(t["attached"], t["column"]) for t in project["tests"].values() if t["test"] == "not_null"}
    enums = accepted_values(project)
    eligible = sorted(uid for uid, n in nodes.items()
                      if any(nodes[d]["owner_team"] != n["owner_team"] for d in descendants(project, uid)))
    rng = random.Random(seed)
    candidates: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}
    for uid in eligible:
        below = " ".join(nodes[d]["code"] for d in descendants(project, uid))
        for column in nodes[uid]["columns"]:
            name = column["name"]
            read_below = re.search(rf"\b{re.escape(name)}\b", below) is not None
            for kind in KINDS:
                if kind == "nulls" and (column["nulls"] or not ((uid, name) in not_null or read_below)):
                    continue
                if kind == "enum" and len(enums.get((uid, name), [])) < 2:
                    continue
                if kind == "precision" and (precision_change(column["type"]) is None or not read_below):
                    continue
                candidates[kind].append((uid, name))
    for kind in KINDS:
        rng.shuffle(candidates[kind])
    chosen = [make_change(project, kind, uid, column) for kind, uid, column in HAND_PICKED][:count]
    taken = {(c.kind, c.node, c.column) for c in chosen}
    used: dict[str, set[str]] = {k: {c.node for c in chosen if c.kind == k} for k in KINDS}
    while len(chosen) < count:
        progress = False
        for kind in KINDS:
            if len(chosen) >= count:
                break
            fresh = [(u, c) for u, c in candidates[kind] if (kind, u, c) not in taken]
            if not fresh:
                continue
            if all(u in used[kind] for u, _ in fresh):
                used[kind].clear()          # every dataset had one of this kind: start a second round
            uid, column = next((u, c) for u, c in fresh if u not in used[kind])
            taken.add((kind, uid, column))
            used[kind].add(uid)
            chosen.append(make_change(project, kind, uid, column))
            progress = True
        if not progress:
            break
    return chosen


def make_change(project: dict, kind: str, uid: str, column: str) -> Change:
    node = project["nodes"][uid]
    column_type = next(c["type"] for c in node["columns"] if c["name"] == column)
    change = Change(id=f"{kind}:{node['relation']}.{column}", kind=kind, node=uid, relation=node["relation"],
                    column=column, detail="", owner_team=node["owner_team"])
    if kind == "drop":
        change.detail = f"drop column {column}"
    elif kind == "rename":
        change.new_name = f"{column}_v2"
        change.detail = f"rename column {column} to {change.new_name}"
    elif kind == "type":
        change.new_type, _ = type_change(column_type)
        change.detail = f"change type of {column} from {column_type} to {change.new_type}"
    elif kind == "enum":
        values = accepted_values(project)[(uid, column)]
        change.old_value, change.new_value = values[0], values[1]
        change.detail = f"narrow the enum {column}: '{values[0]}' no longer produced, its rows become '{values[1]}'"
    elif kind == "precision":
        change.detail = f"lose precision of {column}: " + precision_change(column_type).format(c=column)
    else:
        change.detail = f"set {column} to NULL in one row in five"
    return change


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_change_sql(change: Change, node: dict) -> str:
    """The change as statements on a source or seed table."""
    table = f"{_q(node['schema'])}.{_q(node['table'])}"
    c = _q(change.column)
    if change.kind == "drop":
        return f"ALTER TABLE {table} DROP COLUMN {c}"
    if change.kind == "rename":
        return f"ALTER TABLE {table} RENAME COLUMN {c} TO {_q(change.new_name)}"
    if change.kind == "type":
        column_type = next(x["type"] for x in node["columns"] if x["name"] == change.column)
        new_type, expr = type_change(column_type)
        return f"ALTER TABLE {table} ALTER COLUMN {c} TYPE {new_type} USING {expr.format(c=c)}"
    if change.kind == "enum":
        return f"UPDATE {table} SET {c} = {_literal(change.new_value)} WHERE {c} = {_literal(change.old_value)}"
    if change.kind == "precision":
        column_type = next(x["type"] for x in node["columns"] if x["name"] == change.column)
        return f"UPDATE {table} SET {c} = {precision_change(column_type).format(c=c)}"
    key = _q(node["columns"][0]["name"])
    return f"UPDATE {table} SET {c} = NULL WHERE abs(hashtext(cast({key} as text))) % 5 = 0"


def model_change_sql(change: Change, node: dict) -> str:
    """The model's SQL with the change applied to its output: the original query
    becomes a CTE and the final select drops, renames, casts or nulls the column."""
    key = _q(node["columns"][0]["name"])
    expressions = []
    for column in node["columns"]:
        name = column["name"]
        c = _q(name)
        if name != change.column:
            expressions.append(c)
        elif change.kind == "rename":
            expressions.append(f"{c} as {_q(change.new_name)}")
        elif change.kind == "type":
            _, expr = type_change(column["type"])
            expressions.append(f"{expr.format(c=c)} as {c}")
        elif change.kind == "nulls":
            expressions.append(f"case when abs(hashtext(cast({key} as text))) % 5 = 0 then null else {c} end as {c}")
        elif change.kind == "enum":
            expressions.append(f"case when {c} = {_literal(change.old_value)} then {_literal(change.new_value)} "
                               f"else {c} end as {c}")
        elif change.kind == "precision":
            expressions.append(f"{precision_change(column['type']).format(c=c)} as {c}")
    original = node["code"].rstrip()
    return (f"-- bench/impact.py change {change.id}: {change.detail}\n"
            f"with before_change as (\n{original}\n)\n\nselect\n    " + ",\n    ".join(expressions)
            + "\nfrom before_change\n")


# --- 3. ground truth --------------------------------------------------------------------

@dataclass
class Outcome:
    change: dict
    errored_models: list[str] = field(default_factory=list)
    failed_tests: list[str] = field(default_factory=list)
    skipped_models: int = 0
    broken: dict[str, list[str]] = field(default_factory=dict)   # team -> the models and tests that broke
    broken_teams: list[str] = field(default_factory=list)        # minus the changed dataset's owner
    selection: str = "downstream"
    seconds: float = 0.0
    project_hash: str = ""


def test_team(project: dict, unique_id: str) -> str:
    """The team a test belongs to: a singular test's own, else its model's."""
    test = project["tests"][unique_id]
    return test.get("owner_team") or project["nodes"][test["attached"]]["owner_team"]


def selector(change: Change, node: dict) -> str:
    if node["kind"] == "source":
        return f"source:{node['name']}+"
    return f"{node['name']}+"


def run_change(tools: Path, project: dict, change: Change, *, full: bool = False) -> Outcome:
    """Reset to the clean state, apply the change, `dbt run` then `dbt test` (not
    `dbt build`, which would skip what lies below a failed test), and read which
    models errored and which tests failed."""
    started = time.perf_counter()
    node = project["nodes"][change.node]
    recreate_database(WORK_DB, template=WAREHOUSE)
    work = sync_work_copy(clean=False)
    edited = None
    try:
        if node["kind"] == "model":
            edited = work / node["path"]
            edited.write_text(model_change_sql(change, node))
        else:
            with psycopg.connect(db_url(WORK_DB), autocommit=True) as conn:
                conn.execute(table_change_sql(change, node))
        select = [] if full else ["--select", selector(change, node)]
        dbt(tools, ["run", *select], database=WORK_DB, check=False)
        run_results = read_target("run_results.json")
        dbt(tools, ["test", *select], database=WORK_DB, check=False)
        test_results = read_target("run_results.json")
    finally:
        if edited is not None:
            shutil.copyfile(PROJECT / node["path"], edited)
    outcome = Outcome(change=asdict(change), selection="full" if full else "downstream", project_hash=project["hash"])
    for r in run_results["results"]:
        if r["status"] == "error":
            outcome.errored_models.append(r["unique_id"])
            team = project["nodes"][r["unique_id"]]["owner_team"]
            outcome.broken.setdefault(team, []).append(r["unique_id"])
        elif r["status"] == "skipped":
            outcome.skipped_models += 1
    for r in test_results["results"]:
        if r["status"] in ("fail", "error"):
            outcome.failed_tests.append(r["unique_id"])
            team = test_team(project, r["unique_id"])
            outcome.broken.setdefault(team, []).append(r["unique_id"])
    outcome.broken_teams = sorted(t for t in outcome.broken if t != change.owner_team)
    outcome.seconds = time.perf_counter() - started
    return outcome


# --- the captured files ---------------------------------------------------------------

def load_captured() -> tuple[dict, list[dict]] | None:
    try:
        project = json.loads((CAPTURED / "project.json").read_text())
        events = [json.loads(x) for x in (CAPTURED / "baseline_events.jsonl").read_text().splitlines() if x.strip()]
    except FileNotFoundError:
        return None
    return project, events


def save_captured(project: dict, events: list[dict]) -> None:
    CAPTURED.mkdir(parents=True, exist_ok=True)
    (CAPTURED / "project.json").write_text(json.dumps(project, indent=1, sort_keys=True) + "\n")
    (CAPTURED / "baseline_events.jsonl").write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in events))
    # The artefacts docs/adopting.md imports (`import_dbt`) beside the events they go with.
    for name in ("manifest.json", "catalog.json"):
        (CAPTURED / f"{name}.gz").write_bytes(gzip.compress((WORK / "project" / "target" / name).read_bytes(), mtime=0))


def load_ground_truth() -> dict[str, dict]:
    path = CAPTURED / "ground_truth.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_ground_truth(cache: dict[str, dict]) -> None:
    CAPTURED.mkdir(parents=True, exist_ok=True)
    (CAPTURED / "ground_truth.json").write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")


def cache_key(change: Change, project: dict) -> str:
    return f"{change.id}@{project['hash']}"
