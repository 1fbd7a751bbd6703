"""Impact routing: does a breaking change ask every consumer team it breaks, and only those?

    python bench/impact.py [--changes 96] [--seed 11] [--refresh] [--recapture]
                           [--verify-full 2] [--ask http|inprocess|none]
    python bench/impact.py --one-run [--changes 96] [--seed 11]
    python bench/impact.py --smoke [--smoke-changes 8]
    python bench/impact.py --world [--world-datasets 10000] [--world-jobs 2000] [--world-columns 20]

The ground truth comes from a real tool, never from our own lineage:

1. A dbt project on PostgreSQL (bench/dbt_impact/: 8 raw sources owned by an ingest
   team, each with its loader's bookkeeping columns and a few that only its owner's
   staging keeps, 3 seeds, 55 models owned by 9 teams, 199 tests) runs in its own virtualenv, .venv-tools/dbt
   (dbt-core<1.12, dbt-postgres, openlineage-dbt; created if missing), on a scratch
   database (IMPACT_WAREHOUSE_DB, default impact_wh, on IMPACT_PG_URL, default
   postgres://postgres@127.0.0.1:5432; created, and dropped at the end unless
   --keep-warehouse).
2. One clean `dbt-ol run` + `dbt-ol test` emits real OpenLineage events (file
   transport); they are kept in bench/dbt_impact/captured/ with a digest of the
   project (manifest parents, owners, columns) and are what the product ingests.
3. Breaking changes are generated from the project (`--changes`, seeded): drop,
   rename, an incompatible type, NULLs in a column that had none, an enum narrowed
   (a value no longer produced), precision lost (rounded, truncated); to raw sources
   and seeds (ALTER TABLE / UPDATE) and to models (the model's SQL rewritten). For
   each: a copy of the clean database, the change, `dbt run` then `dbt test` on
   the changed node and everything below it (not `dbt build`, which would skip
   what lies below a failed test). The teams owning a model that errored or a
   test that failed, minus the changed dataset's owner, are the teams it *broke*.
   Results are cached in captured/ground_truth.json by change id and project
   hash (`--refresh` recomputes; `--verify-full N` also runs N changes on the
   whole project to show the downstream selection gives the same answer).
4. The product: a scratch registry database (BENCH_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/reg_impact_bench), the teams with a member
   and a team token each, every dbt relation as a dataset owned by its team,
   each team registered as a consumer of every dataset its models read (today's
   dataset-granular rule), the captured events posted to POST /api/v1/lineage
   with the token of the job's team; then, for each change, the product is asked
   for the impact without opening anything (`ask_product`, one adapter: the
   HTTP endpoint POST /api/contracts/<name>/impact/, or in-process
   change_requests.impact.preview, the function it calls). If neither exists yet, the ground
   truth and today's rule are printed with a note.
   `--one-run`: as an organisation adopting the registry would, instead: the datasets,
   owners and consumers from `import_dbt` (the project's manifest and catalog), an
   ownership rules file (one CODEOWNERS line per models folder, the folder's team:
   what the per-team run's tokens say), then ONE `dbt-ol build` of the whole project
   posted with ONE token (the platform team's); every job's team is the product's to
   decide. The JSON gets `"one_run": true`.
5. `--world`: a generated registry of 10,000 datasets and 2,000 consumer jobs
   reading 20-column datasets (ColumnRead rows written with COPY); the p50/p95
   of one impact computation.

Prints a readable summary, then one JSON line (last):
{"changes", "broken_teams", "ideal_acks", "missed", "required_acks", "required_vs_ideal", "by_kind",
 "dataset_granular_acks", "ratio",
 "false_not_affected", "dataset_granular_missed", "downstream_granular_acks",
 "downstream_granular_missed", "ratio_vs_downstream_granular", "ideal_ratio", "ratio_within_granular",
 "ideal_ratio_within_granular", "floor_acks", "floor_ratio", "product", "effect_only", "timings"}
`missed` and `false_not_affected` must be 0; `required_vs_ideal` = required_acks / ideal_acks (the acks
of a router asking exactly the broken teams), target <= 1.2; `by_kind`: per kind of change (drop,
rename, type, nulls, enum narrowed, precision) `required` (broken teams), `actual` (asked), `missed`.
`ratio` = required / dataset-granular acks (the earlier yardstick).
`--smoke`: no dbt: the captured events and the cached ground truth of the first --smoke-changes
changes, the product asked in process (seconds; what CI runs): change_requests.impact.preview with
the proposed contract document, the function POST /api/contracts/<name>/impact/ calls.
`effect_only`: the changes whose proposed document the publish gates refuse (no dataframe check
says "rounded to hundreds"), asked by their effect alone (preview_change).
`ideal_ratio` is what a router asking exactly the broken teams would score: teams broken
through a model in between count above the line but were never asked below it.
`*_within_granular` count only the asked teams that today's rule also asks.
`downstream_granular_*`: today's rule over the changed dataset and everything built from it
(the dbt graph), which misses nobody either; `ratio_vs_downstream_granular` = required / those.
`floor_acks`: the fewest asks of any router that misses nobody and asks, as the issue's rule
says, every team whose observed usage includes the touched column of the changed dataset
itself (or all of it); `floor_ratio` = those / dataset-granular acks.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _impact_dbt as dbt_side  # noqa: E402
from _common import ROOT, django_env, free_port, fresh_database, percentile  # noqa: E402
from _impact_dbt import Change, log  # noqa: E402

REGISTRY_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reg_impact_bench")
NAMESPACE = "postgres://127.0.0.1:5432"      # what dbt-ol names the warehouse's datasets with
CONTRACT_DOMAIN = "impact"
REPORT = ROOT / "var" / "impact" / "report.json"
WORK_ONE_RUN = ROOT / "var" / "impact" / "one-run"


# --- ground truth -----------------------------------------------------------------------

def captured_project(tools, *, recapture: bool) -> tuple[dict, list[dict], dict]:
    timings: dict[str, float] = {}
    captured = None if recapture else dbt_side.load_captured()
    if captured and captured[0].get("hash") == dbt_side.project_hash():
        return *captured, timings
    if captured:
        log("The dbt project changed since its events were captured: capturing again.")
    project, events, timings = dbt_side.build_baseline(tools)
    dbt_side.save_captured(project, events)
    return project, events, timings


def print_project(project: dict, summary: dict) -> None:
    nodes = project["nodes"].values()
    kinds = {k: sum(1 for n in nodes if n["kind"] == k) for k in ("source", "seed", "model")}
    teams = dbt_side.teams_of(project)
    per_team = {t: sum(1 for n in nodes if n["kind"] == "model" and n["owner_team"] == t) for t in teams}
    log(f"Project: {kinds['model']} models, {kinds['source']} sources, {kinds['seed']} seeds, "
        f"{len(project['tests'])} tests; {len(teams)} teams (models each: "
        + ", ".join(f"{t} {c}" for t, c in per_team.items()) + ")")
    log(f"Events: {summary['events']} ({', '.join(f'{k} {v}' for k, v in summary['by_type'].items())}) from "
        f"{summary['jobs']} jobs; {summary['complete_with_sql_facet']} COMPLETEs carry the sql facet (compiled SQL), "
        f"{summary['outputs_with_column_lineage']} outputs a columnLineage facet "
        f"({summary['column_lineage_fields_naming_an_input']} of {summary['column_lineage_input_fields']} input fields "
        f"name an input dataset; the rest name a CTE); {summary['inputs_with_schema_facet']} of {summary['inputs']} "
        f"model inputs carry a schema facet; {summary['test_jobs']} test jobs report {summary['test_assertions']} "
        f"assertions; seeds among model inputs: {summary['seed_inputs']} "
        f"({summary['models_reading_seeds']} models read a seed: dbt-ol leaves seeds out); "
        f"dataset namespace {', '.join(summary['dataset_namespaces'])}")


def ground_truth(tools, project: dict, changes: list[Change], *, refresh: bool, verify_full: int) -> tuple[list[dict], dict]:
    cache = dbt_side.load_ground_truth()
    todo = [c for c in changes if refresh or dbt_side.cache_key(c, project) not in cache]
    timings = {"computed": len(todo), "cached": len(changes) - len(todo)}
    if todo or verify_full:
        dbt_side.ensure_warehouse(tools, project)
    started = time.perf_counter()
    outcomes = []
    for index, change in enumerate(changes, 1):
        key = dbt_side.cache_key(change, project)
        if change in todo:
            outcome = dbt_side.asdict(dbt_side.run_change(tools, project, change))
            cache[key] = outcome
            dbt_side.save_ground_truth(cache)     # after every change: the run may be stopped at any time
            how = f"{outcome['seconds']:.1f}s"
        else:
            outcome, how = cache[key], "cached"
        outcomes.append(outcome)
        broken = ", ".join(outcome["broken_teams"]) or "nobody else"
        log(f"  [{index:2}/{len(changes)}] {change.id}: breaks {broken} "
            f"({len(outcome['errored_models'])} models errored, {len(outcome['failed_tests'])} tests failed; {how})")
    timings["ground_truth_s"] = round(time.perf_counter() - started, 1)
    if todo:
        timings["per_change_s"] = round(sum(o["seconds"] for o in outcomes if o["change"]["id"] in {c.id for c in todo})
                                        / len(todo), 1)
    mismatches = []
    for change in changes[:verify_full]:
        key = dbt_side.cache_key(change, project) + "#full"
        full = cache.get(key) if not refresh else None
        if full is None:
            log(f"  verifying {change.id} on the whole project …")
            full = cache[key] = dbt_side.asdict(dbt_side.run_change(tools, project, change, full=True))
            dbt_side.save_ground_truth(cache)
        downstream = next(o for o in outcomes if o["change"]["id"] == change.id)
        same = all(sorted(full[k]) == sorted(downstream[k]) for k in ("errored_models", "failed_tests", "broken_teams"))
        if not same:
            mismatches.append(change.id)
    if verify_full:
        log(f"  the downstream selection gave the whole project's answer for {verify_full - len(mismatches)} of "
            f"{verify_full} changes" + (f"; differs for {mismatches}" if mismatches else ""))
        timings["verify_mismatches"] = len(mismatches)
    return outcomes, timings


def registrations(project: dict) -> dict[str, set[str]]:
    """relation -> teams registered as its consumers: every team whose models read it
    (manifest parents), other than its owner. Today's rule asks all of them."""
    nodes = project["nodes"]
    consumers: dict[str, set[str]] = {n["relation"]: set() for n in nodes.values()}
    for node in nodes.values():
        for parent in node["parents"]:
            if parent in nodes and nodes[parent]["owner_team"] != node["owner_team"]:
                consumers[nodes[parent]["relation"]].add(node["owner_team"])
    # A team's tests read what they name too: a relationships test the other model, a
    # singular test every model it selects from (the manifest's depends_on).
    for unique_id, test in project["tests"].items():
        team = dbt_side.test_team(project, unique_id)
        for parent in test["parents"]:
            if parent in nodes and nodes[parent]["owner_team"] != team:
                consumers[nodes[parent]["relation"]].add(team)
    return consumers


