"""Each kept facet on the dataset page, the dataset list and the API, at fixed query counts."""

from __future__ import annotations

import pytest

from lineage.models import Job
from lineage.views import quality_section, schema_section
from registry.models import Dataset

from .conftest import WAREHOUSE, column_lineage_facet, input_field, post, run_event, schema_facet
from .test_static_events import DOCUMENTATION, OWNERSHIP, SYMLINKS, dataset_event, facet

pytestmark = pytest.mark.django_db


def assertions(*results: tuple[str, str, bool]) -> dict:
    return facet(assertions=[{"assertion": a, "column": c, "success": ok, "severity": "error"} for a, c, ok in results])


def test_run(dataset_name: str, *results, job: str = "dbt.orders.test", event_type: str = "COMPLETE") -> dict:
    inp = {"namespace": WAREHOUSE, "name": dataset_name, "inputFacets": {"dataQualityAssertions": assertions(*results)}}
    return run_event(event_type, job=job, inputs=[inp])


test_run.__test__ = False  # a helper, not a test


@pytest.fixture
def described(client, lineage_secret, dataset):
    """`dataset` with a current schema, column lineage, producers' facets, an alias and a failed dbt test."""
    event = dataset_event(dataset.name, ownership=OWNERSHIP, documentation=DOCUMENTATION, symlinks=SYMLINKS,
                          lifecycleStateChange=facet(lifecycleStateChange="OVERWRITE"))
    event["dataset"]["namespace"] = dataset.namespace
    assert post(client, event, lineage_secret).status_code == 201
    out = {"namespace": dataset.namespace, "name": dataset.name, "facets": {
        "schema": {**schema_facet(("order_id", "bigint"), ("amount", "numeric"))},
        "columnLineage": column_lineage_facet({"amount": [input_field("raw.orders", "amount_cents", "DIRECT/TRANSFORMATION")]})}}
    assert post(client, run_event("COMPLETE", job="dbt.orders", inputs=["raw.orders"], outputs=[out]),
                lineage_secret).status_code == 201
    with_namespace = test_run(dataset.name, ("not_null", "order_id", True), ("unique", "order_id", False))
    with_namespace["inputs"][0]["namespace"] = dataset.namespace
    assert post(client, with_namespace, lineage_secret).status_code == 201
    return dataset


def test_the_dataset_page_shows_the_schema_facets_aliases_and_failed_assertions(client, owner, described):
    client.force_login(owner)
    page = client.get(described.get_absolute_url()).content.decode()
    assert 'id="current-schema"' in page and "<code>amount</code>" in page and "numeric" in page
    assert "raw.orders.amount_cents" in page  # column lineage: what fed the column
    assert "from the schema facet of" in page and "dbt.orders" in page
    assert "Orders as the shop placed them." in page
    assert "team:checkout" in page and "never a claim" in page
    assert "hive://metastore" in page and "OVERWRITE" in page
    assert 'id="data-quality"' in page and "1 failed check" in page and "unique on order_id" in page


def test_the_schema_section_is_four_queries(rf, owner, described, django_assert_num_queries):
    request = rf.get("/")
    request.user = owner
    described = Dataset.objects.select_related("owner_team").get(pk=described.pk)  # as the page loads it
    # 1: the schema with its job, 2: the kept facets, 3: the aliases either way, 4: the field edges feeding it.
    with django_assert_num_queries(4):
        html = schema_section(request, described)
    assert "current-schema" in html


def test_the_quality_section_is_two_queries(rf, owner, described, django_assert_num_queries):
    request = rf.get("/")
    request.user = owner
    # 1: each testing job's latest check, 2: the recent checks.
    with django_assert_num_queries(2):
        html = quality_section(request, described)
    assert "1 failed check" in html


def test_a_dataset_without_producer_facts_has_no_such_sections(rf, owner, dataset):
    request = rf.get("/")
    request.user = owner
    assert schema_section(request, dataset) == "" and quality_section(request, dataset) == ""


def test_the_dataset_list_flags_failed_assertions_at_a_constant_query_count(
        client, owner, lineage_secret, django_assert_num_queries):
    for i in range(5):
        post(client, test_run(f"mart.t{i}", ("unique", "id", i % 2 == 0), job=f"dbt.t{i}.test"), lineage_secret)
    client.force_login(owner)
    # 1: session, 2: user, 3: the teams of the filter, 4.-9.: the datasets with owners,
    # consumer counts and failed assertions (a subquery), a seek a freshness status (all
    # no SLO and never written, after five empty statuses): no count.
    with django_assert_num_queries(9):
        page = client.get("/").content.decode()
    assert page.count("1 failed check") == 2


def test_the_latest_run_of_a_testing_job_sets_the_quality_state(client, lineage_secret, owner):
    post(client, test_run("mart.orders", ("unique", "id", False)), lineage_secret)
    post(client, test_run("mart.orders", ("unique", "id", True)), lineage_secret)
    client.force_login(owner)
    assert "failed check" not in client.get("/").content.decode()


def test_the_api_gives_the_schema_facets_aliases_and_quality_state(client, owner, described):
    client.force_login(owner)
    body = client.get(f"/api/datasets/{described.pk}/schema/").json()
    assert body["owner_team"] == "checkout"
    assert body["schema"]["columns"] == [{"name": "order_id", "type": "bigint", "description": ""},
                                         {"name": "amount", "type": "numeric", "description": ""}]
    assert body["schema"]["complete"] is True and body["schema"]["origin"] == "run"
    assert body["schema"]["job"] == {"namespace": "airflow", "name": "dbt.orders"}
    assert {f["name"] for f in body["facets"]} == {"ownership", "documentation", "symlinks", "lifecycleStateChange"}
    assert body["aliases"] == [{"namespace": "hive://metastore", "name": "stage.orders", "kind": "TABLE"}]
    assert body["failed_assertions"] == 1
    [check] = body["quality"]
    assert check["failed_assertions"] == [{"assertion": "unique", "column": "order_id", "success": False, "severity": "error"}]


def test_the_quality_list_is_a_constant_number_of_queries(client, owner, lineage_secret, django_assert_num_queries):
    for i in range(6):
        post(client, test_run(f"mart.t{i}", ("unique", "id", i % 3 != 0), job=f"dbt.t{i}.test"), lineage_secret)
    client.force_login(owner)
    # 1: session, 2: user, 3: the page of checks with their datasets (no count).
    with django_assert_num_queries(3):
        body = client.get("/api/quality/", {"failing": "true"}).json()
    assert {c["name"] for c in body["results"]} == {"mart.t0", "mart.t3"} and body["next"] is None


def test_a_datasets_quality_list_is_a_constant_number_of_queries(client, owner, lineage_secret, django_assert_num_queries):
    for _ in range(4):
        post(client, test_run("mart.orders", ("unique", "id", False)), lineage_secret)
    dataset_id = Dataset.objects.get(name="mart.orders").pk
    client.force_login(owner)
    # 1: session, 2: user, 3: the dataset, 4: the page of checks with their dataset (no count).
    with django_assert_num_queries(4):
        body = client.get(f"/api/datasets/{dataset_id}/quality/").json()
    assert len(body["results"]) == 4


def test_the_producer_api_needs_a_login(client, dataset):
    assert client.get(f"/api/datasets/{dataset.pk}/schema/").status_code in (401, 403)


def test_a_job_page_still_renders_with_producer_facts(client, owner, described):
    client.force_login(owner)
    assert client.get(Job.objects.get(name="dbt.orders").get_absolute_url()).status_code == 200
