"""GET /api/v1/lineage: the neighbourhood of a dataset, job or run."""

from __future__ import annotations

import pytest

from lineage.graph import lineage_graph
from lineage.ingest import store_event
from lineage.models import Run

from .conftest import WAREHOUSE, run_event

pytestmark = pytest.mark.django_db

D = f"dataset:{WAREHOUSE}:"


@pytest.fixture
def chain(db):
    """raw.orders -> [clean] -> stage.orders -> [aggregate] -> mart.totals -> [export] -> out.report
    and raw.customers -> [clean]; an unrelated job writes other.thing."""
    store_event(run_event("START", job="clean", inputs=["raw.orders", "raw.customers"], outputs=["stage.orders"]))
    store_event(run_event("START", job="aggregate", inputs=["stage.orders"], outputs=["mart.totals"]))
    store_event(run_event("COMPLETE", job="export", inputs=["mart.totals"], outputs=["out.report"]))
    store_event(run_event("START", job="unrelated", inputs=["raw.other"], outputs=["other.thing"]))


def ids(graph: dict) -> set[str]:
    return {node["id"] for node in graph["graph"]}


def test_downstream_depth_counts_jobs_crossed(chain):
    graph = lineage_graph(D + "raw.orders", depth=1, direction="downstream").to_marquez()
    assert ids(graph) == {D + "raw.orders", "job:airflow:clean", D + "stage.orders"}
    graph = lineage_graph(D + "raw.orders", depth=2, direction="downstream").to_marquez()
    assert ids(graph) == {D + "raw.orders", "job:airflow:clean", D + "stage.orders", "job:airflow:aggregate",
                          D + "mart.totals"}


def test_upstream_walks_against_the_edges(chain):
    graph = lineage_graph(D + "mart.totals", depth=2, direction="upstream").to_marquez()
    assert ids(graph) == {D + "mart.totals", "job:airflow:aggregate", D + "stage.orders", "job:airflow:clean",
                          D + "raw.orders", D + "raw.customers"}


def test_both_directions_is_the_default_and_never_reaches_unrelated_nodes(chain):
    graph = lineage_graph(D + "stage.orders", depth=20).to_marquez()
    assert ids(graph) == {D + "raw.orders", D + "raw.customers", "job:airflow:clean", D + "stage.orders",
                          "job:airflow:aggregate", D + "mart.totals", "job:airflow:export", D + "out.report"}


def test_nodes_have_marquez_shape_with_in_and_out_edges(chain):
    graph = lineage_graph(D + "stage.orders", depth=1).to_marquez()
    node = next(n for n in graph["graph"] if n["id"] == D + "stage.orders")
    assert node["type"] == "DATASET"
    assert node["data"]["namespace"] == WAREHOUSE and node["data"]["name"] == "stage.orders"
    assert node["data"]["id"] == {"namespace": WAREHOUSE, "name": "stage.orders"}
    assert node["inEdges"] == [{"origin": "job:airflow:clean", "destination": D + "stage.orders"}]
    assert node["outEdges"] == [{"origin": D + "stage.orders", "destination": "job:airflow:aggregate"}]
    job = next(n for n in graph["graph"] if n["id"] == "job:airflow:clean")
    assert job["type"] == "JOB"
    # The graph is closed: an edge to raw.orders would need raw.orders in it.
    assert {e["origin"] for e in job["inEdges"]} <= ids(graph)


def test_a_job_node_starts_from_the_job(chain):
    graph = lineage_graph("job:airflow:aggregate", depth=1).to_marquez()
    assert ids(graph) == {D + "stage.orders", "job:airflow:aggregate", D + "mart.totals"}
    assert ids(lineage_graph("job:airflow:aggregate", depth=0).to_marquez()) == {"job:airflow:aggregate"}


def test_a_dataset_with_no_edges_is_a_graph_of_one_node(dataset):
    graph = lineage_graph(f"dataset:{dataset.namespace}:{dataset.name}", depth=5).to_marquez()
    assert ids(graph) == {f"dataset:{dataset.namespace}:{dataset.name}"}
    assert graph["graph"][0]["data"]["ownerTeam"] == "checkout"


