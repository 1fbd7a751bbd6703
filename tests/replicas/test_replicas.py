"""Three workers, two beats and two web processes on one database and one Redis,
for REPLICA_TEST_SECONDS (5 minutes unless set) of generated traffic: writes
that set freshness and quality deadlines, deadlines let lapse, failing and
passing quality results (each failure delivered twice at once, through both web
processes, as a producer's retry would), and change requests whose clock
reminds and escalates. Every notification goes to a webhook receiver here that
counts the deliveries of each outbox row.

Then: 0 duplicate notifications, 0 lost ones; every freshness deadline that
lapsed recorded once as a breach, with one incident and its notification;
one check_failed incident per failure episode; never two incidents open at
once for the same dataset, cause and check.

Two beats are a deployment mistake the design tolerates (each sends every
periodic task); the test runs them on purpose. It starts first in the suite
(`starts_early`): it waits more than it works.
"""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
import redis
from django.db import close_old_connections, connection
from django.utils import timezone

from change_requests.models import ChangeRequest, Notification, TeamChannel
from change_requests.workflows import open_change_request
from contracts_app.models import Contract, ContractVersion, DatasetBinding
from contracts_app.publishing import record_version
from freshness.evaluation import set_slo
from freshness.models import FreshnessTransition
from incidents.models import Cause, Incident, IncidentNotification
from incidents.quality_slo import set_quality_slo
from registry.env import parse_contract_store
from registry.models import ApiToken, Dataset
from tests.celery_broker import ROOT, database_url, publishing_to, wait_for
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document, report_for
from tests.incidents.conftest import ALL_PASS, failed, orders_document
from tests.incidents.conftest import test_event as quality_event

from .fleet import Fleet, Receiver, post_event

pytestmark = [pytest.mark.slow, pytest.mark.starts_early, pytest.mark.django_db(transaction=True)]

BROKER = os.environ.get("TEST_REPLICAS_BROKER_URL", "redis://127.0.0.1:6379/6")
SECONDS = float(os.environ.get("REPLICA_TEST_SECONDS", "300"))
DATASETS = int(os.environ.get("REPLICA_TEST_DATASETS", "24"))
MAX_AGE = timedelta(seconds=8)  # the freshness SLO: short, so that deadlines lapse all the time
QUALITY_WITHIN = timedelta(seconds=5)
CR_DEADLINE = timedelta(seconds=20)
CR_REMINDER_BEFORE = timedelta(seconds=8)
CR_EVERY = 6.0  # seconds between change requests


def _env(tmp_path) -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": BROKER, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
            "FRESHNESS_SWEEP_INTERVAL": "2s", "CHANGE_REQUEST_CLOCK_INTERVAL": "2s",
            "CHANGE_REQUEST_RETRY_BACKOFF": "1s", "CHANGE_REQUEST_DEADLINE": "20s",
            "CHANGE_REQUEST_REMINDER_BEFORE": f"{int(CR_REMINDER_BEFORE.total_seconds())}s",
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32", "CONTRACT_STORE": str(tmp_path / "store"),
            "LOG_LEVEL": "WARNING"}


@dataclass
class History:
    """What the generator did to one dataset, in order."""

    dataset: Dataset
    writes: list[tuple[datetime, datetime]] = field(default_factory=list)  # (event time, stored by)
    verdicts: list[str] = field(default_factory=list)  # "pass" / "fail", in the order sent


def _write_event(dataset: Dataset, at: datetime) -> dict:
    return {"eventType": "COMPLETE", "eventTime": at.isoformat(), "producer": "https://example.com/etl",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "etl", "name": f"load_{dataset.name}"},
            "inputs": [], "outputs": [{"namespace": dataset.namespace, "name": dataset.name}]}


def _drive(history: History, ports: list[int], secret: str, until: float, rng: random.Random,
           errors: list[BaseException]) -> None:
    """One dataset's traffic until `until` (time.time()): a write, maybe a result, a pause
    well inside the SLO (mostly) or well past it (a lapsed deadline)."""
    dataset, n = history.dataset, 0
    try:
        with ThreadPoolExecutor(2) as both:
            while time.time() < until:
                at = timezone.now()
                post_event(ports[n % 2], secret, _write_event(dataset, at))
                history.writes.append((at, timezone.now()))
                roll = rng.random()
                if roll < 0.55:
                    post_event(ports[(n + 1) % 2], secret, quality_event(dataset, ALL_PASS, at=timezone.now()))
                    history.verdicts.append("pass")
                elif roll < 0.8:
                    event = quality_event(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], at=timezone.now())
                    # The same failure through both web processes at once: a producer's retry.
                    list(both.map(post_event, ports, [secret] * 2, [event] * 2))
                    history.verdicts.append("fail")
                n += 1
                if rng.random() < 0.8:
                    pause = rng.uniform(0.5, 0.25 * MAX_AGE.total_seconds())
                else:
                    pause = rng.uniform(2.0, 2.5) * MAX_AGE.total_seconds()
                time.sleep(max(0.0, min(pause, until - time.time())))
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)
    finally:
        close_old_connections()


