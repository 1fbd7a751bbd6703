"""Facets are writes (issue 25, point 3): a facet that changes a dataset (its
schema, quality checks, aliases, ownership, documentation, …) is a write to
that dataset on whichever side of the event it arrives.

`dataset` (retail / orders) is Checkout's and Analytics reads it. Analytics's
pipeline naming it as an input keeps the reading (the edges, the columns it
read) and loses the facets, each counted, logged and listed in the answer;
Checkout's own token, a person in Checkout and a platform-wide ingest token
still write them."""

from __future__ import annotations

import logging
import uuid

import pytest
from prometheus_client import REGISTRY

from lineage.models import (
    DatasetAlias,
    DatasetFacet,
    DatasetSchema,
    DeclaredEdge,
    JobDataset,
    QualityCheck,
    RunDataset,
)
from registry.models import ApiToken, Dataset
from registry.usage import ColumnRead, InputSchema

from .conftest import PRODUCER, post, run_event, schema_facet
from .test_static_events import DOCUMENTATION, OWNERSHIP, dataset_event, facet, job_event

pytestmark = pytest.mark.django_db

RETAIL = "postgres://retail-db:5432"
ORDERS = {"namespace": RETAIL, "name": "retail.public.orders"}
HACKED_SCHEMA = {**schema_facet(), "fields": [{"name": "hacked"}]}
FAILED_CHECK = facet(assertions=[{"assertion": "not_null", "column": "order_id", "success": False}])
METRICS = facet(rowCount=0, columnMetrics={})
ALIAS_OF_ORDERS = facet(identifiers=[{"namespace": "hive://metastore", "name": "checkout.orders", "type": "TABLE"}])


def refused(facet_name: str) -> float:
    return REGISTRY.get_sample_value("lineage_facets_refused_total",
                                     {"facet": facet_name, "reason": "not_owner"}) or 0


def reading(*, facets: dict | None = None, input_facets: dict | None = None, run_id: str | None = None) -> dict:
    """Analytics's daily job: reads Checkout's orders (with what it says of them), writes its own table."""
    orders = dict(ORDERS)
    if facets:
        orders["facets"] = facets
    if input_facets:
        orders["inputFacets"] = input_facets
    return run_event("COMPLETE", run_id=run_id, job="analytics.daily", inputs=[orders], outputs=["analytics.daily"])


@pytest.fixture
def analytics_secret(consumer_team) -> str:
    return ApiToken.issue("analytics airflow", team=consumer_team)[1]


@pytest.fixture
def checkout_secret(owner_team) -> str:
    return ApiToken.issue("checkout airflow", team=owner_team)[1]


def paths(response) -> list[str]:
    return [w["path"] for w in response.json().get("warnings", [])]


# --- a reader's input facets --------------------------------------------------------------

def test_a_reader_cannot_set_the_schema_of_another_teams_dataset_and_its_reading_is_stored(
        client, dataset, analytics_secret):
    before = refused("schema")

    response = post(client, reading(facets={"schema": HACKED_SCHEMA}), analytics_secret)

    assert response.status_code == 201, response.json()
    warning, = response.json()["warnings"]
    assert warning["path"] == "inputs[0].facets.schema"
    assert warning["code"] == "facet_not_writable"
    assert "retail.public.orders" in warning["reason"] and "another team owns it" in warning["reason"]
    assert not DatasetSchema.objects.filter(dataset=dataset).exists()
    # What the reader read is its own fact: the edges and the column usage are stored.
    assert JobDataset.objects.filter(dataset=dataset, direction="in", job__name="analytics.daily").exists()
    assert RunDataset.objects.filter(dataset=dataset, direction="in").exists()
    assert ColumnRead.objects.filter(dataset=dataset, job_name="analytics.daily").exists()
    assert Dataset.objects.filter(name="analytics.daily").exists()
    assert refused("schema") == before + 1


def test_a_reader_cannot_replace_or_forget_the_schema_checkout_wrote(client, dataset, analytics_secret, checkout_secret):
    written = run_event("COMPLETE", job="checkout.load", outputs=[{**ORDERS, "facets": {
        "schema": schema_facet(("order_id", "bigint"), ("amount", "numeric"))}}])
    assert post(client, written, checkout_secret).status_code == 201

    for schema in (HACKED_SCHEMA, {**schema_facet(), "_deleted": True}):
        assert post(client, reading(facets={"schema": schema}), analytics_secret).status_code == 201

    assert DatasetSchema.objects.get(dataset=dataset).fields == {"order_id": "bigint", "amount": "numeric"}


