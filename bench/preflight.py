"""The preflight and incidents at scale, and a fidelity check against real dbt-ol events.

    python bench/preflight.py            # 10,000 datasets, 50,000 checks, 1,000 open incidents
    python bench/preflight.py --smoke    # a tiny world, for CI: seconds

Prints, then a last JSON line:
- preflight p50/p99 (ms) through the full Django stack with a bearer token (target p50 <= 20 ms);
- incident-open lag: from the failing event's commit to the incident being visible on another
  connection, polled (the ingest only records the result; a real Celery worker judges it after
  the commit and opens the incident), and from the event's arrival;
- ingest throughput of dbt test events carrying dataQualityAssertions with the incident
  evaluation on and off (target ratio >= 0.9): the ingest's own, with the worker stopped during
  the timed rounds (the results are queued and the tasks published, not judged); then the
  worker is started and the backlog's drain reported apart (events judged per second, and
  that none is left);
- fidelity: each captured dbt-ol column test (of the impact bench's project) on a column whose
  readers dbt's ground truth knows (the teams whose models break when it is dropped or renamed),
  replayed failing, opens exactly one incident, tells exactly those teams among the ones whose
  jobs read the column itself (teams reached through derived columns are listed apart), and
  turns preflight false for the column and true for another; at least three cases.

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


def bench_throughput(datasets, declared, events: int, rounds: int, worker: Worker) -> dict:
    """The ingest's own throughput with the evaluation on and off, then the worker's drain.

    The worker is stopped during the timed rounds: with it running, the "on" rounds would
    share the machine's cores with the judging, and measure the worker's CPU rather than
    the ingest's. The ingest still does all of its part (the results stored waiting to be
    judged, the tasks published after commit); the worker starts afterwards, takes the
    backlog from the broker, and its drain rate is reported on its own. The "off" rounds
    store their results waiting too (the ingest writes the same row with or without a
    listener): they are marked judged after each of those rounds, untimed, so that the
    backlog is the "on" rounds' alone.
    """
    from django.utils import timezone

    from incidents import receivers
    from lineage.ingest import store_event
    from lineage.signals import quality_reported, quality_results_waiting

    rng = random.Random(11)
    chosen = [rng.choice(datasets) for _ in range(events)]
    assertions = [{"assertion": c.kind, "column": c.column, "success": True, "name": f"t{i}"}
                  for i, c in enumerate(declared)]

    def run() -> float:
        batch = [test_event(d.namespace, d.name, assertions) for d in chosen]
        start = time.perf_counter()
        for event in batch:
            store_event(event)
        return events / (time.perf_counter() - start)

    wait_until_judged()  # nothing of the lag measurement left over
    worker.stop()
    run()  # warm-up, untimed: the first round would otherwise pay the caches and connections for "on"
    on, off = [], []
    for _ in range(rounds):  # alternate, so that a busy moment of the machine hits both
        on.append(run())
        quality_reported.disconnect(dispatch_uid="incidents.on_quality_reported")
        began = timezone.now()
        try:
            off.append(run())
        finally:
            quality_reported.connect(receivers.on_quality_reported, dispatch_uid="incidents.on_quality_reported")
        quality_results_waiting().filter(checked_at__gte=began).update(judged=True)
    queued = quality_results_waiting().count()
    # Each event reports one dataset: one waiting row per event of the warm-up and the "on" rounds.
    if queued != events * (rounds + 1):
        raise RuntimeError(f"{queued} quality results queued, expected {events * (rounds + 1)}")
    time.sleep(0.5)  # the hand-over thread publishes the last datasets' task
    began = time.perf_counter()
    worker.start()
    ready = time.perf_counter()
    at_ready = quality_results_waiting().count()
    wait_until_judged()
    drained = time.perf_counter() - ready
    left = quality_results_waiting().count()
    on_rate, off_rate = statistics.median(on), statistics.median(off)
    return {"events_per_round": events, "rounds": rounds, "worker_during_rounds": "stopped",
            "on_events_per_s": round(on_rate, 1), "off_events_per_s": round(off_rate, 1),
            "on_rounds": [round(r, 1) for r in on], "off_rounds": [round(r, 1) for r in off],
            "ratio": round(on_rate / off_rate, 3),
            "backlog": {"queued_results": queued, "worker_start_s": round(ready - began, 2),
                        "waiting_when_worker_ready": at_ready, "drain_s": round(drained, 2),
                        "judged_events_per_s": round(at_ready / drained, 1) if drained > 0 else None,
                        "left_after_drain": left}}


def wait_until_judged(timeout: float = 600) -> None:
    """Until the worker has judged every stored result."""
    from lineage.signals import quality_results_waiting

    deadline = time.monotonic() + timeout
    while quality_results_waiting().exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not judge the stored quality results in time")
        time.sleep(0.01)


def column_readers(truth: dict, project_hash: str) -> dict[tuple[str, str], list[str]]:
    """{(relation, column): the teams reading it}, from dbt's own ground truth: the teams
    (other than the relation's owner) whose models break when the column is dropped or renamed."""
    readers: dict[tuple[str, str], list[str]] = {}
    for key, case in truth.items():
        change = case["change"]
        if change["kind"] in ("drop", "rename") and key.endswith("@" + project_hash):
            readers[(change["relation"], change["column"])] = sorted(case["broken_teams"])
    return readers


def assertions_of(event: dict, relation: str) -> list[dict]:
    return [a for i in event["inputs"] if i["name"] == relation
            for a in ((i.get("inputFacets") or {}).get("dataQualityAssertions") or {}).get("assertions", [])]


def fidelity_cases(events: list[dict], readers: dict[tuple[str, str], list[str]]) -> list[dict]:
    """Each captured column test on a column whose readers are known: the relation's test
    events, the column, and the test to turn failing (its not_null, else its first)."""
    cases = []
    for (relation, column), teams in sorted(readers.items()):
        tests = [e for e in events if e["eventType"] == "COMPLETE" and assertions_of(e, relation)]
        kinds = sorted({a["assertion"] for e in tests for a in assertions_of(e, relation) if a.get("column") == column})
        if kinds:
            cases.append({"relation": relation, "column": column, "teams": teams, "events": tests,
                          "failing": "not_null" if "not_null" in kinds else kinds[0]})
    return cases


def fidelity() -> dict:
    """The impact bench's captured dbt-ol test events, one column test turned failing per case."""
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
    relation_owner = {n["relation"]: n["owner_team"] for n in project["nodes"].values()
                      if n.get("relation") and n.get("owner_team")}
    cases = []
    for case in fidelity_cases(events, column_readers(truth, project["hash"])):
        relation, column, failing = case["relation"], case["column"], case["failing"]
        dataset = Dataset.objects.get(name=relation)
        Dataset.objects.filter(pk=dataset.pk).update(owner_team=teams[relation_owner[relation]])
        dataset.refresh_from_db()
        # The contract declares every test the project runs on the relation, by its column.
        declared: dict[str, list[str]] = {}
        for event in case["events"]:
            for a in assertions_of(event, relation):
                if a.get("column") and a["assertion"] not in declared.setdefault(a["column"], []):
                    declared[a["column"]].append(a["assertion"])
        doc = {"schema": {"name": f"impact.{relation}", "version": "1.0"}, "columns": [
            {"name": name, "dtype": "str", "nullable": True, "unique": False, "checks": [{kind: True} for kind in kinds]}
            for name, kinds in declared.items()]}
        contract = Contract.objects.create(name=f"impact.{relation}", domain="impact", entity=relation.split(".")[-1],
                                           schema_type="dataframe", owner_team=dataset.owner_team)
        ContractVersion.objects.create(contract=contract, version="1.0", document=doc, checksum=relation[-60:])
        DatasetBinding.objects.create(dataset=dataset, contract=contract)
        mail.outbox = []
        # Replay the relation's test run with the one test on the column failing.
        for event in case["events"]:
            replay = json.loads(json.dumps(event))
            replay["run"]["runId"] = str(uuid.uuid4())
            replay["eventTime"] = datetime.now(UTC).isoformat()
            for a in assertions_of(replay, relation):
                if a.get("column") == column and a.get("assertion") == failing:
                    a["success"] = False
            with transaction.atomic():
                store_event(replay)
        wait_until_judged()
        opened = Incident.objects.filter(dataset=dataset).count()
        rows = list(IncidentTeam.objects.filter(incident__dataset=dataset, owner=False).select_related("team"))
        told = sorted(t.team.slug.removeprefix("dbt-") for t in rows)
        # A path of two steps (the dataset, then the job) is a job reading the column itself;
        # longer ones reach a job through a column derived from it.
        direct = sorted(t.team.slug.removeprefix("dbt-") for t in rows if any(len(path) == 2 for path in t.paths))
        found, _ = find(namespace=dataset.namespace, name=dataset.name)
        # Another column: a declared one, else one the relation has (its test may be the only one).
        node = next(n for n in project["nodes"].values() if n.get("relation") == relation)
        others = [name for name in declared if name != column] or [
            c["name"] for c in node.get("columns", []) if c["name"] != column]
        cases.append({"relation": relation, "column": column, "failing_test": failing, "incidents_opened": opened,
                      "teams_told": told, "teams_told_reading_it_directly": direct,
                      "teams_reading_it_per_dbt": case["teams"], "exact": direct == case["teams"],
                      "teams_told_through_derived_columns": sorted(set(told) - set(direct)),
                      "preflight_false_for_the_column": answer(found, columns=[column])["safe"] is False,
                      "other_column": others[0] if others else None,
                      "preflight_true_for_another_column": answer(found, columns=others[:1])["safe"] is True
                      if others else None})
    return {"cases": cases, "all_exact": len(cases) >= 3 and all(
        c["exact"] and c["incidents_opened"] == 1 and c["preflight_false_for_the_column"]
        and c["preflight_true_for_another_column"] for c in cases)}


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
    from tests.celery_broker import ROOT

    queue = f"preflight-bench-{os.getpid()}"
    celery_app.conf.task_default_queue = queue
    workdir = Path(tempfile.mkdtemp(prefix="preflight-bench-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "registry.settings",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}"}
    worker = Worker(queue, workdir, env)
    worker.start()
    try:
        measure(args, worker)
    finally:
        worker.stop()


class Worker:
    """The Celery worker judging this run's queue, which the throughput rounds stop and start again."""

    def __init__(self, queue: str, workdir: Path, env: dict[str, str]) -> None:
        self.queue, self.workdir, self.env = queue, workdir, env
        self.process = None
        self.starts = 0

    def start(self) -> None:
        from tests.celery_broker import start_celery

        self.starts += 1
        log = self.workdir / f"worker-{self.starts}.log"
        print(f"starting a Celery worker (log in {log})…", file=sys.stderr)
        self.process = start_celery(["worker", "--pool=solo", "-Q", self.queue, "--without-gossip", "--without-mingle",
                                     "--without-heartbeat"], log, self.env, ready="ready.", attempts=1200)

    def stop(self) -> None:
        from tests.celery_broker import stop

        if self.process is not None:
            stop(self.process)
            self.process = None


def measure(args: argparse.Namespace, worker: Worker) -> None:
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
    result["ingest"] = bench_throughput(datasets, declared, 30 if args.smoke else 300, 1 if args.smoke else 5, worker)
    backlog = result["ingest"]["backlog"]
    print(f"ingest with evaluation on/off: {result['ingest']['ratio']}; the worker then judged "
          f"{backlog['judged_events_per_s']} events/s, {backlog['left_after_drain']} left", file=sys.stderr)
    result["fidelity"] = fidelity()
    for case in result["fidelity"]["cases"]:
        print(f"fidelity {case['relation']}.{case['column']} ({case['failing_test']} failing): "
              f"{case['incidents_opened']} incident(s), told {case['teams_told']}, "
              f"dbt says {case['teams_reading_it_per_dbt']}", file=sys.stderr)
    if len(result["fidelity"]["cases"]) < 3:
        raise RuntimeError(f"the fidelity check found {len(result['fidelity']['cases'])} cases, fewer than 3")
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
