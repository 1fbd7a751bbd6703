"""Listing datasets through the API: queries and time per page size.

    python bench/dataset_list.py [--sizes 100,1000,10000] [--smoke]

Last line: JSON {"sizes": {N: {"queries", "p50_ms"}}, "queries_constant": bool}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import fresh_database, machine, setup_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="sizes 10,100, 2 repeats: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeat = "10,100", 2
    fresh_database()
    setup_django()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from registry.models import Consumer, Dataset, Membership, Team

    user = get_user_model().objects.create_user("bench", password="x")
    team = Team.objects.create(name="Bench", slug="bench")
    consumer_team = Team.objects.create(name="Readers", slug="readers")
    Membership.objects.create(team=team, user=user)
    client = Client()
    client.force_login(user)
    results = {}
    created = 0
    for size in sorted(int(s) for s in args.sizes.split(",")):
        print(f"creating datasets up to {size}…", file=sys.stderr)
        batch = [Dataset(namespace="bench", name=f"t{i:06}", owner_team=team if i % 2 else None) for i in range(created, size)]
        made = Dataset.objects.bulk_create(batch, batch_size=5000)
        Consumer.objects.bulk_create((Consumer(dataset=d, team=consumer_team) for d in made[::3]), batch_size=5000)
        created = size
        timings = []
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                response = client.get(f"/api/datasets/?limit={size}")
                timings.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200 and len(response.json()["results"]) == size
        results[size] = {"queries": len(queries), "p50_ms": round(statistics.median(timings), 2)}
        print(f"{size:>6} datasets: {results[size]['queries']} queries, p50 {results[size]['p50_ms']} ms", file=sys.stderr)
    print(json.dumps({"machine": machine(), "sizes": results,
                      "queries_constant": len({r["queries"] for r in results.values()}) == 1}))


if __name__ == "__main__":
    main()
