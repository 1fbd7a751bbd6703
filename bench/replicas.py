"""Benchmark: what one process of each role sustains, for sizing a deployment
(docs/operations.md, "Sizing the roles").

Real parts: PostgreSQL, Redis, the Dockerfile's granian command (one worker per
web process), `celery worker --pool solo` (one process) and `celery beat`
(the fleet of tests/replicas/fleet.py).

- web: OpenLineage COMPLETE events (one output dataset with a freshness SLO:
  the common write) POSTed by `--senders` concurrent clients through one web
  process, then through two, for `--seconds` each: events/s stored;
- worker: `--breaches` datasets bound to a contract, each written once with a
  2 s SLO, lapse together; one worker runs the deadline tasks, opens an
  incident per dataset and delivers its webhook to a local receiver:
  breaches/s from the first deadline to the last delivery (the heaviest thing
  a worker does per event);
- beat: the CPU seconds per minute one beat process spends (its work does not
  grow with events; the sweep it sends runs on a worker).

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/reg_replicas_bench \
    BENCH_BROKER_URL=redis://127.0.0.1:6379/14 \
        .venv/bin/python bench/replicas.py [--seconds 20] [--senders 8] [--breaches 200] [--smoke]

The database is dropped and re-created (its name must end in _bench) and the
Redis database is emptied. Prints the JSON line last:
{"machine", "loadavg", "web_events_per_s_1", "web_events_per_s_2", "worker_breaches_per_s", "beat_cpu_s_per_min"}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from bench._django import machine  # noqa: E402
from bench.sweep import recreate_database, setup_django  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_replicas_bench"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _write_event(namespace: str, name: str) -> dict:
    from django.utils import timezone

    return {"eventType": "COMPLETE", "eventTime": timezone.now().isoformat(), "producer": "https://example.com/etl",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "etl", "name": f"load_{name}"},
            "inputs": [], "outputs": [{"namespace": namespace, "name": name}]}


def _web_rate(ports: list[int], secret: str, names: list[str], senders: int, seconds: float) -> float:
    from tests.replicas.fleet import post_event

    stored = [0] * senders
    until = time.monotonic() + seconds

    def send(i: int) -> None:
        n = 0
        while time.monotonic() < until:
            post_event(ports[(i + n) % len(ports)], secret, _write_event("bench", names[(i * 7919 + n) % len(names)]))
            stored[i] += 1
            n += 1

    started = time.monotonic()
    threads = [threading.Thread(target=send, args=(i,)) for i in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(stored) / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="Seconds of traffic per web measurement.")
    parser.add_argument("--senders", type=int, default=8, help="Concurrent clients posting events.")
    parser.add_argument("--datasets", type=int, default=500, help="Datasets the web traffic writes.")
    parser.add_argument("--breaches", type=int, default=200, help="Datasets whose deadlines lapse at once.")
    parser.add_argument("--smoke", action="store_true", help="2 s of traffic, 10 breaches: for CI")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.senders, args.datasets, args.breaches = 2.0, 2, 20, 10

    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14")
    os.environ.update({"CELERY_BROKER_URL": broker, "ALLOWED_HOSTS": "127.0.0.1", "DEBUG": "0",
                       "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32", "LOG_LEVEL": "WARNING"})
    print("re-creating the benchmark database and migrating…", flush=True)
    recreate_database(url)
    setup_django(url)

    from datetime import timedelta

    import redis
    from django.contrib.auth import get_user_model

    from change_requests.models import TeamChannel
    from contracts_app.models import Contract, ContractVersion, DatasetBinding
    from freshness.evaluation import set_slo
    from incidents.models import IncidentNotification
    from registry.models import ApiToken, Dataset, Membership, Team
    from tests.celery_broker import publishing_to
    from tests.incidents.conftest import orders_document
    from tests.replicas.fleet import Fleet, Receiver, post_event

    redis.Redis.from_url(broker).flushdb()
    team = Team.objects.create(name="Checkout", slug="checkout")
    owner = get_user_model().objects.create_user("alice", "alice@example.com", "pw")
    Membership.objects.create(team=team, user=owner)
    secret = ApiToken.issue("pipelines", team=team)[1]
    names = [f"retail.public.t{i}" for i in range(args.datasets)]
    for dataset in Dataset.objects.bulk_create(Dataset(namespace="bench", name=n, owner_team=team) for n in names):
        set_slo(dataset, max_age=timedelta(hours=6), by=owner)
    receiver = Receiver()
    TeamChannel.objects.add_webhook(team, url=receiver.url, secret="s3cret")
    contract = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                       entity="orders", schema_type="dataframe", owner_team=team)
    ContractVersion.objects.create(contract=contract, version="1.0", document=orders_document(), checksum="a")
    lapsing = Dataset.objects.bulk_create(Dataset(namespace="bench", name=f"retail.public.lapse{i}", owner_team=team)
                                          for i in range(args.breaches))
    for dataset in lapsing:
        DatasetBinding.objects.create(dataset=dataset, contract=contract)
        set_slo(dataset, max_age=timedelta(seconds=2), by=owner)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}
    figures: dict = {"machine": machine(), "senders": args.senders, "seconds": args.seconds}
    with tempfile.TemporaryDirectory() as tmp, Fleet(env, Path(tmp), workers=1, beats=1, webs=2) as fleet, \
            publishing_to(broker):
        # Each web measurement first warms the processes (imports, connections, prepared statements).
        _web_rate(fleet.web_ports, secret, names, args.senders, 1.0)
        figures["web_events_per_s_1"] = round(_web_rate(fleet.web_ports[:1], secret, names, args.senders,
                                                        args.seconds), 1)
        figures["web_events_per_s_2"] = round(_web_rate(fleet.web_ports, secret, names, args.senders,
                                                        args.seconds), 1)
        print(f"web: {figures['web_events_per_s_1']} events/s through one process, "
              f"{figures['web_events_per_s_2']} through two", flush=True)

        beat_cpu, beat_started = _cpu_seconds(fleet.beats[0].pid), time.monotonic()
        for dataset in lapsing:
            post_event(fleet.web_ports[0], secret, _write_event("bench", dataset.name))
        first_deadline = time.monotonic() + 2.0
        deadline = time.monotonic() + 600
        while len(receiver.delivered) < args.breaches and time.monotonic() < deadline:
            time.sleep(0.05)
        done = time.monotonic()
        if len(receiver.delivered) < args.breaches:
            sys.exit(f"only {len(receiver.delivered)} of {args.breaches} breaches were delivered in 600 s:\n"
                     + fleet.log_tail("worker"))
        figures["worker_breaches_per_s"] = round(args.breaches / max(done - first_deadline, 0.001), 1)
        figures["beat_cpu_s_per_min"] = round(
            (_cpu_seconds(fleet.beats[0].pid) - beat_cpu) / (time.monotonic() - beat_started) * 60, 2)
        figures["notifications"] = IncidentNotification.objects.filter(channel="webhook").count()
    receiver.close()
    figures["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    print(f"worker: {figures['worker_breaches_per_s']} breaches/s (deadline task, incident, webhook) per process; "
          f"beat: {figures['beat_cpu_s_per_min']} CPU s/min")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