# --- the product ---------------------------------------------------------------------------

class ProductUnavailable(Exception):
    """The product does not offer the interface yet (reason in the message)."""


def setup_django(url: str) -> None:
    os.environ.update(django_env(url, CONTRACT_STORE=str(ROOT / "var" / "impact" / "contract-store"),
                                 FRESHNESS_IN_PROCESS_EVALUATOR="0"))
    sys.path[:0] = [str(ROOT), str(ROOT / "client")]
    import django

    django.setup()


def populate_registry(project: dict) -> dict:
    """Teams with a member and a team token, datasets owned by their dbt team, consumer
    registrations from the manifest. Returns {"tokens": {team: secret}, "users": …}."""
    from django.contrib.auth import get_user_model

    from registry.models import ApiToken, Dataset, Membership, Team

    user_model = get_user_model()
    teams, users, tokens, user_tokens = {}, {}, {}, {}
    for slug in dbt_side.teams_of(project):
        teams[slug] = Team.objects.create(name=slug.title(), slug=slug)
        users[slug] = user_model.objects.create_user(f"{slug}-lead", email=f"{slug}@example.com")
        Membership.objects.create(team=teams[slug], user=users[slug])
        tokens[slug] = ApiToken.issue(f"{slug} dbt jobs", team=teams[slug])[1]
        user_tokens[slug] = ApiToken.issue(f"{slug} lead", user=users[slug])[1]
    datasets = {}
    for node in project["nodes"].values():
        # FULL: the consumers' models read the new data with their old expectations.
        dataset = Dataset.objects.create(namespace=NAMESPACE, name=node["relation"], compatibility_mode="FULL")
        owner = node["owner_team"]
        dataset.claim(teams[owner], owner=users[owner], by=users[owner])
        datasets[node["relation"]] = dataset
    registered = 0
    for relation, consumer_teams in registrations(project).items():
        for slug in sorted(consumer_teams):
            datasets[relation].register_consumer(teams[slug], by=users[slug])
            registered += 1
    return {"tokens": tokens, "user_tokens": user_tokens, "users": users, "teams": teams, "datasets": datasets,
            "registered": registered}


