"""Where the status is shown: the dataset page (with the owner's buttons), the
contract page, the dataset list's badge, the API and Prometheus."""

from __future__ import annotations

import pytest

from incidents.models import Incident, IncidentState
from registry.models import ApiToken, Dataset
from tests.conftest import bearer

from .conftest import ALL_PASS, failed, report

pytestmark = pytest.mark.django_db

FAILING = [*ALL_PASS[1:], failed("not_null", "order_id")]


def test_the_dataset_page_shows_the_status_its_reasons_and_the_incident(client, dataset, contract, consumer):
    report(dataset, FAILING)
    client.force_login(consumer)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert 'data-contract-status="failing"' in page
    assert "not_null on order_id failed in run" in page
    incident = Incident.objects.get()
    assert f'id="incident-{incident.pk}"' in page
    assert "Acknowledge #" not in page  # a consumer may not


def test_the_owner_acknowledges_and_resolves_on_the_page(client, dataset, contract, owner):
    report(dataset, FAILING)
    incident = Incident.objects.get()
    client.force_login(owner)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert f"Acknowledge #{incident.pk}" in page
    response = client.post(f"/incidents/{incident.pk}/acknowledge/")
    assert response.status_code == 302 and response.url.endswith(f"#incident-{incident.pk}")
    incident.refresh_from_db()
    assert incident.state == IncidentState.ACKNOWLEDGED
    client.post(f"/incidents/{incident.pk}/resolve/")
    incident.refresh_from_db()
    assert incident.state == IncidentState.RESOLVED


def test_the_contract_page_lists_each_bound_datasets_status(client, dataset, contract, consumer):
    report(dataset, ALL_PASS)
    client.force_login(consumer)
    page = client.get(f"/contracts/{contract.name}/").content.decode()
    assert 'id="contract-statuses"' in page and "all 3 declared check(s) passed" in page


def test_the_dataset_list_badge_says_the_status_and_an_open_incident(client, dataset, contract, consumer):
    report(dataset, FAILING)
    client.force_login(consumer)
    page = client.get("/").content.decode()
    assert "contract failing · incident" in page


def test_the_api_gives_the_status_and_the_incidents_and_lets_the_owner_act(client, dataset, contract, owner, consumer):
    report(dataset, FAILING)
    reader = ApiToken.issue("reader", user=consumer, scopes=["read"])[1]
    status = client.get(f"/api/datasets/{dataset.pk}/contract-status/", **bearer(reader)).json()
    assert status["status"] == "failing" and status["contract"] == "retail.checkout.orders"
    assert [c["verdict"] for c in status["checks"] if c["column"] == "order_id"] == ["failed", "passed"]
    listed = client.get("/api/incidents/", {"state": "unresolved"}, **bearer(reader)).json()
    [incident] = listed["results"]
    assert {t["team"]: t["owner"] for t in incident["teams"]} == {"checkout": True, "analytics": False}
    assert incident["events"][0]["kind"] == "opened"
    refused = client.post(f"/api/incidents/{incident['id']}/acknowledge/",
                          **bearer(ApiToken.issue("w", user=consumer)[1]))
    assert refused.status_code == 403 and refused.json()["code"]
    writer = ApiToken.issue("owner", user=owner)[1]
    done = client.post(f"/api/incidents/{incident['id']}/resolve/", {"note": "reloaded"},
                       content_type="application/json", **bearer(writer))
    assert done.status_code == 200 and done.json()["state"] == "resolved"
    again = client.post(f"/api/incidents/{incident['id']}/resolve/", **bearer(writer))
    assert again.status_code == 409 and again.json()["code"] == "incident_closed"
    assert client.get(f"/api/datasets/{Dataset.objects.create(namespace='a', name='b').pk}/contract-status/",
                      **bearer(reader)).status_code == 404


def test_prometheus_has_the_status_only_for_datasets_with_a_contract(client, dataset, contract):
    from prometheus_client.parser import text_string_to_metric_families

    report(dataset, FAILING)
    Dataset.objects.create(namespace="s3://lake", name="raw.clicks")
    text = client.get("/metrics", HTTP_AUTHORIZATION="Bearer tests-metrics-token").content.decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples
               if s.name.startswith("registry_contract_status") or s.name.startswith("registry_incidents")}
    labels = {"dataset": f"{dataset.namespace}/{dataset.name}", "contract": "retail.checkout.orders"}
    assert samples[("registry_contract_status", tuple(sorted({**labels, "status": "failing"}.items())))] == 1
    assert samples[("registry_contract_status", tuple(sorted({**labels, "status": "passing"}.items())))] == 0
    assert not any("raw.clicks" in str(key) for key in samples)
    assert samples[("registry_incidents_open", (("cause", "check_failed"),))] == 1
