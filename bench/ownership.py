"""Job ownership at scale: re-attributing every stored job after a rules change,
and what the job-grain attribution adds to reading usage.

    python bench/ownership.py [--jobs 10000] [--teams 50] [--rules 100] [--repeat 15]
    python bench/ownership.py --smoke   (100 jobs, for CI)

Builds, in a throwaway database (BENCH_DATABASE_URL): `--teams` teams with an
alias each; `--jobs` dbt jobs in one namespace (one token's team), each with a
dbt_node path `models/team_<t>/model_<i>.sql`, one in ten with an ownership
facet naming a team's alias, one in ten with an owner read from dbt artefacts;
one column read per job over 1,000 datasets. Then it times:
- `save_ownership_rules` of a file of `--rules` lines (one folder per team, the
  rest job-name globs), which decides every job's team again in its transaction;
- the same file with one line changed (a second version);
- a dry run of a third;
- `registry.usage.readings_of` of one dataset (p50), and the dataset list's
  "unregistered readers" annotation over 100 datasets (p50).

Last line: JSON {"jobs", "teams", "rules", "save_s", "resave_s", "dry_run_s",
"reattributed", "readings_of_p50_ms", "unregistered_badge_100_p50_ms", "machine"}.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import fresh_database, machine, setup_django  # noqa: E402


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def p50_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--teams", type=int, default=50)
    parser.add_argument("--rules", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="100 jobs, 1 repeat: seconds, for CI.")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.repeat = 100, 1
    fresh_database()
    setup_django()

    from django.utils import timezone

    from registry.jobs import DbtOwner, JobTeam, TeamAlias
    from registry.models import Dataset, Team
    from registry.ownership import attribute_jobs, save_ownership_rules
    from registry.usage import ColumnRead, readings_of

    rng = random.Random(7)
    log(f"building {args.teams} teams, {args.jobs} jobs …")
    teams = Team.objects.bulk_create([Team(name=f"Team {t}", slug=f"team-{t}") for t in range(args.teams)])
    platform = Team.objects.create(name="Platform", slug="platform")
    TeamAlias.objects.bulk_create([TeamAlias(team=t, alias=f"group:{t.slug}") for t in teams])
    datasets = Dataset.objects.bulk_create([Dataset(namespace="postgres://wh", name=f"shop.table_{d}",
                                                    owner_team=teams[d % args.teams]) for d in range(1000)])
    jobs, owners, reads = [], [], []
    now = timezone.now()
    for i in range(args.jobs):
        t = rng.randrange(args.teams)
        path = f"models/team_{t}/model_{i}.sql"
        facet_owner = [f"group:team-{rng.randrange(args.teams)}"] if i % 10 == 0 else []
        jobs.append(JobTeam(job_namespace="dbt_shop", job_name=f"shop.model_{i}", dbt_unique_id=f"model.shop.model_{i}",
                            dbt_path=path, owners=facet_owner))
        if i % 10 == 5:
            owners.append(DbtOwner(unique_id=f"model.shop.model_{i}", original_file_path=path, project="shop",
                                   team=teams[rng.randrange(args.teams)], source="meta.owner"))
        reads.append(ColumnRead(dataset=datasets[i % 1000], job_namespace="dbt_shop", job_name=f"shop.model_{i}",
                                column="amount", kind="DIRECT", source="column_lineage", token_team=platform,
                                last_seen_at=now, first_seen_at=now))
    JobTeam.objects.bulk_create(jobs, batch_size=2000)
    DbtOwner.objects.bulk_create(owners, batch_size=2000)
    ColumnRead.objects.bulk_create(reads, batch_size=2000)
    attribute_jobs()  # what the ingest would have decided as the jobs arrived

    def rules(variant: int) -> str:
        lines = [f"models/team_{t}/** @team-{(t + variant) % args.teams}" for t in range(args.teams)]
        lines += [f"ns:dbt_shop job:shop.model_{n} @team-{n % args.teams}" for n in range(args.rules - len(lines))]
        return "\n".join(lines[:args.rules]) + "\n"

    start = time.perf_counter()
    first = save_ownership_rules(rules(0), by=None)
    save_s = time.perf_counter() - start
    start = time.perf_counter()
    second = save_ownership_rules(rules(1), by=None)
    resave_s = time.perf_counter() - start
    start = time.perf_counter()
    save_ownership_rules(rules(2), by=None, dry_run=True)
    dry_run_s = time.perf_counter() - start
    log(f"rules v1: {save_s:.2f} s ({len(first.reattributed)} jobs moved); "
        f"v2: {resave_s:.2f} s ({len(second.reattributed)} moved); dry run {dry_run_s:.2f} s")

    readings = p50_ms(lambda: readings_of([rng.choice(datasets).pk]), args.repeat)
    listing = Dataset.objects.for_listing().order_by("namespace", "name")
    badge = p50_ms(lambda: list(listing.with_unregistered_readers()[:100]), args.repeat)
    log(f"readings_of one dataset p50 {readings} ms; unregistered-readers badge over 100 datasets p50 {badge} ms")
    print(json.dumps({"jobs": args.jobs, "teams": args.teams, "rules": args.rules, "save_s": round(save_s, 2),
                      "resave_s": round(resave_s, 2), "dry_run_s": round(dry_run_s, 2),
                      "reattributed": len(second.reattributed), "readings_of_p50_ms": readings,
                      "unregistered_badge_100_p50_ms": badge, "machine": machine()}))


if __name__ == "__main__":
    main()