def ownership_rules(project: dict) -> str:
    """One CODEOWNERS line per models folder: the folder's team (the teams the per-team
    run's tokens give each model's jobs and its tests' jobs)."""
    folders: dict[str, str] = {}
    for node in project["nodes"].values():
        if node["kind"] == "model":
            folders[str(Path(node["path"]).parent)] = node["owner_team"]
    return "# dbt models by folder\n" + "".join(f"{folder}/  @{team}\n" for folder, team in sorted(folders.items()))


def adopt_registry(project: dict, *, manifest: Path, catalog: Path) -> dict:
    """Teams with a member; the ownership rules file; `import_dbt` (datasets, owner teams,
    consumers, drafts); ONE ingest token, the platform team's."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from registry.models import ApiToken, Dataset, Membership, Team

    user_model = get_user_model()
    teams, users, user_tokens = {}, {}, {}
    for slug in dbt_side.teams_of(project):
        teams[slug] = Team.objects.create(name=slug.title(), slug=slug)
        users[slug] = user_model.objects.create_user(f"{slug}-lead", email=f"{slug}@example.com")
        Membership.objects.create(team=teams[slug], user=users[slug])
        user_tokens[slug] = ApiToken.issue(f"{slug} lead", user=users[slug])[1]
    # A platform-wide ingest token, made with the documented command: one `dbt build`
    # writes every team's datasets.
    out = io.StringIO()
    call_command("create_token", "dbt build", team="platform", scopes=["lineage:write", "lineage:write:any"],
                 stdout=out, stderr=open(os.devnull, "w"))
    one_token = out.getvalue().strip()
    rules = WORK_ONE_RUN / "OWNERS"
    rules.write_text(ownership_rules(project))
    call_command("load_ownership_rules", str(rules), note="models folders", stdout=open(os.devnull, "w"))
    call_command("import_dbt", manifest=manifest, catalog=catalog, namespace=NAMESPACE,
                 stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))
    # FULL, as the per-team run: the consumers' models read the new data with their old expectations.
    Dataset.objects.filter(namespace=NAMESPACE).update(compatibility_mode="FULL")
    datasets = {d.name: d for d in Dataset.objects.filter(namespace=NAMESPACE)}
    missing = sorted(n["relation"] for n in project["nodes"].values() if n["relation"] not in datasets)
    if missing:
        raise SystemExit(f"import_dbt made no dataset for {missing}")
    from registry.models import Consumer

    registered = Consumer.objects.filter(dataset__namespace=NAMESPACE).count()
    return {"tokens": {}, "one_token": one_token, "user_tokens": user_tokens, "users": users, "teams": teams,
            "datasets": datasets, "registered": registered}


def one_dbt_build(tools) -> tuple[list[dict], Path, Path, float]:
    """`dbt docs generate` (the catalog import_dbt reads) then ONE `dbt-ol build` of the whole
    project on the clean warehouse; its events, the manifest and catalog, the build's seconds."""
    WORK_ONE_RUN.mkdir(parents=True, exist_ok=True)
    dbt_side.dbt(tools, ["docs", "generate"], database=dbt_side.WAREHOUSE)
    target = dbt_side.WORK / "project" / "target"
    manifest, catalog = WORK_ONE_RUN / "manifest.json", WORK_ONE_RUN / "catalog.json"
    catalog.write_bytes((target / "catalog.json").read_bytes())
    events_file = WORK_ONE_RUN / "events.jsonl"
    events_file.unlink(missing_ok=True)
    config = WORK_ONE_RUN / "openlineage.yml"
    config.write_text(json.dumps({"transport": {"type": "file", "log_file_path": str(events_file), "append": True}}))
    log("One `dbt-ol build` of the whole project …")
    started = time.perf_counter()
    dbt_side.dbt(tools, ["build"], database=dbt_side.WAREHOUSE, executable="dbt-ol",
                 extra_env={"OPENLINEAGE_CONFIG": str(config), "OPENLINEAGE_NAMESPACE": dbt_side.JOB_NAMESPACE})
    seconds = round(time.perf_counter() - started, 1)
    manifest.write_bytes((target / "manifest.json").read_bytes())
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    if not events:
        raise SystemExit(f"dbt-ol wrote no events to {events_file}")
    log(f"  {len(events)} events in {seconds}s")
    return events, manifest, catalog, seconds