def test_a_reader_cannot_record_a_quality_check_on_another_teams_dataset(client, dataset, analytics_secret):
    before = refused("dataQualityAssertions")

    response = post(client, reading(input_facets={"dataQualityAssertions": FAILED_CHECK},
                                    facets={"dataQualityMetrics": METRICS}), analytics_secret)

    assert response.status_code == 201
    assert paths(response) == ["inputs[0].facets.dataQualityMetrics", "inputs[0].inputFacets.dataQualityAssertions"]
    assert not QualityCheck.objects.filter(dataset=dataset).exists()
    assert refused("dataQualityAssertions") == before + 1


def test_a_reader_cannot_register_an_alias_of_another_teams_dataset(client, dataset, analytics_secret):
    response = post(client, reading(facets={"symlinks": ALIAS_OF_ORDERS}), analytics_secret)

    assert paths(response) == ["inputs[0].facets.symlinks"]
    assert not DatasetAlias.objects.exists()
    assert not DatasetFacet.objects.filter(dataset=dataset).exists()


def test_a_reader_cannot_set_ownership_documentation_or_lifecycle_of_another_teams_dataset(
        client, dataset, analytics_secret):
    facets = {"ownership": facet(owners=[{"name": "team:analytics"}]), "documentation": facet(description="ours now"),
              "lifecycleStateChange": facet(lifecycleStateChange="DROP"), "tags": facet(tags=[])}

    response = post(client, reading(facets=facets), analytics_secret)

    assert response.status_code == 201
    assert sorted(paths(response)) == sorted(f"inputs[0].facets.{name}" for name in facets)
    assert not DatasetFacet.objects.filter(dataset=dataset).exists()


def test_a_reader_cannot_delete_the_facets_checkout_keeps(client, dataset, analytics_secret, checkout_secret):
    described = dataset_event(dataset.name, documentation=DOCUMENTATION, ownership=OWNERSHIP)
    described["dataset"]["namespace"] = RETAIL
    assert post(client, described, checkout_secret).status_code == 201

    gone = {"documentation": {**facet(), "_deleted": True}, "ownership": {**facet(), "_deleted": True}}
    assert post(client, reading(facets=gone), analytics_secret).status_code == 201

    assert set(DatasetFacet.objects.filter(dataset=dataset).values_list("name", flat=True)) == {"documentation", "ownership"}


def test_the_refusal_is_logged_with_its_reason(client, dataset, analytics_secret, caplog):
    with caplog.at_level(logging.INFO, logger="lineage.facets"):
        post(client, reading(facets={"schema": HACKED_SCHEMA}), analytics_secret)

    assert "inputs[0].facets.schema" in caplog.text
    assert "may not write dataset postgres://retail-db:5432/retail.public.orders" in caplog.text


def test_a_reader_without_facets_gets_no_warning(client, dataset, analytics_secret):
    response = post(client, reading(), analytics_secret)

    assert response.status_code == 201
    assert "warnings" not in response.json()


def test_a_retried_event_is_not_counted_twice(client, dataset, analytics_secret):
    event = reading(facets={"schema": HACKED_SCHEMA})
    post(client, event, analytics_secret)
    before = refused("schema")

    response = post(client, event, analytics_secret)

    assert response.json()["status"] == "duplicate" and "warnings" not in response.json()
    assert refused("schema") == before


def test_a_batch_lists_each_dropped_facet_under_its_events_index(client, dataset, analytics_secret):
    batch = [reading(), reading(input_facets={"dataQualityAssertions": FAILED_CHECK})]

    response = post(client, batch, analytics_secret, path="/api/v1/lineage/batch")

    assert response.status_code == 201
    assert response.json()["stored"] == 2
    assert paths(response) == ["[1].inputs[0].inputFacets.dataQualityAssertions"]
    assert not QualityCheck.objects.filter(dataset=dataset).exists()


# --- who still writes them ----------------------------------------------------------------

ALL_OF_THEM = {"schema": schema_facet(("order_id", "bigint")), "symlinks": ALIAS_OF_ORDERS,
               "documentation": DOCUMENTATION}


