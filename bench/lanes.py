"""Lanes: resolving a lane selector in the thin client, and "who is still on the old lane".

    python bench/lanes.py [--contracts 10000] [--versions 20] [--datasets 10000] [--jobs 2000]
    python bench/lanes.py --smoke          # tiny sizes, seconds: CI runs it

1. The thin client (no Django): a local store whose index lists `--contracts`
   contracts x `--versions` versions over three lanes (1.x, 2.x, 3.x, a pre-release
   in each), lane dates on the old lanes. `Registry.resolve(name, "2.x")` against
   `Registry.resolve(name, "latest")` on the same index:
   - cold: a new Registry reads the index and resolves one name (median of 5);
   - warm: one Registry, 2,000 random names resolved in turn (median per call).
   Target: lane / latest <= 1.1, warm and cold.
2. The service: a scratch registry database (BENCH_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/registry_bench; dropped and re-created) with
   `--datasets` datasets, `--jobs` reader jobs reading 5 datasets each (3-8 of 20
   columns; ColumnRead rows), each read also giving the input's schema as the ingest
   keeps it (InputSchema: a third the old lane's 20 typed columns, a third the new
   lane's 15, a third a partial, untyped list), 200 contracts with two live lanes
   bound to datasets the jobs read, and a thin-client report (LaneRead) per job for
   half the contracts.
   `lanes.evidence.lane_usage([contract])` (what the lane page and API ask) for random
   contracts: p50 and p95. Target: p50 <= 50 ms.

Prints a readable summary, then one JSON line (last).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def lane_versions(count: int) -> list[str]:
    """`count` versions over three lanes, each lane with one pre-release."""
    per_lane = max(2, count // 3)
    found: list[str] = []
    for major in (1, 2, 3):
        found += [f"{major}.{minor}" for minor in range(per_lane - 1)] + [f"{major}.{per_lane}rc1"]
    return found[:count] if len(found) >= count else found + [f"3.{per_lane + i}" for i in range(count - len(found))]


def build_store(root: Path, contracts: int, versions: int) -> list[str]:
    index = root / "contracts" / "index" / "schema_index.csv"
    index.parent.mkdir(parents=True)
    names = [f"d{i % 50:02}.s{i % 7}.entity_{i:05}" for i in range(contracts)]
    numbers = lane_versions(versions)
    with index.open("w") as out:
        out.write("name,key,version,date,schema_type,deprecation_date,sunset_date\n")
        for name in sorted(names):
            for number in numbers:
                dates = "2026-11-01,2027-06-30" if number.startswith("1.") else ",2030-01-01" if number.startswith("2.") else ","
                out.write(f"{name},contracts/domains/{name.replace('.', '/')}/{number}/schema.yaml,{number},2026-01-01,"
                          f"dataframe,{dates}\n")
    return names


def client_part(args) -> dict:
    from registry_client import Registry
    from registry_client.backends import LocalBackend

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = build_store(root, args.contracts, args.versions)
        log(f"store: {args.contracts} contracts x {args.versions} versions ({args.contracts * args.versions} index rows)")
        cold: dict[str, list[float]] = {"latest": [], "2.x": []}
        for _ in range(5):
            for selector in ("latest", "2.x"):
                name = rng.choice(names)
                t0 = time.perf_counter()
                Registry(LocalBackend(root)).resolve(name, selector)
                cold[selector].append((time.perf_counter() - t0) * 1000)
        registry = Registry(LocalBackend(root))
        registry.resolve(names[0])  # the index is read once, then grouped by name
        sample = [rng.choice(names) for _ in range(args.lookups)]
        warm: dict[str, list[float]] = {"latest": [], "2.x": []}
        for _ in range(5):
            for selector in ("latest", "2.x"):
                t0 = time.perf_counter()
                for name in sample:
                    registry.resolve(name, selector)
                warm[selector].append((time.perf_counter() - t0) * 1e6 / len(sample))
    result = {
        "cold_latest_ms": round(statistics.median(cold["latest"]), 2),
        "cold_lane_ms": round(statistics.median(cold["2.x"]), 2),
        "warm_latest_us": round(statistics.median(warm["latest"]), 2),
        "warm_lane_us": round(statistics.median(warm["2.x"]), 2),
    }
    result["cold_ratio"] = round(result["cold_lane_ms"] / result["cold_latest_ms"], 3)
    result["warm_ratio"] = round(result["warm_lane_us"] / result["warm_latest_us"], 3)
    log(f"client cold: latest {result['cold_latest_ms']} ms, 2.x {result['cold_lane_ms']} ms (ratio {result['cold_ratio']})")
    log(f"client warm: latest {result['warm_latest_us']} µs, 2.x {result['warm_lane_us']} µs (ratio {result['warm_ratio']})")
    return result


def service_part(args) -> dict:
    from bench._django import fresh_database, setup_django

    log("preparing the scratch registry database …")
    fresh_database()
    setup_django()
    from django.utils import timezone

    from contracts_app.models import Contract, ContractVersion, DatasetBinding
    from lanes.evidence import lane_usage
    from lanes.models import Lane, LaneRead
    from registry.models import Dataset, Team
    from registry.usage import ColumnRead, InputSchema, schema_fingerprint
    from tests.publish.conftest import cell_count

    rng = random.Random(args.seed)
    started = time.perf_counter()
    now = timezone.now()
    teams = Team.objects.bulk_create([Team(name=f"Team {i:02}", slug=f"team-{i:02}") for i in range(50)])
    datasets = Dataset.objects.bulk_create([Dataset(namespace="postgres://world:5432", name=f"wh.t{i:05}", created_at=now)
                                            for i in range(args.datasets)], batch_size=2000)
    contract_count = min(200, args.datasets)
    bound = datasets[:contract_count]
    columns = [f"col_{c:02}" for c in range(20)]
    contracts = []
    for i in range(contract_count):
        name = f"bench.lanes.entity_{i:04}"
        contracts.append(Contract(name=name, domain="bench", subdomains=["lanes"], entity=f"entity_{i:04}",
                                  schema_type="dataframe", owner_team=teams[i % 50], owner_label=teams[i % 50].slug))
    contracts = Contract.objects.bulk_create(contracts)
    versions = []
    for contract in contracts:
        for number, kept in (("2.0", columns), ("2.1", columns), ("3.0", columns[:15]), ("3.1", columns[:15])):
            document = cell_count(number)
            document["columns"] = [{**document["columns"][0], "name": c} for c in kept]
            versions.append(ContractVersion(contract=contract, version=number, document=document, checksum=f"{number}",
                                            store_key=f"k/{contract.pk}/{number}", yaml_text=""))
    ContractVersion.objects.bulk_create(versions, batch_size=2000)
    DatasetBinding.objects.bulk_create([DatasetBinding(contract=c, dataset=d) for c, d in zip(contracts, bound, strict=True)])
    Lane.objects.bulk_create([Lane(contract=c, major=2, deprecation_date=now.date()) for c in contracts])
    reads, lane_reads, seen = [], [], []
    shapes = [{c: "VARCHAR" for c in columns}, {c: "VARCHAR" for c in columns[:15]}, {c: "" for c in columns[:6]}]
    shapes = [(shape, schema_fingerprint(shape)[1], all(shape.values())) for shape in shapes]
    readable = range(min(1000, args.datasets))  # the jobs read the first datasets, the bound ones among them
    for j in range(args.jobs):
        team = teams[j % 50]
        for d in rng.sample(readable, 5):
            for column in rng.sample(columns, rng.randint(3, 8)):
                reads.append(ColumnRead(dataset=datasets[d], job_namespace=f"ns-{team.slug}", job_name=f"job_{j:05}",
                                        column=column, source="sql", token_team=team, first_seen_at=now, last_seen_at=now))
            fields, fingerprint, complete = rng.choice(shapes)
            seen.append(InputSchema(dataset=datasets[d], job_namespace=f"ns-{team.slug}", job_name=f"job_{j:05}",
                                    fingerprint=fingerprint, fields=fields, complete=complete, token_team=team,
                                    first_seen_at=now, last_seen_at=now))
            if d < contract_count and d % 2 == 0:
                lane_reads.append(LaneRead(contract=contracts[d], reader=f"token:{j}", reader_label=f"job {j}",
                                           team=team, major=rng.choice((2, 3)), version="2.1", selector="2.x"))
    ColumnRead.objects.bulk_create(reads, batch_size=5000, ignore_conflicts=True)
    InputSchema.objects.bulk_create(seen, batch_size=5000, ignore_conflicts=True)
    LaneRead.objects.bulk_create(lane_reads, batch_size=5000, ignore_conflicts=True)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    log(f"world: {args.datasets} datasets, {args.jobs} jobs, {len(reads)} column reads, {len(seen)} input schemas, "
        f"{len(lane_reads)} thin-client reports, {contract_count} contracts with two lanes, "
        f"in {time.perf_counter() - started:.1f}s")
    timings, summaries = [], []
    lane_usage([contracts[0]])  # warm the connection
    for _ in range(args.samples):
        contract = rng.choice(contracts)
        t0 = time.perf_counter()
        usage = lane_usage([contract])
        timings.append((time.perf_counter() - t0) * 1000)
        summaries.append(usage[contract.pk][0].summary)
    result = {"still_on_p50_ms": round(percentile(timings, 50), 2), "still_on_p95_ms": round(percentile(timings, 95), 2),
              "example": max(summaries, key=len), "input_schemas": len(seen)}
    log(f"still on the old lane, one contract: p50 {result['still_on_p50_ms']} ms, p95 {result['still_on_p95_ms']} ms "
        f"(e.g. \"{result['example']}\")")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contracts", type=int, default=10_000)
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--lookups", type=int, default=2_000)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check the bench runs")
    args = parser.parse_args()
    if args.smoke:
        args.contracts, args.lookups, args.datasets, args.jobs, args.samples = 200, 100, 300, 40, 10
    from bench._django import machine

    result = {"smoke": args.smoke, "contracts": args.contracts, "versions": args.versions, "datasets": args.datasets,
              "jobs": args.jobs, **machine(), **client_part(args), **service_part(args)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