def start_server(url: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = django_env(url, CONTRACT_STORE=str(ROOT / "var" / "impact" / "contract-store"), FRESHNESS_IN_PROCESS_EVALUATOR="0")
    command = [sys.executable, "-m", "granian", "--interface", "wsgi", "registry.wsgi:application", "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1", "--blocking-threads", "4", "--log-level", "warning"]
    server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return server, port
        except OSError:
            time.sleep(0.2)
    stop_server(server)
    raise SystemExit("the server did not answer /healthz in time")


def stop_server(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=30)


def request(port: int, method: str, path: str, body: dict | None, token: str) -> tuple[int, dict | str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    payload = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=payload, headers={"Authorization": f"Bearer {token}",
                                                       "Content-Type": "application/json", "Accept": "application/json"})
    response = conn.getresponse()
    raw = response.read().decode()
    conn.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw


def job_team(event: dict, project: dict) -> str:
    """The team a job belongs to: the owner of the dbt node it runs (or tests)."""
    node = ((event.get("job", {}).get("facets") or {}).get("dbt_node") or {}).get("unique_id")
    if node in project["nodes"]:
        return project["nodes"][node]["owner_team"]
    if node in project["tests"]:     # a singular test: its own job, its own team
        return dbt_side.test_team(project, node)
    outputs = [d["name"] for d in event.get("outputs", [])]
    for n in project["nodes"].values():
        if n["relation"] in outputs:
            return n["owner_team"]
    return "platform"      # the run-wide dbt job (no inputs or outputs): the data platform's


def shifted(events: list[dict]) -> list[dict]:
    """The events moved in time so the latest happened a minute ago (their order and
    spacing kept): captured events age, and the product forgets usage older than
    COLUMN_USAGE_WINDOW."""
    times = [datetime.fromisoformat(e["eventTime"].replace("Z", "+00:00")) for e in events]
    delta = datetime.now(UTC) - timedelta(minutes=1) - max(times)
    out = []
    for event, at in zip(events, times, strict=True):
        copy = json.loads(json.dumps(event))
        copy["eventTime"] = (at + delta).isoformat().replace("+00:00", "Z")
        out.append(copy)
    return out


def ingest(port: int, events: list[dict], project: dict, tokens: dict[str, str], one_token: str | None = None) -> dict:
    statuses: dict[int, int] = {}
    per_team: dict[str, int] = {}
    for event in shifted(events):
        team = job_team(event, project)
        status, body = request(port, "POST", "/api/v1/lineage", event, one_token or tokens[team])
        statuses[status] = statuses.get(status, 0) + 1
        per_team[team] = per_team.get(team, 0) + 1
        if status != 201:
            log(f"  {event['job']['name']} {event['eventType']}: {status} {str(body)[:300]}")
    return {"statuses": statuses, "per_team": per_team}


def column_usage_recorded() -> dict:
    """What the ingest learned about who reads which columns (registry.usage.ColumnRead)."""
    from django.db.models import Count

    from registry.usage import ALL_COLUMNS, ColumnRead

    rows = ColumnRead.objects.all()
    return {"rows": rows.count(), "jobs": rows.values("job_namespace", "job_name").distinct().count(),
            "all_or_unknown": rows.filter(column=ALL_COLUMNS).count(),
            "by_source": dict(rows.order_by().values("source").annotate(n=Count("id")).values_list("source", "n"))}


# --- asking the product: the one adapter ----------------------------------------------------------

PG_TO_DTYPE = {"integer": "int32", "smallint": "int32", "bigint": "int64", "numeric": "float64", "real": "float32",
               "double precision": "float64", "boolean": "bool", "text": "str", "character varying": "str",
               "date": "datetime64[ns]", "timestamp without time zone": "datetime64[ns]",
               "timestamp with time zone": "datetime64[ns]"}


def contract_name(node: dict) -> str:
    return f"{CONTRACT_DOMAIN}.{node['schema']}.{node['table']}"


def contract_document(node: dict, *, version: str = "1.0", change: Change | None = None) -> dict:
    """A minimal dataframe contract from the dbt columns (a column with no NULLs in the
    clean build is not nullable); with `change`, the proposed version."""
    columns = []
    for column in node["columns"]:
        entry = {"name": column["name"], "dtype": PG_TO_DTYPE.get(column["type"], "str"),
                 "nullable": bool(column.get("nulls")), "coerce": True, "required": True, "unique": False, "checks": []}
        if change is not None and column["name"] == change.column:
            if change.kind == "drop":
                continue
            if change.kind == "rename":
                entry["name"] = change.new_name
            elif change.kind == "type":
                entry["dtype"] = PG_TO_DTYPE[change.new_type]
            elif change.kind == "nulls":
                entry["nullable"] = True
            elif change.kind == "enum":
                kept = [v for v in dbt_side.accepted_values(PROJECT_OF[0])[(change.node, change.column)]
                        if v != change.old_value]
                entry["checks"] = [{"isin": kept}]
            elif change.kind == "precision":
                entry["checks"] = [{"str_length": {"max_value": 3}}] if entry["dtype"] == "str" else \
                    [{"multiple_of": 100}]
        columns.append(entry)
    return {
        "schema": {"name": contract_name(node), "domain": CONTRACT_DOMAIN, "subdomains": [node["schema"]],
                   "entity": node["table"], "version": version, "owner": node["owner_team"], "schema_type": "dataframe",
                   "description": f"dbt relation {node['relation']}"},
        "meta": {},
        "config": {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None,
                   "add_missing_columns": False, "unique_column_names": False},
        "columns": columns,
    }


# What each kind of change does to its column (registry.usage.Effect), as the checker's
# report would say it (change_requests.impact.column_effects).
EFFECTS = {"drop": "removed", "rename": "removed", "type": "retyped", "nulls": "nulls", "enum": "narrowed",
           "precision": "values"}
PROJECT_OF: list[dict] = [{}]   # the project contract_document reads enum values from


class Asker:
    """Asks the product for a change's impact. `mode` is "http" (POST
    /api/contracts/<name>/impact/ with the proposed contract document; each dataset
    gets a minimal contract, published and bound, on first use) or "inprocess"
    (change_requests.impact.preview(document), the function that endpoint calls, with the
    same contract and the same proposed document: the bench measures the product's path,
    retypes type-checked against the consumers' SQL included). Adapt here when the
    product's interface settles."""

    def __init__(self, mode: str, project: dict, registry: dict, port: int | None):
        self.mode, self.project, self.registry, self.port = mode, project, registry, port
        self.published: set[str] = set()
        self.effect_only: list[str] = []  # changes whose proposed document the gates refuse
        if mode == "inprocess":
            try:
                from change_requests.impact import preview
            except ImportError as exc:
                raise ProductUnavailable(f"change_requests.impact.preview is not there yet ({exc})") from None
            self.preview = preview
        elif mode == "http":
            from django.urls import Resolver404, resolve

            try:
                resolve(f"/api/contracts/{CONTRACT_DOMAIN}.x.y/impact/")
            except Resolver404:
                raise ProductUnavailable("POST /api/contracts/<name>/impact/ does not exist yet (404)") from None

    def node_of(self, change: Change) -> dict:
        return self.project["nodes"][change.node]

    def ensure_contract(self, node: dict) -> None:
        if node["relation"] in self.published:
            return
        from contracts_app.models import Contract
        from contracts_app.publishing import publish_document

        owner = self.registry["users"][node["owner_team"]]
        outcome = publish_document(contract_document(node), by=owner)
        if outcome.status not in ("published", "unchanged") and getattr(outcome, "contract_version", None) is None:
            raise ProductUnavailable(f"could not publish a contract for {node['relation']}: {outcome.message} "
                                     f"{getattr(outcome, 'errors', '')}")
        Contract.objects.get(name=contract_name(node)).bind(self.registry["datasets"][node["relation"]], by=owner)
        self.published.add(node["relation"])

    def ask(self, change: Change) -> dict:
        node = self.node_of(change)
        self.ensure_contract(node)
        body = {"document": contract_document(node, version="2.0", change=change)}
        if self.mode == "inprocess":
            from change_requests.impact import PreviewError, preview_change

            try:
                return normalized(self.preview(body["document"], by=self.registry["users"][node["owner_team"]]))
            except PreviewError as exc:
                # No dataframe check says "rounded to hundreds" (a number's precision lost):
                # the gates refuse that document, so the change is asked by its effect alone.
                self.effect_only.append(f"{change.id}: {'; '.join(exc.errors)[:200]}")
                return normalized(preview_change(self.registry["datasets"][node["relation"]], [change.column],
                                                 effect=EFFECTS[change.kind]))
        token = self.registry["user_tokens"][node["owner_team"]]
        status, answer = request(self.port, "POST", f"/api/contracts/{quote(contract_name(node))}/impact/", body, token)
        if status == 404 and not isinstance(answer, dict):
            raise ProductUnavailable("POST /api/contracts/<name>/impact/ answered 404")
        if status != 200:
            raise ProductUnavailable(f"POST /api/contracts/<name>/impact/ answered {status}: {str(answer)[:500]}")
        return normalized(answer)


def normalized(answer) -> dict:
    """{"affected": {team}, "not_affected": {team}, "dataset_granular": {team} | None, "unregistered": n}
    from the expected shape (lists of {"team": slug, …} or of slugs).

    The seam for per-team verdicts: whatever the product decides per team (routing by
    column and value flow, a retype re-checked against the consumer's SQL, a proof by
    EXPLAIN) arrives here as the team's place in `affected` (proven broken or assumed
    affected: asked) or `not_affected` (told, with the reason). A verdict that moves a
    team between the two lists changes `required_acks`, `missed` and `false_not_affected`
    with no change to this bench."""
    if hasattr(answer, "as_dict"):
        answer = answer.as_dict()
    elif not isinstance(answer, dict) and hasattr(answer, "__dataclass_fields__"):
        answer = dbt_side.asdict(answer)

    def slugs(items) -> set[str]:
        out = set()
        for item in items or []:
            if isinstance(item, str):
                out.add(item)
            elif isinstance(item, dict):
                team = item.get("team")
                out.add(team.get("slug") if isinstance(team, dict) else team)
            else:
                out.add(getattr(getattr(item, "team", item), "slug", str(item)))
        return out

    granular = answer.get("dataset_granular")
    return {"affected": slugs(answer.get("affected")), "not_affected": slugs(answer.get("not_affected")),
            "dataset_granular": slugs(granular) if granular is not None else None,
            "unregistered": len(answer.get("unregistered_readers") or [])}


def product_side(project: dict, events: list[dict], changes: list[Change], outcomes: list[dict], mode: str,
                 one_run: dict | None = None) -> dict:
    """Set the product up, ingest the events, ask about every change; the tallies. With
    `one_run` ({"manifest", "catalog"}), set up as an adopting organisation would."""
    started = time.perf_counter()
    log(f"Preparing the registry database {REGISTRY_URL} …")
    fresh_database(REGISTRY_URL)
    setup_django(REGISTRY_URL)
    registry = populate_registry(project) if one_run is None else adopt_registry(project, **one_run)
    log(f"  {len(registry['teams'])} teams, {len(registry['datasets'])} datasets, "
        f"{registry['registered']} consumer registrations")
    server, port = start_server(REGISTRY_URL)
    result: dict = {"setup_s": round(time.perf_counter() - started, 1)}
    try:
        started = time.perf_counter()
        ingested = ingest(port, events, project, registry["tokens"], one_token=registry.get("one_token"))
        result["ingest_s"] = round(time.perf_counter() - started, 1)
        log(f"  posted {len(events)} events with " + ("one token" if registry.get("one_token") else "their teams' tokens")
            + f" in {result['ingest_s']}s: "
            f"statuses {ingested['statuses']}")
        try:
            usage = column_usage_recorded()
            log(f"  column usage recorded by the ingest: {usage}")
            result["column_reads"] = usage["rows"]
        except Exception as exc:  # noqa: BLE001 - the table may not exist yet on this branch
            log(f"  column usage: not readable ({type(exc).__name__}: {exc})")
        result["direct_readers"] = direct_readers(changes, registry["datasets"])
        try:
            asker = Asker(mode, project, registry, port)
            answers, latencies = [], []
            for index, (change, outcome) in enumerate(zip(changes, outcomes, strict=True), 1):
                t0 = time.perf_counter()
                answer = asker.ask(change)
                latencies.append((time.perf_counter() - t0) * 1000)
                answers.append(answer)
                missed = sorted(set(outcome["broken_teams"]) - answer["affected"])
                log(f"  [{index:2}/{len(changes)}] {change.id}: asks {', '.join(sorted(answer['affected'])) or 'nobody'}"
                    + (f"; MISSED {', '.join(missed)}" if missed else ""))
        except ProductUnavailable as exc:
            result["unavailable"] = str(exc)
            return result
        result["answers"] = answers
        if asker.effect_only:
            log(f"  {len(asker.effect_only)} changes asked by their effect alone (their proposed document fails "
                f"the publish gates): " + "; ".join(asker.effect_only[:3]))
        result["effect_only"] = len(asker.effect_only)
        result["impact_p50_ms"] = round(percentile(latencies, 50), 2)
        result["impact_p95_ms"] = round(percentile(latencies, 95), 2)
        return result
    finally:
        stop_server(server)


def direct_readers(changes: list[Change], datasets: dict) -> list[set[str]]:
    """Per change, the other teams whose jobs were seen reading the touched column of the
    changed dataset itself, or all of it, attributed as the product does (registry.usage):
    those the issue's rule must ask whatever a change breaks."""
    from registry.usage import column_readers

    found = []
    for change in changes:
        readers = column_readers(datasets[change.relation].pk)
        jobs = [*dict(readers.columns).get(change.column, []), *readers.everything]
        found.append({r.team.slug for r in jobs if r.team is not None} - {change.owner_team})
    return found


# --- the generated world ------------------------------------------------------------------------

def world(args) -> None:
    """10,000 datasets, 2,000 consumer jobs, 20 columns each: the p50 of one impact computation."""
    rng = random.Random(args.seed)
    url = REGISTRY_URL + "_world"
    log(f"Preparing {url} …")
    fresh_database(url)
    setup_django(url)
    import psycopg
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from registry.models import Consumer, Dataset, Membership, Team
    from registry.usage import NamespaceTeam

    started = time.perf_counter()
    now = timezone.now()
    team_count = 50
    teams = Team.objects.bulk_create([Team(name=f"Team {i:02}", slug=f"team-{i:02}") for i in range(team_count)])
    users = get_user_model().objects.bulk_create([get_user_model()(username=f"lead-{i:02}") for i in range(team_count)])
    Membership.objects.bulk_create([Membership(team=t, user=u) for t, u in zip(teams, users, strict=True)])
    NamespaceTeam.objects.bulk_create([NamespaceTeam(namespace=f"ns-{t.slug}", team=t) for t in teams])
    datasets = Dataset.objects.bulk_create(
        [Dataset(namespace="postgres://world:5432", name=f"wh.s{i % 100:02}.table_{i:05}",
                 owner_team=teams[i % team_count], owner=users[i % team_count], created_at=now)
         for i in range(args.world_datasets)], batch_size=2000)
    columns = [f"col_{c:02}" for c in range(args.world_columns)]
    reads, edges, jobs, consumers = [], [], [], set()
    for j in range(args.world_jobs):
        team = j % team_count
        job = (f"ns-{teams[team].slug}", f"job_{j:05}")
        jobs.append(job)
        for d in rng.sample(range(args.world_datasets), 5):
            if datasets[d].owner_team_id == teams[team].id:
                continue
            consumers.add((datasets[d].id, teams[team].id))
            edges.append((job, datasets[d].id, "in"))
            if rng.random() < 0.05:
                reads.append((datasets[d].id, *job, "", "INDIRECT", "input"))       # usage unknown
                continue
            for column in rng.sample(columns, rng.randint(2, 8)):
                reads.append((datasets[d].id, *job, column, rng.choice(["DIRECT", "INDIRECT"]), "sql"))
        edges.append((job, datasets[rng.randrange(args.world_datasets)].id, "out"))
    Consumer.objects.bulk_create([Consumer(dataset_id=d, team_id=t) for d, t in sorted(consumers)], batch_size=5000)
    with psycopg.connect(url) as conn:
        with conn.cursor().copy("COPY registry_columnread (dataset_id, job_namespace, job_name, \"column\", kind, source, "
                                "first_seen_at, last_seen_at) FROM STDIN") as copy:
            for row in reads:
                copy.write_row((*row, now, now))
        with conn.cursor().copy("COPY lineage_job (namespace, name, facets, created_at, updated_at) FROM STDIN") as copy:
            for job in jobs:
                copy.write_row((*job, "{}", now, now))
        ids = dict(((ns, name), pk) for pk, ns, name in conn.execute("SELECT id, namespace, name FROM lineage_job"))
        with conn.cursor().copy("COPY lineage_jobdataset (job_id, dataset_id, direction, first_seen_at) FROM STDIN") as copy:
            for job, dataset_id, direction in edges:
                copy.write_row((ids[job], dataset_id, direction, now))
        conn.execute("ANALYZE")
    log(f"  {len(datasets)} datasets, {len(jobs)} jobs, {len(reads)} column reads, {len(consumers)} consumers, "
        f"{len(edges)} job edges in {time.perf_counter() - started:.1f}s")
    read_datasets = sorted({r[0] for r in reads})
    by_id = {d.id: d for d in datasets}
    # For scale: the core's own question, "who reads this dataset, attributed to teams"
    # (registry.usage.readings_of, two queries), which any impact computation asks at least once.
    from registry.usage import readings_of

    core = []
    for _ in range(args.world_samples):
        t0 = time.perf_counter()
        readings_of([rng.choice(read_datasets)])
        core.append((time.perf_counter() - t0) * 1000)
    summary = {"world_datasets": args.world_datasets, "world_jobs": args.world_jobs, "world_columns": args.world_columns,
               "column_reads": len(reads), "readings_of_p50_ms": round(percentile(core, 50), 2)}
    log(f"registry.usage.readings_of one dataset: p50 {percentile(core, 50):.2f} ms, p95 {percentile(core, 95):.2f} ms")
    try:
        from change_requests.impact import preview_change
    except ImportError as exc:
        log(f"change_requests.impact.preview_change is not there yet ({exc}): nothing more to time.")
        print(json.dumps({**summary, "impact_p50_ms": None, "impact_p95_ms": None, "product": "unavailable"}))
        return
    latencies = []
    for _ in range(args.world_samples):
        dataset = by_id[rng.choice(read_datasets)]
        touched = rng.sample(columns, 2)
        t0 = time.perf_counter()
        preview_change(dataset, touched)
        latencies.append((time.perf_counter() - t0) * 1000)
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    log(f"preview_change over {len(latencies)} changes: p50 {p50:.2f} ms, p95 {p95:.2f} ms (target p50 <= 50 ms)")
    print(json.dumps({**summary, "impact_p50_ms": round(p50, 2), "impact_p95_ms": round(p95, 2), "product": "ok"}))


# --- the run --------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    parser.add_argument("--changes", type=int, default=96, help="how many breaking changes (default 96)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the change draw (default 11)")
    parser.add_argument("--refresh", action="store_true", help="recompute the ground truth even where it is cached")
    parser.add_argument("--recapture", action="store_true", help="rebuild the warehouse and capture the events again")
    parser.add_argument("--verify-full", type=int, default=0, metavar="N",
                        help="also run the first N changes on the whole project and compare (default 0)")
    parser.add_argument("--keep-warehouse", action="store_true",
                        help="keep the clean warehouse database (the template of every change) for the next run")
    parser.add_argument("--ask", choices=["http", "inprocess", "none"], default="http",
                        help="how to ask the product: its HTTP endpoint, preview_change in-process, or not at all")
    parser.add_argument("--one-run", action="store_true",
                        help="import_dbt, an ownership rules file, then ONE dbt-ol build posted with ONE token")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: the captured events and cached ground truth of a few changes, asked in process")
    parser.add_argument("--smoke-changes", type=int, default=8, help="how many changes --smoke asks about (default 8)")
    parser.add_argument("--world", action="store_true", help="time one impact computation in a generated registry")
    parser.add_argument("--world-datasets", type=int, default=10_000)
    parser.add_argument("--world-jobs", type=int, default=2_000)
    parser.add_argument("--world-columns", type=int, default=20)
    parser.add_argument("--world-samples", type=int, default=200)
    args = parser.parse_args()
    if args.smoke:
        args.ask = "inprocess"
        # with --world: the generated world at 300 datasets, 60 jobs, 5 samples
        args.world_datasets, args.world_jobs, args.world_samples = 300, 60, 5
    if args.world:
        world(args)
        return

    started = time.perf_counter()
    one_run = None
    if args.smoke:
        # The captured events and the cached ground truth only: no dbt, seconds.
        project, events = dbt_side.load_captured()
        capture_timings: dict = {}
        print_project(project, dbt_side.summarize_events(events, project))
        cache = dbt_side.load_ground_truth()
        drawn = dbt_side.generate_changes(project, count=args.changes, seed=args.seed)
        changes = [c for c in drawn if dbt_side.cache_key(c, project) in cache][:args.smoke_changes]
        outcomes = [cache[dbt_side.cache_key(c, project)] for c in changes]
        gt_timings = {"computed": 0, "cached": len(changes)}
        log(f"Smoke: {len(changes)} changes with a cached ground truth.")
    else:
        tools = dbt_side.ensure_tools()
        project, events, capture_timings = captured_project(tools, recapture=args.recapture)
        print_project(project, dbt_side.summarize_events(events, project))
        changes = dbt_side.generate_changes(project, count=args.changes, seed=args.seed)
        kinds = {k: sum(1 for c in changes if c.kind == k) for k in dbt_side.KINDS}
        log(f"{len(changes)} breaking changes ({', '.join(f'{k} {v}' for k, v in kinds.items())}); ground truth "
            f"from `dbt run` + `dbt test` on each change's downstream:")
        try:
            outcomes, gt_timings = ground_truth(tools, project, changes, refresh=args.refresh,
                                                verify_full=args.verify_full)
            if args.one_run:
                dbt_side.ensure_warehouse(tools, project)
                events, manifest, catalog, build_s = one_dbt_build(tools)
                one_run = {"manifest": manifest, "catalog": catalog}
                capture_timings = {**capture_timings, "dbt_ol_build_s": build_s}
        finally:
            if not args.keep_warehouse:
                for database in (dbt_side.WORK_DB, dbt_side.WAREHOUSE):
                    dbt_side.drop_database(database)
    PROJECT_OF[0] = project

    consumers = registrations(project)
    broken_total = sum(len(o["broken_teams"]) for o in outcomes)
    granular_own = [consumers[c.relation] - {c.owner_team} for c in changes]
    granular_missed = sum(len(set(o["broken_teams"]) - g) for o, g in zip(outcomes, granular_own, strict=True))
    granular_total = sum(len(g) for g in granular_own)
    # Of the teams today's rule asks, how many a change really breaks: the best any
    # router can do on the part of the work today's rule already does.
    broken_within = sum(len(set(o["broken_teams"]) & g) for o, g in zip(outcomes, granular_own, strict=True))
    nothing_broken = sum(1 for o in outcomes if not o["broken_teams"])
    # Today's rule made as safe as routing by column must be: every consumer team of
    # the changed dataset and of every dataset built from it, however indirectly.
    nodes = project["nodes"]
    downstream_own = [set().union(*(consumers[nodes[d]["relation"]] for d in {c.node} | dbt_side.descendants(project, c.node)))
                      - {c.owner_team} for c in changes]
    downstream_total = sum(len(g) for g in downstream_own)
    downstream_missed = sum(len(set(o["broken_teams"]) - g) for o, g in zip(outcomes, downstream_own, strict=True))
    log(f"Ground truth: {broken_total} broken teams over {len(changes)} changes "
        f"({broken_total / len(changes):.2f} per change; {nothing_broken} changes break no other team). "
        f"Today's dataset-granular rule asks {granular_total} teams and misses {granular_missed} "
        "(teams broken through a model in between).")
    log(f"The same rule over everything built from the changed dataset asks {downstream_total} teams "
        f"and misses {downstream_missed}.")

    result = {"changes": len(changes), "broken_teams": broken_total, "ideal_acks": broken_total,
              "missed": None, "required_acks": None, "required_vs_ideal": None,
              "dataset_granular_acks": granular_total, "ratio": None, "false_not_affected": None,
              "dataset_granular_missed": granular_missed,
              "downstream_granular_acks": downstream_total, "downstream_granular_missed": downstream_missed,
              "ratio_vs_downstream_granular": None,
              "ideal_ratio": round(broken_total / granular_total, 3) if granular_total else None,
              "ratio_within_granular": None,
              "ideal_ratio_within_granular": round(broken_within / granular_total, 3) if granular_total else None,
              "product": "not asked", **({"one_run": True} if args.one_run else {})}
    log(f"A router asking exactly the broken teams would score ratio {result['ideal_ratio']} "
        f"({broken_total}/{granular_total}); counting only the teams today's rule asks, "
        f"{result['ideal_ratio_within_granular']} ({broken_within}/{granular_total}).")
    product = {}
    if args.ask != "none":
        product = product_side(project, events, changes, outcomes, args.ask, one_run=one_run)
        if "unavailable" in product:
            result["product"] = f"unavailable: {product['unavailable']}"
            log(f"NOTE: the product could not be asked ({product['unavailable']}); printed the ground truth only.")
        else:
            answers = product["answers"]
            missed = false_not_affected = required = granular = within = floor = 0
            report = []
            by_kind = {k: {"changes": 0, "required": 0, "actual": 0, "missed": 0, "false_not_affected": 0}
                       for k in dbt_side.KINDS}
            for change, outcome, answer, own, readers in zip(changes, outcomes, answers, granular_own,
                                                             product["direct_readers"], strict=True):
                broken = set(outcome["broken_teams"])
                # No router that asks the direct readers (the rule) and misses nobody asks fewer.
                floor += len(readers | broken)
                asked_today = answer["dataset_granular"] if answer["dataset_granular"] is not None else own
                missed += len(broken - answer["affected"])
                false_not_affected += len(broken & answer["not_affected"])
                required += len(answer["affected"])
                granular += len(asked_today)
                within += len(answer["affected"] & set(asked_today))
                kind = by_kind[change.kind]
                kind["changes"] += 1
                kind["required"] += len(broken)
                kind["actual"] += len(answer["affected"])
                kind["missed"] += len(broken - answer["affected"])
                kind["false_not_affected"] += len(broken & answer["not_affected"])
                report.append({"change": change.id, "broken": sorted(broken), "affected": sorted(answer["affected"]),
                               "not_affected": sorted(answer["not_affected"]), "dataset_granular": sorted(asked_today),
                               "missed": sorted(broken - answer["affected"]), "evidence": outcome["broken"]})
            REPORT.parent.mkdir(parents=True, exist_ok=True)
            REPORT.write_text(json.dumps(report, indent=1) + "\n")
            log(f"Per change (truth, answer, the models and tests that broke): {REPORT.relative_to(ROOT)}")
            result.update({"missed": missed, "required_acks": required, "dataset_granular_acks": granular,
                           "required_vs_ideal": round(required / broken_total, 3) if broken_total else None,
                           "by_kind": by_kind,
                           "ratio": round(required / granular, 3) if granular else None,
                           "false_not_affected": false_not_affected,
                           "ratio_within_granular": round(within / granular, 3) if granular else None,
                           "ratio_vs_downstream_granular": round(required / downstream_total, 3) if downstream_total else None,
                           "floor_acks": floor, "floor_ratio": round(floor / granular, 3) if granular else None,
                           "product": "ok"})
            log(f"Product: asks {required} teams where today's rule asks {granular} (ratio {result['ratio']}, "
                f"target <= 0.5); missed {missed} broken teams, told {false_not_affected} broken teams "
                "they were not affected (both must be 0).")
            log(f"Against a router asking exactly the broken teams: {required} asks for {broken_total} "
                f"(required_acks / ideal_acks {result['required_vs_ideal']}, target <= 1.2). Per kind of change "
                "(required = broken teams, actual = asked, missed):")
            for name, k in by_kind.items():
                if k["changes"]:
                    log(f"  {name:9} {k['changes']:3} changes: required {k['required']:3}, actual {k['actual']:3}, "
                        f"missed {k['missed']}, false not affected {k['false_not_affected']}")
            log(f"Asking every team that reads a touched column of the changed dataset itself, as the rule says, "
                f"and every broken team: at least {floor} asks (ratio {result['floor_ratio']}), whatever the router.")
    if "effect_only" in product:
        result["effect_only"] = product["effect_only"]
    result["timings"] = {**capture_timings, **gt_timings,
                         **{k: v for k, v in product.items() if k.endswith(("_s", "_ms"))},
                         "total_s": round(time.perf_counter() - started, 1)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
