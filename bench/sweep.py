"""Benchmark: one sweep in which 10,000 datasets all change status at once.

The situation of a restart with stale statuses. The sweep's time is compared
with the same transitions written by hand as one raw SQL statement
(UPDATE … FROM + INSERT … SELECT into the transitions and the audit log), so
the evaluator's own cost shows as a ratio to the database's.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/reg_freshness_bench \
        .venv/bin/python bench/sweep.py [--datasets 10000] [--repeat 3] [--smoke]

The database named by BENCH_DATABASE_URL is dropped and re-created; its name
must end in _bench. Prints progress, then the figures, the JSON line last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]
from bench._django import setup_django  # noqa: E402 - also the freshness and replica benches'

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_freshness_bench"


def recreate_database(url: str) -> None:
    """Drop and create the database (a migrated copy when BENCH_TEMPLATE_DATABASE is set)."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    if not name.endswith("_bench"):
        sys.exit(f"refusing to drop {name!r}: the benchmark database's name must end in _bench")
    admin = url.rsplit("/", 1)[0] + "/postgres"
    template = os.environ.get("BENCH_TEMPLATE_DATABASE")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


RAW_SQL = """
WITH due AS (
    SELECT dataset_id, status AS old_status, next_check_at AS old_next, last_write_at, max_age, warn_after
      FROM freshness_datasetfreshness
     WHERE next_check_at <= %(now)s
), computed AS (
    SELECT *, CASE WHEN max_age IS NULL THEN 'no_slo'
                   WHEN last_write_at IS NULL THEN 'unknown'
                   WHEN %(now)s - last_write_at >= max_age THEN 'stale'
                   WHEN warn_after IS NOT NULL AND %(now)s - last_write_at >= warn_after THEN 'warning'
                   ELSE 'fresh' END AS new_status
      FROM due
), updated AS (
    UPDATE freshness_datasetfreshness AS f
       SET status = c.new_status,
           next_check_at = CASE c.new_status WHEN 'fresh' THEN c.last_write_at + coalesce(c.warn_after, c.max_age)
                                             WHEN 'warning' THEN c.last_write_at + c.max_age END,
           status_since = %(now)s, evaluated_at = %(now)s
      FROM computed AS c WHERE f.dataset_id = c.dataset_id
    RETURNING f.dataset_id, c.old_status, c.new_status, c.old_next,
              -- a reason of the same length as the evaluator's, so both write the same bytes
              format('last successful write %%s ago; the SLO allows %%s',
                     date_trunc('minute', %(now)s - c.last_write_at), c.max_age) AS reason
), recorded AS (
    INSERT INTO freshness_freshnesstransition (dataset_id, from_status, to_status, at, due_at, source, reason)
    SELECT dataset_id, old_status, new_status, %(now)s, old_next, 'sweep', reason
      FROM updated WHERE new_status <> old_status
    RETURNING id, dataset_id, from_status, to_status, due_at, reason
)
INSERT INTO registry_auditevent (actor_id, actor_label, action, object_type, object_id, object_repr, before, after, at)
SELECT NULL, 'freshness evaluator', 'freshness.transition', 'registry.dataset', r.dataset_id::text,
       left(d.namespace || '/' || d.name, 500), jsonb_build_object('status', r.from_status),
       jsonb_build_object('status', r.to_status, 'reason', r.reason, 'source', 'sweep', 'due_at', r.due_at,
                          'transition', r.id), %(now)s
  FROM recorded AS r JOIN registry_dataset AS d ON d.id = r.dataset_id
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="200 datasets, 1 round: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.repeat = 200, 1
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    print(f"re-creating {urlsplit(url).path.lstrip('/')} and migrating…", flush=True)
    recreate_database(url)
    setup_django(url)

    from django.db import connection, transaction
    from django.utils import timezone

    from freshness.constants import FreshnessStatus
    from freshness.evaluation import evaluate
    from freshness.models import DatasetFreshness, FreshnessTransition
    from registry.models import Dataset

    n = args.datasets
    now = timezone.now()
    print(f"creating {n} datasets, each fresh on paper and overdue…", flush=True)
    datasets = Dataset.objects.bulk_create(
        [Dataset(namespace="bench://sweep", name=f"table_{i:05d}") for i in range(n)], batch_size=5000)
    ids = [d.pk for d in datasets]
    DatasetFreshness.objects.bulk_create([
        DatasetFreshness(dataset_id=pk, max_age=timedelta(hours=1), warn_after=timedelta(minutes=30),
                         last_write_at=now - timedelta(hours=2), status=FreshnessStatus.WARNING,
                         next_check_at=now - timedelta(hours=1))
        for pk in ids], batch_size=5000)

    def reset() -> None:
        with transaction.atomic():
            FreshnessTransition.objects.all().delete()
            DatasetFreshness.objects.update(status=FreshnessStatus.WARNING, next_check_at=now - timedelta(hours=1))
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE freshness_datasetfreshness")
            cursor.execute("VACUUM ANALYZE freshness_freshnesstransition")

    statements: list[str] = []

    def count(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    sweep_times, raw_times = [], []
    for round_ in range(1, args.repeat + 1):
        reset()
        statements.clear()
        started = time.perf_counter()
        with connection.execute_wrapper(count):
            result = evaluate(now)
        sweep_times.append(time.perf_counter() - started)
        assert result.transitions == n, result
        sweep_statements = len(statements)

        reset()
        started = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(RAW_SQL, {"now": now})
            assert cursor.rowcount == n, cursor.rowcount
        raw_times.append(time.perf_counter() - started)
        print(f"round {round_}: sweep {sweep_times[-1]:.3f} s in {sweep_statements} statements, "
              f"raw SQL {raw_times[-1]:.3f} s", flush=True)

    sweep_s, raw_s = statistics.median(sweep_times), statistics.median(raw_times)
    # The machine is shared: compare each sweep with the raw run next to it.
    ratio = statistics.median(s / r for s, r in zip(sweep_times, raw_times, strict=True))
    figures = {
        "datasets": n,
        "sweep_s": round(sweep_s, 4),
        "statements": sweep_statements,
        "per_transition_us": round(sweep_s / n * 1e6, 1),
        "raw_sql_s": round(raw_s, 4),
        "ratio": round(ratio, 2),
    }
    print(f"median of {args.repeat}: sweep {sweep_s:.3f} s, raw {raw_s:.3f} s, "
          f"ratio (median of the rounds' ratios) {figures['ratio']}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