def test_the_walk_is_one_statement_whatever_the_depth(chain, django_assert_num_queries):
    # 1: resolve the node id (every namespace/name split of it) and walk, returning nodes and edges.
    with django_assert_num_queries(1):
        lineage_graph(D + "raw.orders", depth=20, direction="both")


def test_the_api_answers_for_a_person_or_a_token(chain, client, owner, lineage_secret):
    response = client.get("/api/v1/lineage", {"nodeId": D + "raw.orders", "depth": 1},
                          HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert response.status_code == 200
    client.force_login(owner)
    response = client.get("/api/v1/lineage", {"nodeId": D + "raw.orders", "depth": 2, "direction": "downstream"})
    assert ids(response.json()) == {D + "raw.orders", "job:airflow:clean", D + "stage.orders",
                                    "job:airflow:aggregate", D + "mart.totals"}


def test_the_api_needs_authentication(chain, client):
    assert client.get("/api/v1/lineage", {"nodeId": D + "raw.orders"}).status_code in (401, 403)


def test_the_api_query_count_does_not_grow_with_depth(chain, client, owner, django_assert_num_queries):
    client.force_login(owner)
    # 1: session, 2: user, 3: resolve the node id and walk.
    with django_assert_num_queries(3):
        client.get("/api/v1/lineage", {"nodeId": D + "raw.orders", "depth": 50})


@pytest.mark.parametrize(("params", "message"), [
    ({}, "Send nodeId"),
    ({"nodeId": "table:x:y"}, "is not of the form"),
    ({"nodeId": "dataset:onlyone"}, "is not of the form"),
    ({"nodeId": D + "raw.orders", "depth": "deep"}, "depth must be a whole number"),
    ({"nodeId": D + "raw.orders", "depth": "1000"}, "depth must be from 0 to 100"),
    ({"nodeId": D + "raw.orders", "direction": "sideways"}, "direction must be one of"),
    ({"runId": "nope"}, "is not a UUID"),
])
def test_bad_requests_are_400_saying_what_to_send(chain, client, owner, params, message):
    client.force_login(owner)
    response = client.get("/api/v1/lineage", params)
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_an_unknown_node_is_a_404(chain, client, owner):
    client.force_login(owner)
    response = client.get("/api/v1/lineage", {"nodeId": D + "nope"})
    assert response.status_code == 404 and "nope" in response.json()["detail"]


def test_run_level_lineage_shows_what_one_run_read_and_wrote(chain, client, owner):
    run = Run.objects.get(job__name="clean")
    client.force_login(owner)
    graph = client.get("/api/v1/lineage", {"runId": str(run.run_uuid)}).json()
    assert ids(graph) == {D + "raw.orders", D + "raw.customers", "job:airflow:clean", D + "stage.orders"}
    job = next(n for n in graph["graph"] if n["type"] == "JOB")
    assert job["data"]["run"]["runId"] == str(run.run_uuid) and job["data"]["run"]["state"] == "START"


def test_namespaces_with_colons_resolve(db):
    store_event(run_event(job="copy", inputs=[{"namespace": "s3://bucket:9000", "name": "a:b"}], outputs=["x"]))
    graph = lineage_graph("dataset:s3://bucket:9000:a:b", depth=1).to_marquez()
    assert "job:airflow:copy" in ids(graph)


def test_the_openapi_document_describes_the_lineage_endpoints(client, owner):
    client.force_login(owner)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert '"/api/v1/lineage"' in schema and '"/api/v1/lineage/batch"' in schema
    assert "nodeId" in schema and "Store one OpenLineage event" in schema


def test_the_walk_is_a_prepared_statement_on_postgresql(chain):
    from django.db import connection

    for _ in range(2):
        lineage_graph(D + "raw.orders", depth=3, direction="upstream")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s AND statement NOT LIKE %s",
                       ["%up(dataset_id, depth)%", "%down(dataset_id, depth)%"])
        assert cursor.fetchone()[0] == 1


def test_prepared_statements_can_be_turned_off(settings):
    from lineage.graph import _walk_cursor
    from registry.db import prepared_cursor_class

    with _walk_cursor() as cursor:
        assert isinstance(cursor.cursor, prepared_cursor_class())
    settings.LINEAGE_PREPARED_STATEMENTS = False
    with _walk_cursor() as cursor:
        assert not isinstance(cursor.cursor, prepared_cursor_class())
