"""Retention of one month of raw events: dropping its partition, against deleting its rows.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/reg_retention_bench \\
        .venv/bin/python bench/retention.py [--sizes 10000,100000,1000000] [--smoke]

A size is a world's number of datasets as bench/scale.py counts them: 10 raw events per
dataset over 90 days, so one month holds size × 10 / 3 events. For each size, two past
months are filled with that many events each (payloads of about 600 bytes, as a
RunEvent with a few inputs and outputs), then timed:

- `drop_month_ms`: lineage.partitions.drop_before dropping the older month's partition
  (what retention does to every month wholly past its window);
- `ingest_stall_ms`: meanwhile, from another connection, one raw event of this month
  inserted after another: the longest any of them took (the ingest's wait on the drop);
- `delete_month_s`: the other month deleted row by row, 5,000 per transaction (what
  retention did before the table was partitioned, and still does in the month its cutoff
  cuts and in the default partition); `--no-row-by-row` leaves it (and that month) out;
- `prune_command_s`: `prune_lineage_events` over a refilled month, whole (it counts the
  rows it is about to drop, then drops the month).

The database named by BENCH_DATABASE_URL is dropped and re-created; its name must end in
_bench. Prints a line per figure, then one JSON line with every size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client"), str(ROOT / "bench")]
import psycopg  # noqa: E402
from _common import plain_url, recreate_database  # noqa: E402
from _django import setup_django  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_retention_bench"
BATCH = 5000

# One month of events, spread evenly over it: %(n)s rows from %(start)s to %(end)s.
FILL_SQL = """
INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name, payload, received_at)
SELECT md5(%(tag)s || e::text) || md5(e::text || %(tag)s), gen_random_uuid(),
       CASE WHEN e %% 2 = 0 THEN 'START' ELSE 'COMPLETE' END, t, 'airflow', 'job_' || (e %% 1000),
       jsonb_build_object('eventType', 'COMPLETE', 'eventTime', t, 'producer', 'https://example.com/bench',
                          'run', jsonb_build_object('runId', gen_random_uuid()),
                          'job', jsonb_build_object('namespace', 'airflow', 'name', 'job_' || (e %% 1000)),
                          'inputs', jsonb_build_array(jsonb_build_object('namespace', 'postgres://warehouse:5432',
                                                                         'name', 'raw.table_' || (e %% 5000))),
                          'outputs', jsonb_build_array(jsonb_build_object('namespace', 'postgres://warehouse:5432',
                                                                          'name', 'mart.table_' || (e %% 5000)),
                                                       jsonb_build_object('namespace', 'postgres://warehouse:5432',
                                                                          'name', 'mart.summary_' || (e %% 500)))),
       t
  FROM generate_series(0, %(n)s - 1) e
  CROSS JOIN LATERAL (SELECT %(start)s::timestamptz + (%(end)s::timestamptz - %(start)s::timestamptz) * (e::float / %(n)s) AS t) tt
"""


PROBE_SQL = """
INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name, payload, received_at)
VALUES (%s, gen_random_uuid(), 'COMPLETE', now(), 'airflow', 'probe', '{}', now())
"""


class InsertProbe(threading.Thread):
    """Inserts one raw event of this month after another on its own connection, until
    stopped: `longest_ms` is how long the ingest waited at worst meanwhile."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.stopped, self.longest_ms, self.inserts = url, threading.Event(), 0.0, 0

    def run(self) -> None:
        with psycopg.connect(plain_url(self.url), autocommit=True) as db:
            while not self.stopped.is_set():
                started = time.perf_counter()
                db.execute(PROBE_SQL, [f"probe-{self.inserts}-{time.time_ns()}"])
                self.longest_ms = max(self.longest_ms, (time.perf_counter() - started) * 1000)
                self.inserts += 1
                time.sleep(0.005)

    def __enter__(self) -> InsertProbe:
        self.start()
        time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join()


