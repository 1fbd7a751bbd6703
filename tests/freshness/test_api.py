"""The freshness API beyond SLO editing: the list by status, the timeline, the OpenAPI document."""

from __future__ import annotations

from freshness.evaluation import evaluate, record_write, set_slo
from registry.models import Dataset
from tests.freshness.conftest import HOUR, T0


def test_the_freshness_list_filters_by_status(client, dataset, owner, owner_team, clock):
    other = Dataset.objects.create(namespace="s3://lake", name="raw.clicks", owner_team=owner_team, owner=owner)
    set_slo(dataset, max_age=HOUR, by=owner)
    set_slo(other, max_age=HOUR, by=owner)
    record_write(dataset, at=T0, row_count=1)
    evaluate(T0 + 2 * HOUR)
    client.force_login(owner)
    body = client.get("/api/freshness/?status=stale").json()
    assert [(r["name"], r["status"]) for r in body["results"]] == [("retail.public.orders", "stale")]
    refused = client.get("/api/freshness/?status=rotten")
    assert refused.status_code == 400
    assert "'rotten' is not one of fresh, warning, stale, unknown, no_slo" in refused.content.decode()


def test_the_timeline_lists_transitions_newest_first_with_their_lag(client, dataset, owner, clock):
    set_slo(dataset, max_age=HOUR, by=owner)
    record_write(dataset, at=T0, row_count=1)
    evaluate(T0 + HOUR + HOUR / 2)
    client.force_login(owner)
    body = client.get(f"/api/datasets/{dataset.pk}/freshness/transitions/").json()
    assert [(t["from_status"], t["to_status"], t["lag_s"]) for t in body["results"]] == [
        ("fresh", "stale", 1800.0), ("unknown", "fresh", None), ("no_slo", "unknown", None)]


def test_the_freshness_api_needs_authentication(client, dataset):
    assert client.get(f"/api/datasets/{dataset.pk}/freshness/").status_code == 401


def test_the_openapi_document_describes_the_freshness_endpoints(client, owner):
    client.force_login(owner)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/freshness/", "/api/datasets/{id}/freshness/",
            "/api/datasets/{id}/freshness/transitions/"} <= set(schema["paths"])


def test_the_freshness_list_needs_the_same_queries_whatever_the_number_of_rows(client, dataset, owner, owner_team,
                                                                                clock, django_assert_num_queries):
    for i in range(20):
        d = Dataset.objects.create(namespace="s3://lake", name=f"t{i}", owner_team=owner_team, owner=owner)
        set_slo(d, max_age=HOUR, by=owner)
    client.force_login(owner)
    # 1. session, 2. user, 3. count for the page, 4. the page of rows with their datasets
    with django_assert_num_queries(4):
        assert len(client.get("/api/freshness/").json()["results"]) == 20