def assert_all_written(dataset) -> None:
    assert DatasetSchema.objects.get(dataset=dataset).fields == {"order_id": "bigint"}
    assert QualityCheck.objects.get(dataset=dataset).failed_count == 1
    assert DatasetAlias.objects.get(name="checkout.orders").dataset_id == dataset.pk
    assert set(DatasetFacet.objects.filter(dataset=dataset).values_list("name", flat=True)) == {"symlinks", "documentation"}


def test_checkouts_own_token_still_writes_them_from_the_input_side(client, dataset, checkout_secret):
    before = refused("schema")

    response = post(client, reading(facets=ALL_OF_THEM, input_facets={"dataQualityAssertions": FAILED_CHECK}),
                    checkout_secret)

    assert response.status_code == 201 and "warnings" not in response.json()
    assert_all_written(dataset)
    assert refused("schema") == before


def test_a_person_in_checkout_still_writes_them_from_the_input_side(client, dataset, owner):
    _, secret = ApiToken.issue("alice's laptop", user=owner)

    assert post(client, reading(facets=ALL_OF_THEM, input_facets={"dataQualityAssertions": FAILED_CHECK}),
                secret).status_code == 201

    assert_all_written(dataset)


def test_a_platform_wide_ingest_token_still_writes_them(client, dataset, consumer_team, admin):
    _, secret = ApiToken.issue("platform ingest", team=consumer_team, by=admin, scopes=["lineage:write:any"])

    assert post(client, reading(facets=ALL_OF_THEM, input_facets={"dataQualityAssertions": FAILED_CHECK}),
                secret).status_code == 201

    assert_all_written(dataset)


def test_an_unowned_dataset_takes_any_readers_facets(client, unowned_dataset, analytics_secret):
    response = post(client, reading(facets={"schema": schema_facet(("order_id", "bigint"))}), analytics_secret)

    assert "warnings" not in response.json()
    assert DatasetSchema.objects.get(dataset=unowned_dataset).fields == {"order_id": "bigint"}


# --- aliases that take another team's dataset's name -----------------------------------------

def test_an_alias_cannot_take_the_name_of_another_teams_dataset(client, dataset, analytics_secret):
    claims = facet(identifiers=[{**ORDERS, "type": "TABLE"},
                                {"namespace": "hive://metastore", "name": "analytics.daily", "type": "TABLE"}])
    mine = {"namespace": "postgres://warehouse:5432", "name": "analytics.daily", "facets": {"symlinks": claims}}

    response = post(client, run_event("COMPLETE", job="analytics.daily", outputs=[mine]), analytics_secret)

    assert response.status_code == 201
    assert paths(response) == ["outputs[0].facets.symlinks"]
    assert list(DatasetAlias.objects.values_list("namespace", "name")) == [("hive://metastore", "analytics.daily")]
    # The facet itself describes Analytics's own dataset and is kept there.
    assert DatasetFacet.objects.filter(name="symlinks", dataset__name="analytics.daily").exists()


def test_a_rename_cannot_take_the_name_of_another_teams_dataset(client, dataset, analytics_secret):
    renamed = dataset_event("analytics.orders_copy",
                            lifecycleStateChange=facet(lifecycleStateChange="RENAME", previousIdentifier=ORDERS))

    response = post(client, renamed, analytics_secret)

    assert response.status_code == 201
    assert paths(response) == ["dataset.facets.lifecycleStateChange"]
    assert not DatasetAlias.objects.exists()


def test_checkout_may_alias_its_own_dataset_under_another_name(client, dataset, checkout_secret):
    claims = facet(identifiers=[{**ORDERS, "type": "TABLE"}])
    event = dataset_event("checkout.orders_view", symlinks=claims)

    assert "warnings" not in post(client, event, checkout_secret).json()
    assert DatasetAlias.objects.get(**ORDERS).dataset.name == "checkout.orders_view"


# --- DatasetEvents and JobEvents ------------------------------------------------------------

def test_a_dataset_event_of_another_teams_dataset_changes_nothing(client, dataset, analytics_secret):
    event = {"eventTime": "2026-11-30T02:00:00Z", "producer": PRODUCER,
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
             "dataset": {**ORDERS, "facets": {"schema": HACKED_SCHEMA, "symlinks": ALIAS_OF_ORDERS,
                                              "dataQualityAssertions": FAILED_CHECK, "documentation": DOCUMENTATION}}}

    response = post(client, event, analytics_secret)

    assert response.status_code == 403
    assert response.json()["code"] == "dataset_not_writable"
    assert not (DatasetSchema.objects.exists() or DatasetAlias.objects.exists() or QualityCheck.objects.exists()
                or DatasetFacet.objects.exists())


