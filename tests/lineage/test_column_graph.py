"""GET /api/v1/column-lineage: field-level lineage in Marquez's shape."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lineage.column_graph import column_lineage
from lineage.ingest import store_event
from lineage.models import FieldEdge

from .conftest import WAREHOUSE, column_lineage_facet, dataset, input_field, run_event, schema_facet

pytestmark = pytest.mark.django_db

F = f"datasetField:{WAREHOUSE}:"


@pytest.fixture
def fields(db):
    """raw.orders.{id, amount} -[clean]-> stage.orders.{order_id, amount} -[aggregate]-> mart.totals.total
    -[export]-> out.report.total; aggregate groups by stage.orders.order_id (INDIRECT)."""
    clean = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT/IDENTITY")],
                                  "amount": [input_field("raw.orders", "amount", "DIRECT/IDENTITY")]})
    aggregate = column_lineage_facet({"total": [input_field("stage.orders", "amount", "DIRECT/AGGREGATION"),
                                                input_field("stage.orders", "order_id", "INDIRECT/GROUP_BY")]})
    export = column_lineage_facet({"total": [input_field("mart.totals", "total", "DIRECT/IDENTITY")]})
    store_event(run_event("COMPLETE", job="clean", inputs=[dataset("raw.orders", schema=schema_facet(("amount", "numeric")))],
                          outputs=[dataset("stage.orders", columnLineage=clean)]))
    store_event(run_event("COMPLETE", job="aggregate", inputs=["stage.orders"],
                          outputs=[dataset("mart.totals", columnLineage=aggregate, schema=schema_facet(("total", "numeric")))]))
    store_event(run_event("COMPLETE", job="export", inputs=["mart.totals"],
                          outputs=[dataset("out.report", columnLineage=export)]))


def ids(graph: dict) -> set[str]:
    return {node["id"] for node in graph["graph"]}


def test_upstream_of_a_field_is_every_field_that_fed_it(fields):
    graph = column_lineage(F + "mart.totals:total")
    assert ids(graph) == {F + "mart.totals:total", F + "stage.orders:amount", F + "stage.orders:order_id",
                          F + "raw.orders:amount", F + "raw.orders:id"}


def test_the_answer_has_marquezs_shape(fields):
    graph = column_lineage(F + "mart.totals:total", depth=1)
    by_id = {node["id"]: node for node in graph["graph"]}
    assert [n["id"] for n in graph["graph"]] == sorted(by_id)
    assert by_id[F + "mart.totals:total"] == {
        "id": F + "mart.totals:total",
        "type": "DATASET_FIELD",
        "data": {
            "type": "DATASET_FIELD", "namespace": WAREHOUSE, "dataset": "mart.totals", "field": "total",
            "fieldType": "numeric", "transformationDescription": None, "transformationType": "DIRECT",
            "inputFields": [
                {"namespace": WAREHOUSE, "dataset": "stage.orders", "field": "amount",
                 "transformationDescription": None, "transformationType": "DIRECT",
                 "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION", "description": None, "masking": False}]},
                {"namespace": WAREHOUSE, "dataset": "stage.orders", "field": "order_id",
                 "transformationDescription": None, "transformationType": "INDIRECT",
                 "transformations": [{"type": "INDIRECT", "subtype": "GROUP_BY", "description": None, "masking": False}]},
            ],
        },
        "inEdges": [{"origin": F + "stage.orders:amount", "destination": F + "mart.totals:total"},
                    {"origin": F + "stage.orders:order_id", "destination": F + "mart.totals:total"}],
        "outEdges": [],
    }
    amount = by_id[F + "stage.orders:amount"]
    assert amount["data"]["inputFields"] == []  # its own inputs are two hops away
    assert amount["outEdges"] == [{"origin": F + "stage.orders:amount", "destination": F + "mart.totals:total"}]


def test_depth_counts_field_hops_and_downstream_is_asked_for(fields):
    assert ids(column_lineage(F + "stage.orders:amount", depth=1)) == {F + "stage.orders:amount", F + "raw.orders:amount"}
    assert ids(column_lineage(F + "stage.orders:amount", depth=1, with_downstream=True)) == {
        F + "stage.orders:amount", F + "raw.orders:amount", F + "mart.totals:total"}
    assert F + "out.report:total" in ids(column_lineage(F + "stage.orders:amount", with_downstream="true"))


def test_a_dataset_node_starts_from_each_of_its_fields(fields):
    assert ids(column_lineage(f"dataset:{WAREHOUSE}:stage.orders", depth=1)) == {
        F + "stage.orders:amount", F + "stage.orders:order_id", F + "raw.orders:amount", F + "raw.orders:id"}


def test_edges_older_than_the_window_do_not_count(fields, settings):
    FieldEdge.objects.filter(job__name="clean").update(last_seen_at=timezone.now() - settings.COLUMN_USAGE_WINDOW
                                                      - timedelta(days=1))
    assert ids(column_lineage(F + "stage.orders:amount")) == {F + "stage.orders:amount"}


def test_the_api_is_one_statement_whatever_the_depth(fields, client, owner, django_assert_num_queries):
    client.force_login(owner)
    # 1: session, 2: user, 3: resolve the node id and walk.
    with django_assert_num_queries(3):
        response = client.get("/api/v1/column-lineage", {"nodeId": F + "out.report:total", "depth": 50,
                                                          "withDownstream": "true"})
    assert response.status_code == 200
    assert len(response.json()["graph"]) == 6  # itself and the five fields upstream


def test_the_api_answers_a_token_too(fields, client, lineage_secret):
    response = client.get("/api/v1/column-lineage", {"nodeId": F + "mart.totals:total"},
                          HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert response.status_code == 200


def test_the_api_needs_authentication(fields, client):
    assert client.get("/api/v1/column-lineage", {"nodeId": F + "mart.totals:total"}).status_code in (401, 403)


@pytest.mark.parametrize(("params", "status", "message"), [
    ({}, 400, "Send nodeId"),
    ({"nodeId": "run:airflow:clean"}, 400, "is not of the form"),
    ({"nodeId": "job:airflow:nothing"}, 404, "has column lineage"),
    ({"nodeId": "datasetField:onlyname"}, 400, "needs a namespace"),
    ({"nodeId": F + "mart.totals:total", "depth": "-1"}, 400, "depth must be from 0"),
    ({"nodeId": F + "mart.totals:total", "withDownstream": "maybe"}, 400, "withDownstream must be true or false"),
    ({"nodeId": F + "mart.totals:nope"}, 404, "has column lineage"),
])
def test_bad_requests_say_what_to_send(fields, client, owner, params, status, message):
    client.force_login(owner)
    response = client.get("/api/v1/column-lineage", params)
    assert response.status_code == status
    assert message in response.json()["detail"]