def _open_requests(owner, consumer_team, until: float, opened: list[int], errors: list[BaseException]) -> None:
    """A breaking change request every CR_EVERY s, each on a contract of its own (one
    unfinished request per contract), consumed by Analytics."""
    i = 0
    try:
        while time.time() < until:
            # The owner withdraws what was escalated, as owners do: the clock reassesses every
            # open request on each pass, so requests left open forever would slow it down.
            for request in ChangeRequest.objects.filter(pk__in=opened, state="open", escalated_at__isnull=False):
                request.withdraw(by=owner, comment="escalated: withdrawn")
            document = {**BASE_DOCUMENT, "schema": {**BASE_DOCUMENT["schema"], "entity": f"order_placed_{i}",
                                                     "name": f"retail.checkout.order_placed_{i}"}}
            version = record_version(document, by=owner)
            dataset = Dataset.objects.create(namespace="postgres://warehouse:5432", name=f"retail.public.placed_{i}",
                                             owner_team=version.contract.owner_team)
            dataset.consumers.create(team=consumer_team)
            version.contract.bind(dataset, by=owner)
            proposed = proposed_document()
            proposed["schema"] = {**document["schema"], "version": "2.0"}
            request = open_change_request(version.contract, proposed, by=owner, report=report_for(proposed),
                                          deadline=CR_DEADLINE)
            opened.append(request.pk)
            i += 1
            time.sleep(max(0.0, min(CR_EVERY, until - time.time())))
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)
    finally:
        close_old_connections()


def expected_breaches(history: History) -> tuple[set[datetime], set[datetime]]:
    """(deadlines that surely lapsed, deadlines too close to call). A write's deadline
    lapsed when the next write's event time is after it (or there is none); it did
    not when the next write was stored before it; in between, it depends on which
    committed first."""
    surely, maybe = set(), set()
    for (at, _), following in zip(history.writes, [*history.writes[1:], None], strict=True):
        deadline = at + MAX_AGE
        if following is None or following[0] > deadline:
            surely.add(deadline)
        elif following[1] >= deadline:
            maybe.add(deadline)
    return surely, maybe


def failure_episodes(verdicts: list[str]) -> int:
    return sum(1 for i, v in enumerate(verdicts) if v == "fail" and (i == 0 or verdicts[i - 1] == "pass"))


@pytest.fixture
def world(settings, tmp_path, dataset, owner, owner_team, consumer_team):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.CHANGE_REQUEST_REMINDER_BEFORE = CR_REMINDER_BEFORE
    contract = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                       entity="orders", schema_type="dataframe", owner_team=owner_team)
    ContractVersion.objects.create(contract=contract, version="1.0", document=orders_document(), checksum="a")
    datasets = [Dataset.objects.create(namespace=dataset.namespace, name=f"retail.public.replica_{i}",
                                       owner_team=owner_team) for i in range(DATASETS)]
    for i, d in enumerate(datasets):
        DatasetBinding.objects.create(dataset=d, contract=contract)
        set_slo(d, max_age=MAX_AGE, by=owner)
        if i % 2 == 0:
            set_quality_slo(d, QUALITY_WITHIN, by=owner)
    return datasets


