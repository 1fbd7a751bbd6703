"""The preflight and incidents at scale, and a fidelity check against real dbt-ol events.

    python bench/preflight.py            # 10,000 datasets, 50,000 checks, 1,000 open incidents
    python bench/preflight.py --smoke    # a tiny world, for CI: seconds

Prints, then a last JSON line:
- preflight p50/p99 (ms) through the full Django stack with a bearer token (target p50 <= 20 ms);
- incident-open lag: from the failing event's commit to the incident being visible on another
  connection, polled (the ingest only records the result; a real Celery worker judges it after
  the commit and opens the incident), and from the event's arrival;
- ingest throughput of dbt test events carrying dataQualityAssertions with the incident
  evaluation on and off (target ratio >= 0.9), the worker judging the results meanwhile on the
  same machine; and how long after the last event the worker had judged them all;
- fidelity: the impact bench's captured dbt-ol events with one test turned failing open exactly
  one incident, notify the teams reading that column (dbt's own ground truth: the teams whose
  models break when the column is dropped), and turn preflight false for them and true for others.

BENCH_DATABASE_URL (default .../registry_bench_preflight) is dropped and re-created;
BENCH_BROKER_URL (default redis://127.0.0.1:6379/9) carries the worker's tasks, on a queue of this
run's own (another process's worker on the same broker takes none of them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry_bench_preflight")
BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/9")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import BENCH_DATABASE_URL, fresh_database, machine, setup_django  # noqa: E402

CAPTURED = Path(__file__).resolve().parent / "dbt_impact" / "captured"
KINDS = ["not_null", "unique", "accepted_values", "dbt_utils.accepted_range", "relationships"]
COLUMNS = ["id", "customer_id", "amount", "status", "placed_at"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def document(n_checks: int) -> dict:
    columns = [{"name": c, "dtype": "str", "nullable": True, "unique": False, "required": True, "checks": []}
               for c in COLUMNS]
    for i in range(n_checks):
        kind = KINDS[i % len(KINDS)]
        columns[i % len(COLUMNS)]["checks"].append({kind: 0} if kind != "not_null" else {"notnull": True})
    return {"schema": {"name": "bench.orders", "domain": "bench", "subdomains": [], "entity": "orders",
                       "version": "1.0", "owner": "bench", "schema_type": "dataframe"}, "columns": columns}


def test_event(namespace: str, name: str, assertions: list[dict], *, event_type: str = "COMPLETE",
               at: datetime | None = None) -> dict:
    return {"eventType": event_type, "eventTime": (at or datetime.now(UTC)).isoformat(),
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "dbt", "name": f"{name}.test"},
            "inputs": [{"namespace": namespace, "name": name, "inputFacets": {"dataQualityAssertions": {
                "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json",
                "assertions": assertions}}}], "outputs": []}


def build_world(n: int, checks_per: int, open_incidents: int):
    """n bound datasets, n*checks_per check results (all passed but the incidents'), open_incidents incidents."""
    from contracts_app.models import Contract, ContractVersion, DatasetBinding
    from incidents.declared import declared_checks
    from incidents.evaluation import judge
    from incidents.models import Cause, CheckResult, ContractStatus, Incident, Verdict
    from registry.models import Dataset, Team

    team = Team.objects.create(name="Bench", slug="bench")
    contract = Contract.objects.create(name="bench.orders", domain="bench", entity="orders", schema_type="dataframe",
                                       owner_team=team)
    doc = document(checks_per)
    ContractVersion.objects.create(contract=contract, version="1.0", document=doc, checksum="x")
    declared = declared_checks(doc)
    datasets = Dataset.objects.bulk_create(
        [Dataset(namespace="bench", name=f"orders_{i:05}", owner_team=team) for i in range(n)], batch_size=5000)
    # Bindings without their post_save signal: the statuses are written in bulk below.
    DatasetBinding.objects.bulk_create([DatasetBinding(dataset=d, contract=contract) for d in datasets], batch_size=5000)
    now = datetime.now(UTC)
    failing = set(range(0, n, max(n // open_incidents, 1))[:open_incidents])
    results, statuses, incidents = [], [], []
    for i, d in enumerate(datasets):
        rows = {}
        for j, check in enumerate(declared):
            verdict = Verdict.FAILED if i in failing and j == 0 else Verdict.PASSED
            row = CheckResult(dataset=d, column=check.column, kind=check.kind, verdict=verdict, run_uuid=uuid.uuid4(),
                              job_name="bench.test", event_time=now)
            rows[check.key] = row
            results.append(row)
        state, running, reasons, checks = judge(declared, rows, {}, True)
        statuses.append(ContractStatus(dataset=d, contract=contract, version="1.0", status=state, running=running,
                                       reasons=reasons, checks=checks, evaluated_at=now))
        if i in failing:
            incidents.append(Incident(dataset=d, cause=Cause.CHECK_FAILED, key=declared[0].key,
                                      column=declared[0].column.casefold(), summary="bench failure",
                                      evidence={"run_id": None}, opened_at=now))
    CheckResult.objects.bulk_create(results, batch_size=10000)
    ContractStatus.objects.bulk_create(statuses, batch_size=5000)
    Incident.objects.bulk_create(incidents, batch_size=5000)
    return team, contract, datasets, declared, failing


def bench_preflight(datasets, samples: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from registry.models import ApiToken

    user = get_user_model().objects.create_user("reader")
    _, secret = ApiToken.issue("bench reader", user=user, scopes=["read"])
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    rng = random.Random(7)
    for d in datasets[:20]:  # warm up
        client.get("/api/preflight", {"namespace": d.namespace, "name": d.name}, **headers)
    timings, safe = [], 0
    for _ in range(samples):
        d = rng.choice(datasets)
        params = {"namespace": d.namespace, "name": d.name}
        if rng.random() < 0.5:
            params["columns"] = ",".join(rng.sample(COLUMNS, 2))
        start = time.perf_counter()
        response = client.get("/api/preflight", params, **headers)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.content
        safe += response.json()["safe"]
    return {"samples": samples, "p50_ms": round(statistics.median(timings), 2),
            "p99_ms": round(percentile(timings, 0.99), 2), "safe_answers": safe}


def bench_open_lag(datasets, declared, failing: set[int], events: int) -> dict:
    import psycopg
    from django.db import transaction

    from lineage.ingest import store_event

    fresh = [d for i, d in enumerate(datasets) if i not in failing][:events]
    url = BENCH_DATABASE_URL
    from_commit, from_arrival = [], []
    with psycopg.connect(url, autocommit=True) as other:
        for d in fresh:
            check = declared[1]
            assertions = [{"assertion": check.kind, "column": check.column, "success": False, "name": "bench"}]
            event = test_event(d.namespace, d.name, assertions)
            arrived = time.perf_counter()
            marks = []
            with transaction.atomic():
                # Registered first, so it runs first after the commit: before the hand-over to the worker.
                transaction.on_commit(lambda marks=marks: marks.append(time.perf_counter()))
                store_event(event)
            committed = marks[0]
            while not other.execute("SELECT 1 FROM incidents_incident WHERE dataset_id = %s AND state <> 'resolved' "
                                    "AND key = %s", (d.pk, check.key)).fetchone():
                time.sleep(0.0005)
            seen = time.perf_counter()
            from_commit.append((seen - committed) * 1000)
            from_arrival.append((seen - arrived) * 1000)
    return {"events": len(fresh), "from_commit_p50_ms": round(statistics.median(from_commit), 2),
            "from_commit_max_ms": round(max(from_commit), 2),
            "from_arrival_p50_ms": round(statistics.median(from_arrival), 2)}


def bench_throughput(datasets, declared, events: int, rounds: int) -> dict:
    from incidents import receivers
    from lineage.ingest import store_event
    from lineage.signals import quality_reported

    rng = random.Random(11)
    chosen = [rng.choice(datasets) for _ in range(events)]
    assertions = [{"assertion": c.kind, "column": c.column, "success": True, "name": f"t{i}"}
                  for i, c in enumerate(declared)]

    drained = []

    def run(*, evaluating: bool) -> float:
        batch = [test_event(d.namespace, d.name, assertions) for d in chosen]
        start = time.perf_counter()
        for event in batch:
            store_event(event)
        end = time.perf_counter()
        if evaluating:
            # The worker judged them meanwhile; the next round starts once it has judged them all.
            wait_until_judged()
            drained.append(time.perf_counter() - end)
        return events / (end - start)

    on, off = [], []
    for _ in range(rounds):  # alternate, so that a busy moment of the machine hits both
        on.append(run(evaluating=True))
        quality_reported.disconnect(dispatch_uid="incidents.on_quality_reported")
        try:
            off.append(run(evaluating=False))
        finally:
            quality_reported.connect(receivers.on_quality_reported, dispatch_uid="incidents.on_quality_reported")
    on_rate, off_rate = statistics.median(on), statistics.median(off)
    return {"events_per_round": events, "rounds": rounds, "on_events_per_s": round(on_rate, 1),
            "off_events_per_s": round(off_rate, 1), "ratio": round(on_rate / off_rate, 3),
            "judged_all_s_after_last_event_max": round(max(drained), 2)}


def wait_until_judged(timeout: float = 600) -> None:
    """Until the worker has judged every stored result."""
    from incidents.models import PendingResult

    deadline = time.monotonic() + timeout
    while PendingResult.objects.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not judge the stored quality results in time")
        time.sleep(0.01)


def fidelity() -> dict:
    """The impact bench's dbt-ol events, one not_null test turned failing, per ground-truth change."""
    from django.core import mail
    from django.db import transaction

    from contracts_app.models import Contract, ContractVersion, DatasetBinding
    from incidents.models import Incident, IncidentTeam
    from incidents.preflight import answer, find
    from lineage.ingest import store_event
    from registry.jobs import JobTeam
    from registry.models import Dataset, Team

    project = json.loads((CAPTURED / "project.json").read_text())
    truth = json.loads((CAPTURED / "ground_truth.json").read_text())
    events = [json.loads(line) for line in (CAPTURED / "baseline_events.jsonl").read_text().splitlines()]
    owners = {node["owner_team"] for node in project["nodes"].values() if node.get("owner_team")}
    teams = {slug: Team.objects.get_or_create(slug=f"dbt-{slug}", defaults={"name": f"dbt {slug}"})[0]
             for slug in sorted(owners)}
    for event in events:
        store_event(event)
    # Whose job each model is: its owner in the dbt project (as import_dbt and the rules file decide).
    for unique_id, node in project["nodes"].items():
        if node.get("owner_team"):
            JobTeam.objects.filter(dbt_unique_id=unique_id).update(team=teams[node["owner_team"]])
    cases = []
    for key, case in sorted(truth.items()):
        change = case["change"]
        if not key.startswith("drop:") or not key.endswith("@" + project["hash"]):
            continue
        relation, column = change["relation"], change["column"]
        tests = [e for e in events if e["eventType"] == "COMPLETE" and any(
            i["name"] == relation and any(a.get("column") == column and a.get("assertion") == "not_null"
                                          for a in ((i.get("inputFacets") or {}).get("dataQualityAssertions") or {})
                                          .get("assertions", [])) for i in e["inputs"])]
        if not tests:
            continue
        dataset = Dataset.objects.get(name=relation)
        Dataset.objects.filter(pk=dataset.pk).update(owner_team=teams[change["owner_team"]])
        dataset.refresh_from_db()
        assertions = [a for e in tests for i in e["inputs"] if i["name"] == relation
                      for a in i["inputFacets"]["dataQualityAssertions"]["assertions"]]
        doc = {"schema": {"name": f"impact.{relation}", "version": "1.0"}, "columns": [
            {"name": a["column"], "dtype": "str", "nullable": a["assertion"] != "not_null",
             "unique": a["assertion"] == "unique", "checks": []} for a in assertions if a.get("column")]}
        contract = Contract.objects.create(name=f"impact.{relation}", domain="impact", entity=relation.split(".")[-1],
                                           schema_type="dataframe", owner_team=dataset.owner_team)
        ContractVersion.objects.create(contract=contract, version="1.0", document=doc, checksum=key[:60])
        DatasetBinding.objects.create(dataset=dataset, contract=contract)
        mail.outbox = []
        # Replay the model's test run with the not_null test on the column failing.
        for event in tests:
            replay = json.loads(json.dumps(event))
            replay["run"]["runId"] = str(uuid.uuid4())
            replay["eventTime"] = datetime.now(UTC).isoformat()
            for i in replay["inputs"]:
                for a in (i.get("inputFacets") or {}).get("dataQualityAssertions", {}).get("assertions", []):
                    if a.get("column") == column and a.get("assertion") == "not_null":
                        a["success"] = False
            with transaction.atomic():
                store_event(replay)
        wait_until_judged()
        opened = list(Incident.objects.filter(dataset=dataset))
        told = sorted(t.team.slug.removeprefix("dbt-") for t in IncidentTeam.objects.filter(
            incident__dataset=dataset, owner=False).select_related("team"))
        expected = sorted(case["broken_teams"])
        found, _ = find(namespace=dataset.namespace, name=dataset.name)
        other_columns = [c["name"] for c in doc["columns"] if c["name"] != column]
        unsafe_for_readers = answer(found, columns=[column])["safe"] is False
        safe_for_others = (answer(found, columns=other_columns[:1])["safe"] is True) if other_columns else None
        cases.append({"change": key.split("@")[0], "incidents_opened": len(opened), "teams_told": told,
                      "teams_reading_it_per_dbt": expected, "exact": told == expected,
                      "preflight_false_for_the_column": unsafe_for_readers,
                      "preflight_true_for_another_column": safe_for_others})
    return {"cases": cases, "all_exact": all(c["exact"] and c["incidents_opened"] == 1 for c in cases)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="A tiny world, for CI.")
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--checks-per-dataset", type=int, default=5)
    parser.add_argument("--open-incidents", type=int, default=1_000)
    parser.add_argument("--samples", type=int, default=2_000)
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.open_incidents, args.samples = 200, 20, 100
    fresh_database()
    # A broker and a real worker: the results are judged after the ingest's commit, in the worker.
    os.environ.update({"CELERY_BROKER_URL": BROKER,
                       "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend"})
    setup_django()
    from registry.celery import app as celery_app
    from tests.celery_broker import ROOT, start_celery, stop

    queue = f"preflight-bench-{os.getpid()}"
    celery_app.conf.task_default_queue = queue
    workdir = Path(tempfile.mkdtemp(prefix="preflight-bench-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "registry.settings",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}"}
    print(f"starting a Celery worker (log in {workdir})…", file=sys.stderr)
    worker = start_celery(["worker", "--pool=solo", "-Q", queue, "--without-gossip", "--without-mingle", "--without-heartbeat"],
                          workdir / "worker.log", env, ready="ready.", attempts=1200)
    try:
        measure(args)
    finally:
        stop(worker)


def measure(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    print(f"building {args.datasets} datasets, {args.datasets * args.checks_per_dataset} checks, "
          f"{args.open_incidents} open incidents…", file=sys.stderr)
    _, _, datasets, declared, failing = build_world(args.datasets, args.checks_per_dataset, args.open_incidents)
    result = {"machine": machine(), "world": {"datasets": args.datasets,
                                              "checks": args.datasets * args.checks_per_dataset,
                                              "open_incidents": len(failing)}}
    result["preflight"] = bench_preflight(datasets, args.samples)
    print(f"preflight: p50 {result['preflight']['p50_ms']} ms, p99 {result['preflight']['p99_ms']} ms", file=sys.stderr)
    result["open_lag"] = bench_open_lag(datasets, declared, failing, 10 if args.smoke else 100)
    print(f"incident-open lag from commit: p50 {result['open_lag']['from_commit_p50_ms']} ms", file=sys.stderr)
    result["ingest"] = bench_throughput(datasets, declared, 30 if args.smoke else 300, 1 if args.smoke else 3)
    print(f"ingest with evaluation on/off: {result['ingest']['ratio']} (all judged "
          f"{result['ingest']['judged_all_s_after_last_event_max']} s after the last event)", file=sys.stderr)
    result["fidelity"] = fidelity()
    for case in result["fidelity"]["cases"]:
        print(f"fidelity {case['change']}: {case['incidents_opened']} incident(s), told {case['teams_told']}, "
              f"dbt says {case['teams_reading_it_per_dbt']}", file=sys.stderr)
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