def test_checkouts_dataset_event_still_writes_them(client, dataset, checkout_secret):
    event = dataset_event(dataset.name, dataQualityAssertions=FAILED_CHECK, **ALL_OF_THEM)
    event["dataset"]["namespace"] = RETAIL

    assert post(client, event, checkout_secret).status_code == 201

    assert_all_written(dataset)


def test_a_job_event_declares_its_reading_without_writing_another_teams_dataset(client, dataset, analytics_secret):
    before = refused("schema")
    orders = {**ORDERS, "facets": {"schema": HACKED_SCHEMA, "documentation": DOCUMENTATION},
              "inputFacets": {"dataQualityAssertions": FAILED_CHECK}}

    response = post(client, job_event("analytics.daily", inputs=[orders], outputs=["analytics.daily"]),
                    analytics_secret)

    assert response.status_code == 201, response.json()
    assert paths(response) == ["inputs[0].facets.documentation", "inputs[0].facets.schema",
                               "inputs[0].inputFacets.dataQualityAssertions"]
    assert DeclaredEdge.objects.filter(dataset=dataset, direction="in").exists()
    assert not (DatasetSchema.objects.filter(dataset=dataset).exists() or QualityCheck.objects.exists()
                or DatasetFacet.objects.filter(dataset=dataset).exists())
    assert refused("schema") == before + 1


def test_checkouts_job_event_still_writes_its_inputs_facets(client, dataset, checkout_secret):
    orders = {**ORDERS, "facets": ALL_OF_THEM, "inputFacets": {"dataQualityAssertions": FAILED_CHECK}}

    assert post(client, job_event("checkout.report", inputs=[orders]), checkout_secret).status_code == 201

    assert DatasetSchema.objects.get(dataset=dataset).fields == {"order_id": "bigint"}
    assert DatasetAlias.objects.get(name="checkout.orders").dataset_id == dataset.pk
    assert DatasetFacet.objects.filter(dataset=dataset, name="documentation").exists()


def test_the_same_run_from_checkout_after_a_refused_one_is_heard(
        client, dataset, analytics_secret, checkout_secret, django_capture_on_commit_callbacks):
    """Column usage skips an event saying what its job's last one said (remembered
    once committed); a refused schema must not make the writer's same words count as said."""
    event = reading(facets={"schema": schema_facet(("order_id", "bigint"))})
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, event, analytics_secret).status_code == 201

    again = {**event, "run": {"runId": str(uuid.uuid4())}}
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, again, checkout_secret).status_code == 201

    assert DatasetSchema.objects.get(dataset=dataset).fields == {"order_id": "bigint"}


def test_the_decision_costs_no_query(dataset, consumer_team, django_assert_num_queries):
    from lineage.ingest import store_event
    from registry.auth import LineageWriter

    token, _ = ApiToken.issue("analytics airflow", team=consumer_team)
    analytics = LineageWriter.of(token_id=token.pk, key_prefix=token.key_prefix, scopes=token.scopes,
                                 token_team_id=consumer_team.pk)
    store_event(reading(), writer=analytics)  # Analytics's table exists now
    # As many as the same reading without facets: 1: savepoint, 2: raw event + the datasets
    # with their owners, 3: job + run + edges + column reads, 4: freshness records the write
    # of Analytics's table (a COMPLETE), 5: release savepoint. No schema, facet or check written.
    with django_assert_num_queries(5):
        store_event(reading(), writer=analytics)
    # The schema facet does not change the dataset; it is kept only as what this reader job
    # sees of its input (registry.usage.InputSchema, which lanes match): one statement more.
    with django_assert_num_queries(6):
        stored = store_event(reading(facets={"schema": HACKED_SCHEMA, "documentation": DOCUMENTATION},
                                     input_facets={"dataQualityAssertions": FAILED_CHECK}), writer=analytics)
    assert len(stored.refused) == 3
    assert not DatasetSchema.objects.filter(dataset=dataset).exists()
    assert InputSchema.objects.get(dataset=dataset).fields == {"hacked": ""}
