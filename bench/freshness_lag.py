"""Benchmark: how long after its deadline a freshness breach is recorded.

Real parts: a Redis broker, a Celery worker and Celery beat (sweep interval
15 s). Datasets get SLOs of a few seconds with staggered deadlines, one
successful write each, and are left to lapse; the lag of each breach is the
recorded transition's time minus the deadline it was due at.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/reg_freshness_bench \
    BENCH_BROKER_URL=redis://127.0.0.1:6379/2 \
        .venv/bin/python bench/freshness_lag.py [--datasets 60] [--spread 20] [--smoke]

The database is dropped and re-created (its name must end in _bench) and the
Redis database is emptied. Prints progress, then the figures, the JSON line last:
{"datasets", "interval_s", "lag_p50_s", "lag_p95_s", "missed"}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from bench._common import percentile  # noqa: E402
from bench.sweep import DEFAULT_URL, recreate_database, setup_django  # noqa: E402
from tests.celery_broker import start_celery, stop  # noqa: E402

INTERVAL_S = 15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=60)
    parser.add_argument("--spread", type=float, default=20.0, help="Seconds over which the deadlines are spread.")
    parser.add_argument("--lead", type=float, default=3.0, help="Seconds until the first deadline.")
    parser.add_argument("--lose-tasks", action="store_true",
                        help="Empty the broker after scheduling, as if every deadline task were lost: "
                             "only the beat sweep is left to notice the breaches.")
    parser.add_argument("--smoke", action="store_true", help="5 datasets over 2 s: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.spread, args.lead = 5, 2.0, 2.0

    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/2")
    os.environ.update({"CELERY_BROKER_URL": broker, "FRESHNESS_SWEEP_INTERVAL": f"{INTERVAL_S}s"})
    print("re-creating the benchmark database and migrating…", flush=True)
    recreate_database(url)
    setup_django(url)

    import redis
    from django.utils import timezone

    from freshness.constants import FreshnessStatus, TransitionSource
    from freshness.evaluation import record_write, set_slo
    from freshness.models import FreshnessTransition
    from registry.models import Dataset

    redis.Redis.from_url(broker).flushdb()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "registry.settings",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}"}
    workdir = Path(tempfile.mkdtemp(prefix="freshness-lag-"))
    print(f"starting a Celery worker and beat (logs in {workdir})…", flush=True)
    worker = start_celery(["worker", "--pool=threads", "--concurrency=4", "--without-gossip", "--without-mingle",
                           "--without-heartbeat"], workdir / "worker.log", env, ready="ready.", attempts=600)
    beat = start_celery(["beat", f"--schedule={workdir / 'beat-schedule'}"], workdir / "beat.log", env,
                        ready="beat: Starting", attempts=600)
    try:
        from django.contrib.auth import get_user_model

        admin = get_user_model().objects.create_superuser("bench", "bench@example.com", None)
        n = args.datasets
        datasets = Dataset.objects.bulk_create(
            [Dataset(namespace="bench://lag", name=f"table_{i:04d}") for i in range(n)])
        written = timezone.now()
        for i, dataset in enumerate(datasets):
            max_age = timedelta(seconds=args.lead + args.spread * i / max(n - 1, 1))
            set_slo(dataset, max_age=max_age, by=admin, now=written)
            record_write(dataset, at=written, row_count=100, now=written)  # schedules the deadline task
        if args.lose_tasks:
            time.sleep(0.5)  # let the worker take the tasks off the queue, then restart it without them
            stop(worker)
            redis.Redis.from_url(broker).flushdb()
            worker = start_celery(["worker", "--pool=threads", "--concurrency=4", "--without-gossip",
                                   "--without-mingle", "--without-heartbeat"], workdir / "worker2.log", env,
                                  ready="ready.", attempts=600)
        last_deadline = written + timedelta(seconds=args.lead + args.spread)
        wait_until = last_deadline + timedelta(seconds=INTERVAL_S + 5)
        print(f"{n} datasets, deadlines from +{args.lead:.0f} s to +{args.lead + args.spread:.0f} s; "
              f"waiting until every breach is recorded (at most {(wait_until - timezone.now()).total_seconds():.0f} s)…",
              flush=True)
        while timezone.now() < wait_until:
            done = FreshnessTransition.objects.filter(to_status=FreshnessStatus.STALE).count()
            if done == n:
                break
            time.sleep(0.5)
        breaches = list(FreshnessTransition.objects.filter(to_status=FreshnessStatus.STALE)
                        .values_list("at", "due_at", "source"))
    finally:
        for process in (beat, worker):
            stop(process)
        redis.Redis.from_url(broker).flushdb()

    lags = [(at - due).total_seconds() for at, due, _ in breaches]
    by_task = sum(1 for *_, source in breaches if source == TransitionSource.DEADLINE)
    by_sweep = sum(1 for *_, source in breaches if source == TransitionSource.SWEEP)
    figures = {
        "datasets": n,
        "interval_s": INTERVAL_S,
        "lag_p50_s": round(statistics.median(lags), 3) if lags else None,
        "lag_p95_s": round(percentile(lags, 95), 3) if lags else None,
        "missed": n - len(breaches),
    }
    print(f"breaches recorded: {len(breaches)} of {n} ({by_task} by their deadline task, {by_sweep} by the sweep); "
          f"lag max {max(lags):.3f} s" if lags else "no breach recorded")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
