"""Freshness in Prometheus: the /metrics text, the shipped rules, and a real Prometheus scraping us."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from freshness.evaluation import evaluate, record_write, set_slo
from freshness.scheduling import sweep
from registry.models import Dataset
from tests.freshness.conftest import HOUR, T0
from tests.servers import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
ORDERS = {"namespace": "postgres://retail-db:5432", "name": "retail.public.orders", "owner_team": "checkout"}


SCRAPER = {"HTTP_AUTHORIZATION": "Bearer tests-metrics-token"}  # tests/settings.py's METRICS_TOKEN


def scrape(client) -> dict[tuple[str, frozenset], float]:
    response = client.get("/metrics", **SCRAPER)
    assert response.status_code == 200
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def test_metrics_report_staleness_status_slo_and_transitions_per_dataset(client, dataset, owner, clock):
    set_slo(dataset, max_age=6 * HOUR, by=owner)
    record_write(dataset, at=T0 - 7 * HOUR, row_count=3, now=T0 - 7 * HOUR)
    Dataset.objects.create(namespace="s3://lake", name="raw.clicks")  # unowned, no SLO
    sweep(T0)

    samples = scrape(client)
    labels = frozenset(ORDERS.items())
    assert samples[("dataset_staleness_seconds", labels)] == 7 * 3600
    assert samples[("dataset_freshness_slo_seconds", labels)] == 6 * 3600
    assert samples[("dataset_freshness_status", labels | {("status", "stale")})] == 1
    assert samples[("dataset_freshness_status", labels | {("status", "fresh")})] == 0
    # A dataset without an SLO has nothing to alert on: no series (any lineage writer can create datasets).
    assert not any(dict(labels).get("name") == "raw.clicks" for _, labels in samples)
    assert samples[("dataset_freshness_transitions_total", frozenset({("to_status", "stale")}))] == 1
    assert samples[("dataset_freshness_transitions_total", frozenset({("to_status", "fresh")}))] == 1
    assert samples[("freshness_last_sweep_timestamp_seconds", frozenset())] == T0.timestamp()
    assert samples[("freshness_evaluator_lag_seconds", frozenset())] == 0
    assert samples[("freshness_metrics_up", frozenset())] == 1
    assert any(name.startswith("django_http_requests") for name, _ in samples)  # django-prometheus's own


def test_the_evaluator_lag_is_how_overdue_the_oldest_unevaluated_deadline_is(client, dataset, owner, clock):
    set_slo(dataset, max_age=HOUR, by=owner)
    record_write(dataset, at=T0 - 2 * HOUR, row_count=3, now=T0 - 2 * HOUR)  # due at T0 - 1 h, not evaluated
    assert scrape(client)[("freshness_evaluator_lag_seconds", frozenset())] == 3600
    evaluate(T0)
    assert scrape(client)[("freshness_evaluator_lag_seconds", frozenset())] == 0


def test_the_shipped_alert_rules_pass_promtool_check_rules():
    result = subprocess.run(["promtool", "check", "rules", str(DEPLOY / "alerts.yml")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 5 rules found" in result.stdout


def test_the_shipped_alert_rules_fire_as_their_unit_tests_expect():
    result = subprocess.run(["promtool", "test", "rules", "alerts_test.yml"], cwd=DEPLOY,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_shipped_scrape_config_is_valid():
    result = subprocess.run(["promtool", "check", "config", str(DEPLOY / "prometheus.yml")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback test server
        return json.loads(response.read())


@pytest.fixture
def prometheus(live_server, tmp_path):
    """A real Prometheus on a free loopback port, scraping the live server every second."""
    target = live_server.url.removeprefix("http://")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{DEPLOY / 'alerts.yml'}']\n"
        "scrape_configs:\n"
        "  - job_name: dataset-registry\n"
        "    authorization: {credentials: tests-metrics-token}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n"
    )
    port = free_port()
    process = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/-/ready", timeout=1)  # noqa: S310
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("Prometheus did not become ready: " + (tmp_path / "prometheus.log").read_text()[-2000:])
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_prometheus_scrapes_the_staleness_series_and_fires_the_stale_alert(
        prometheus, dataset, owner):
    now = timezone.now()
    set_slo(dataset, max_age=HOUR, by=owner)
    record_write(dataset, at=now - 2 * HOUR, row_count=10)  # already stale

    query = urllib.parse.quote('dataset_staleness_seconds{name="retail.public.orders"}')
    result = []
    for _ in range(100):
        result = get_json(f"{prometheus}/api/v1/query?query={query}")["data"]["result"]
        if result:
            break
        time.sleep(0.2)
    assert result, "Prometheus never stored the staleness series"
    metric = result[0]["metric"]
    assert {key: metric[key] for key in ORDERS} == ORDERS
    assert metric["job"] == "dataset-registry"
    assert 2 * 3600 <= float(result[0]["value"][1]) < 2 * 3600 + 120

    alerts = []
    for _ in range(100):
        alerts = [a for a in get_json(f"{prometheus}/api/v1/alerts")["data"]["alerts"]
                  if a["labels"]["alertname"] == "DatasetStale"]
        if alerts:
            break
        time.sleep(0.2)
    assert alerts and alerts[0]["labels"]["name"] == "retail.public.orders"
    assert alerts[0]["state"] == "firing"



def test_a_scrape_still_answers_when_the_database_cannot_be_read(db, client, monkeypatch):
    from django.db import OperationalError

    from freshness import metrics

    def unreadable(self, families):
        raise OperationalError("connection refused")

    monkeypatch.setattr(metrics.FreshnessCollector, "_fill", unreadable)
    assert scrape(client)[("freshness_metrics_up", frozenset())] == 0


def test_metrics_need_the_scrapers_bearer_token(client, db):
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-it")
    assert wrong.status_code == 401 and wrong.json()["code"] == "not_authenticated"
    assert client.get("/metrics", **SCRAPER).status_code == 200


def test_without_a_metrics_token_the_metrics_are_closed_even_in_the_demo(client, db, settings):
    settings.METRICS_TOKEN = ""
    closed = client.get("/metrics", **SCRAPER)
    assert closed.status_code == 403 and closed.json()["code"] == "metrics_closed"
    settings.DEBUG = True  # the embedded demo, which people also run on shared hosts
    assert client.get("/metrics").status_code == 403


def test_a_signed_in_governance_admin_reads_the_metrics_without_a_token(client, admin, consumer, settings):
    settings.METRICS_TOKEN = ""
    client.force_login(consumer)
    assert client.get("/metrics").status_code == 403
    client.force_login(admin)
    assert client.get("/metrics").status_code == 200


def test_metrics_public_opens_the_metrics_to_anyone_on_purpose(client, db, settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_PUBLIC = True
    assert client.get("/metrics").status_code == 200


def test_scrapes_within_the_cache_window_share_one_database_read(client, dataset, owner, settings, monkeypatch):
    from freshness import metrics

    reads = []
    fill = metrics.FreshnessCollector._fill
    monkeypatch.setattr(metrics.FreshnessCollector, "_fill", lambda self, f: reads.append(1) or fill(self, f))
    settings.METRICS_CACHE_SECONDS = 60
    monkeypatch.setattr(metrics._collector, "_read_at", float("-inf"))  # whatever earlier tests read
    set_slo(dataset, max_age=HOUR, by=owner)
    first, second = scrape(client), scrape(client)
    assert len(reads) == 1
    staleness = [key for key in first if key[0] == "dataset_freshness_slo_seconds"]
    assert staleness and all(first[key] == second[key] for key in staleness)
    settings.METRICS_CACHE_SECONDS = 0
    scrape(client)
    assert len(reads) == 2


def test_a_scrape_reads_the_datasets_with_an_slo_by_id_in_a_fixed_number_of_queries(
        client, dataset, owner, clock, django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    set_slo(dataset, max_age=6 * HOUR, by=owner)
    record_write(dataset, at=T0 - HOUR, row_count=3, now=T0 - HOUR)
    for i in range(5):  # written, so each has a freshness row, and no SLO
        written = Dataset.objects.create(namespace="s3://lake", name=f"raw.clicks_{i}")
        record_write(written, at=T0 - HOUR, row_count=3, now=T0 - HOUR)
    # 1. the bindings' latest drift check ids (none here: no query for checks or names)
    # 2. the freshness rows with an SLO; 3. their datasets' names, by id; 4. transitions by
    # status; 5. the evaluator's lag; 6. its last sweep; 7. the contract statuses (none: no
    # names to read); 8. open incidents by cause.
    with CaptureQueriesContext(connection) as queries, django_assert_num_queries(8):
        samples = scrape(client)
    assert samples[("dataset_freshness_slo_seconds", frozenset(ORDERS.items()))] == 6 * 3600
    assert not any(dict(labels).get("name", "").startswith("raw.clicks") for _, labels in samples)
    # The datasets table is read by primary key only, never joined whole to the SLO rows.
    reads = [q["sql"] for q in queries if 'FROM "registry_dataset"' in q["sql"]]
    assert len(reads) == 1 and '"registry_dataset"."id" IN (' in reads[0]