def measure(size: int, url: str, *, row_by_row: bool = True) -> dict:
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from lineage import partitions
    from lineage.models import RunEvent

    per_month = max(1, size * 10 // 3)
    this_month = partitions.month_start(timezone.now())
    older, old = partitions.add_months(this_month, -3), partitions.add_months(this_month, -2)
    partitions.create_ahead(older, ahead=1)

    def fill(start, tag: str) -> float:
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(FILL_SQL, {"n": per_month, "start": start, "end": partitions.add_months(start, 1), "tag": tag})
            cursor.execute("ANALYZE lineage_runevent")
            # A month retention drops is months old, long written out to disk; a month just
            # filled is still being written, and dropping it waits on that.
            cursor.execute("CHECKPOINT")
        return time.perf_counter() - started

    months = [older, old] if row_by_row else [older]
    filled = sum(fill(start, tag) for start, tag in zip(months, "ab", strict=False))
    print(f"size {size}: {per_month} events in each of {', '.join(map(partitions.month_name, months))} "
          f"(filled in {filled:.1f} s)", flush=True)

    with InsertProbe(url) as probe:
        started = time.perf_counter()
        dropped = partitions.drop_before(old)
        drop_ms = (time.perf_counter() - started) * 1000
    assert dropped == [partitions.month_name(older)], dropped
    print(f"  drop one month's partition: {drop_ms:.1f} ms; the longest insert beside it: {probe.longest_ms:.1f} ms "
          f"({probe.inserts} inserts)", flush=True)

    delete_s = None
    if row_by_row:
        rows = RunEvent.objects.from_before(partitions.add_months(old, 1))
        started = time.perf_counter()
        deleted = 0
        while ids := list(rows.order_by("id").values_list("id", flat=True)[:BATCH]):
            with transaction.atomic():
                deleted += rows.filter(id__in=ids).delete()[0]
        delete_s = time.perf_counter() - started
        assert deleted == per_month, deleted
        print(f"  delete one month row by row ({BATCH} per transaction): {delete_s:.2f} s", flush=True)

    partitions.create_ahead(older, ahead=0)
    fill(older, "c")
    age = timezone.now() - old
    started = time.perf_counter()
    call_command("prune_lineage_events", "--older-than", f"{int(age.total_seconds())}s", stdout=StringIO())
    prune_s = time.perf_counter() - started
    assert not RunEvent.objects.from_before(old).exists()
    print(f"  prune_lineage_events dropping one month: {prune_s:.2f} s", flush=True)
    # The emptied month goes too, for the next size.
    partitions.drop_before(partitions.add_months(old, 1) + timedelta(seconds=1))
    return {"size": size, "events_per_month": per_month, "drop_month_ms": round(drop_ms, 1),
            "ingest_stall_ms": round(probe.longest_ms, 1),
            "delete_month_s": round(delete_s, 2) if delete_s else None, "prune_command_s": round(prune_s, 2),
            "delete_over_drop": round(delete_s * 1000 / drop_ms, 1) if drop_ms and delete_s else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated world sizes (datasets), default 10000")
    parser.add_argument("--no-row-by-row", action="store_true",
                        help="leave out the row-by-row delete it compares with (at 1M, a quarter of an hour)")
    parser.add_argument("--smoke", action="store_true", help="one size of 300 (1,000 events a month): seconds, for CI")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sys.exit(f"--sizes: comma-separated whole numbers, not {args.sizes!r}")
    if args.smoke:
        sizes = [300]
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    name = urlsplit(url).path.lstrip("/")
    if not name.endswith("_bench"):
        sys.exit(f"refusing to drop {name!r}: the benchmark database's name must end in _bench")
    print(f"re-creating {name} and migrating…", flush=True)
    recreate_database(url)
    setup_django(url)
    results = [measure(size, url, row_by_row=not args.no_row_by_row) for size in sizes]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(json.dumps({"retention": results, "cores": os.cpu_count(), "loadavg": load}))


if __name__ == "__main__":
    main()