def test_three_workers_two_beats_and_two_web_processes_send_each_notification_once_and_miss_no_breach(
        world, tmp_path, owner, owner_team, consumer_team):
    redis.Redis.from_url(BROKER).flushdb()
    receiver = Receiver()
    for team in (owner_team, consumer_team):
        TeamChannel.objects.add_webhook(team, url=f"{receiver.url}/{team.slug}", secret="s3cret")
    secret = ApiToken.issue("airflow", team=owner_team)[1]
    histories = [History(d) for d in world]
    errors: list[BaseException] = []
    opened: list[int] = []
    try:
        with Fleet(_env(tmp_path), tmp_path / "fleet") as fleet, publishing_to(BROKER):
            started = time.time()
            until = started + SECONDS
            threads = [threading.Thread(target=_drive, args=(h, fleet.web_ports, secret, until,
                                                             random.Random(i), errors)) for i, h in enumerate(histories)]
            threads.append(threading.Thread(target=_open_requests, args=(owner, consumer_team, until, opened, errors)))
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            generated = time.time() - started
            assert not errors, errors
            # Every deadline set lapses, every request passes its deadline, every message is sent.
            time.sleep(max(MAX_AGE, CR_DEADLINE).total_seconds() + 4)
            outbox = [*Notification.objects.filter(channel="webhook").values_list("pk", "sent_at"),
                      *IncidentNotification.objects.filter(channel="webhook").values_list("pk", "sent_at")]
            assert wait_for(lambda: not (Notification.objects.filter(channel="webhook", sent_at__isnull=True).exists()
                                         or IncidentNotification.objects.filter(channel="webhook",
                                                                                sent_at__isnull=True).exists()),
                            timeout=120), fleet.log_tail("worker")
            time.sleep(3)  # a duplicate would arrive now
            dead = {name: p.returncode for name, p in
                    [*((f"worker{i}", p) for i, p in enumerate(fleet.workers)),
                     *((f"beat{i}", p) for i, p in enumerate(fleet.beats)),
                     *((f"web{i}", p) for i, p in enumerate(fleet.webs))] if p.poll() is not None}
            assert not dead, (dead, fleet.log_tail(""))
    finally:
        receiver.close()

    writes = sum(len(h.writes) for h in histories)
    print(f"{generated:.0f}s: {writes} writes, {sum(len(h.verdicts) for h in histories)} results, "
          f"{len(opened)} change requests, {len(outbox)} webhook messages {dict(receiver.events)}")

    # 0 duplicate notifications, 0 lost: each webhook row of either outbox arrived exactly once.
    rows = {("change_request", pk) for pk in Notification.objects.filter(channel="webhook").values_list("pk", flat=True)}
    rows |= {("incident", pk) for pk in IncidentNotification.objects.filter(channel="webhook")
             .values_list("pk", flat=True)}
    duplicates = {key: n for key, n in receiver.delivered.items() if n > 1}
    assert not duplicates, f"{len(duplicates)} messages delivered more than once: {duplicates}"
    assert set(receiver.delivered) == rows, (f"lost: {sorted(rows - set(receiver.delivered))}; "
                                             f"unknown: {sorted(set(receiver.delivered) - rows)}")

    # 0 missed breaches: every lapsed freshness deadline is one stale transition, one incident, one message.
    stale = defaultdict(list)
    for dataset_id, due_at in FreshnessTransition.objects.filter(to_status="stale").values_list("dataset_id", "due_at"):
        stale[dataset_id].append(due_at)
    for history in histories:
        surely, maybe = expected_breaches(history)
        recorded = stale[history.dataset.pk]
        assert len(recorded) == len(set(recorded)), f"{history.dataset}: a breach recorded twice: {sorted(recorded)}"
        assert surely <= set(recorded), (
            f"{history.dataset}: missed breaches at {sorted(surely - set(recorded))}; writes {history.writes}; "
            f"transitions {list(FreshnessTransition.objects.filter(dataset=history.dataset).order_by('at').values_list('from_status', 'to_status', 'at', 'due_at', 'source'))}")
        assert set(recorded) <= surely | maybe, f"{history.dataset}: breaches that never lapsed {sorted(set(recorded) - surely - maybe)}"
        incidents = Incident.objects.filter(dataset=history.dataset, cause=Cause.STALE)
        assert sorted(i.evidence["deadline"] for i in incidents) == sorted(d.isoformat() for d in recorded)
        told = IncidentNotification.objects.filter(incident__in=incidents, channel="webhook", team=owner_team)
        assert told.count() == len(recorded)
        # One check_failed incident per failure episode (a pass in between resolves it).
        assert Incident.objects.filter(dataset=history.dataset, cause=Cause.CHECK_FAILED).count() == \
            failure_episodes(history.verdicts), history.verdicts

    # 0 duplicate incidents: never two open at once per (dataset, cause, check).
    spans = defaultdict(list)
    for incident in Incident.objects.order_by("opened_at", "pk"):
        spans[(incident.dataset_id, incident.cause, incident.key)].append(incident)
    for key, incidents in spans.items():
        for before, after in zip(incidents, incidents[1:], strict=False):
            assert before.resolved_at is not None and before.resolved_at <= after.opened_at, key

    # Every request that passed its deadline was escalated, and each team told of each step once.
    assert opened
    for request in ChangeRequest.objects.filter(pk__in=opened):
        assert request.escalated_at is not None, request
        events = sorted(Notification.objects.filter(change_request=request, channel="webhook")
                        .values_list("event", flat=True))
        # The reminder is skipped when no clock pass ran between its time and the deadline (a busy machine).
        assert events.count("escalated") == 1 and events.count("reminder") <= 1 and events.count("opened") == 1, events
    connection.close()
