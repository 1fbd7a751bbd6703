"""A proof per team: the impact preview with --verify on the impact bench's dbt project.

    python bench/verify.py [--changes 96] [--seed 11] [--smoke]

Reuses bench/impact.py's world read-only: its dbt project's captured `dbt-ol run` +
`dbt-ol test` events (bench/dbt_impact/captured/, real compiled SQL and schema facets
with warehouse types), its teams, datasets and consumer registrations, its change draw
(drop, rename, retype, NULLs) and the dataframe contract it proposes for each change.
No dbt run is needed: the events and the ground truth are the captured ones.

1. A scratch registry database (VERIFY_BENCH_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/reg_verify_bench): populated as bench/impact.py
   does, the captured events posted to POST /api/v1/lineage with each job's team token.
2. For each change: the changed dataset's 1.0 contract published and bound (once),
   then `change_requests.impact.preview` of the proposed 2.0, without and with
   `verify=True` (each affected team's SQL EXPLAINed on a scratch schema holding the
   proposed shape), in-process, each timed.
3. Each team's verdict kind is tallied and compared with the cached ground truth
   (captured/ground_truth.json: the teams `dbt run` + `dbt test` broke), where the
   change's outcome is cached: a `proven_broken` team the truth does not break is a
   false proof (unless dbt skipped models below one that errored: the truth cannot see
   those, and they are counted apart as `proofs_unjudged`); a `verified_safe` or type-checked `not_affected` team it breaks is a
   false all-clear. Both must be 0.

`--smoke`: the first 6 changes (CI runs it in seconds; figures not judged).

Prints a readable summary, then one JSON line (last):
{"changes", "verify_p50_s", "verify_p95_s", "preview_p50_s", "kinds": {kind: n}, "proven_by": {...},
 "false_proofs", "false_all_clear", "proofs_unjudged", "compared", "consumers_explained",
 "verification_available", "database"}
Target: verify p50 per change <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _impact_dbt as dbt_side  # noqa: E402
import impact as impact_bench  # noqa: E402
from _common import fresh_database, percentile  # noqa: E402
from _impact_dbt import log  # noqa: E402

URL = os.environ.get("VERIFY_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reg_verify_bench")
KINDS = ("proven_broken", "assumed_affected", "verified_safe", "not_affected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=96, help="how many breaking changes (default 96)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the change draw (default 11)")
    parser.add_argument("--smoke", action="store_true", help="6 changes: proves the bench runs")
    args = parser.parse_args()
    count = 6 if args.smoke else args.changes

    captured = dbt_side.load_captured()
    if captured is None:
        raise SystemExit("bench/dbt_impact/captured/ is missing: run bench/impact.py once to capture the events")
    project, events = captured
    changes = dbt_side.generate_changes(project, count=count, seed=args.seed)
    truth = dbt_side.load_ground_truth()

    log(f"Preparing {URL} …")
    fresh_database(URL)
    impact_bench.setup_django(URL)
    from django.db import connection

    from change_requests.impact import preview

    registry = impact_bench.populate_registry(project)
    server, port = impact_bench.start_server(URL)
    try:
        started = time.perf_counter()
        ingested = impact_bench.ingest(port, events, project, registry["tokens"])
        log(f"  {len(registry['teams'])} teams, {len(registry['datasets'])} datasets; posted {len(events)} events in "
            f"{time.perf_counter() - started:.1f}s: statuses {ingested['statuses']}")
    finally:
        impact_bench.stop_server(server)
    asker = impact_bench.Asker("inprocess", project, registry, port=None)

    plain, verified, kinds, proven_by = [], [], dict.fromkeys(KINDS, 0), {}
    false_proofs, false_all_clear, unjudged, compared, explained = [], [], [], 0, 0
    available = None
    for index, change in enumerate(changes, 1):
        node = project["nodes"][change.node]
        asker.ensure_contract(node)
        document = impact_bench.contract_document(node, version="2.0", change=change)
        t0 = time.perf_counter()
        preview(document)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        answer = preview(document, verify=True)
        verified.append(time.perf_counter() - t0)
        verification = answer.get("verification") or {}
        available = verification.get("available", available)
        explained += verification.get("consumers", 0)
        teams = answer["affected"] + answer["not_affected"]
        for team in teams:
            kind = team["verdict"]["kind"]
            kinds[kind] += 1
            if team["verdict"].get("by"):
                key = f"{kind} by {team['verdict']['by']}"
                proven_by[key] = proven_by.get(key, 0) + 1
        outcome = truth.get(dbt_side.cache_key(change, project))
        if outcome is not None:
            compared += 1
            broken = set(outcome["broken_teams"])
            for team in teams:
                verdict = team["verdict"]
                if verdict["kind"] == "proven_broken" and team["team"] not in broken:
                    line = f"{change.id}: {team['team']} ({verdict.get('job')}: {verdict.get('error')})"
                    # dbt skips what lies below a model that errored: the truth cannot see those breaks.
                    (unjudged if outcome.get("skipped_models") else false_proofs).append(line)
                if team["team"] in broken and (verdict["kind"] == "verified_safe"
                                               or (verdict["kind"] == "not_affected" and verdict.get("by"))):
                    false_all_clear.append(f"{change.id}: {team['team']} ({verdict.get('reason')})")
        summary = ", ".join(f"{t['team']} {t['verdict']['kind']}" for t in teams) or "no team"
        log(f"  [{index:2}/{len(changes)}] {change.id}: {summary} ({verified[-1]:.2f}s with verify, "
            f"{plain[-1]:.2f}s without)")
    for line in false_proofs:
        log(f"  FALSE PROOF {line}")
    for line in unjudged:
        log(f"  proof the truth cannot judge (dbt skipped models below an error) {line}")
    for line in false_all_clear:
        log(f"  FALSE ALL-CLEAR {line}")
    result = {
        "changes": len(changes), "verify_p50_s": round(percentile(verified, 50), 3),
        "verify_p95_s": round(percentile(verified, 95), 3), "preview_p50_s": round(percentile(plain, 50), 3),
        "kinds": kinds, "proven_by": proven_by, "false_proofs": len(false_proofs),
        "false_all_clear": len(false_all_clear), "proofs_unjudged": len(unjudged), "compared": compared, "consumers_explained": explained,
        "verification_available": available, "database": connection.vendor,
    }
    log(f"Preview with --verify: p50 {result['verify_p50_s']} s, p95 {result['verify_p95_s']} s per change "
        f"(target p50 <= 1 s); without: p50 {result['preview_p50_s']} s. Verdicts: {kinds}; "
        f"{explained} consumer jobs EXPLAINed; against the dbt truth ({compared} changes): "
        f"{len(false_proofs)} false proofs, {len(false_all_clear)} false all-clears (both must be 0); "
        f"{len(unjudged)} proofs of breaks below a model that errored, which dbt skipped and the truth cannot judge.")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
