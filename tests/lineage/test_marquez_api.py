"""Marquez's read API under /api/v1/: every answer validates against Marquez's
own OpenAPI document (../shared/marquez/openapi.yml, with openapi-core), and
the lists cost a fixed number of queries."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from django.conf import settings
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from werkzeug.datastructures import ImmutableMultiDict

from lineage.graph import lineage_graph
from lineage.ingest import store_event
from lineage.marquez.graph import marquez_graph
from lineage.marquez.paths import Route, route
from lineage.marquez.shapes import job_version
from lineage.models import Run

from .conftest import (
    PRODUCER,
    WAREHOUSE,
    column_lineage_facet,
    input_field,
    run_event,
    schema_facet,
)

pytestmark = pytest.mark.django_db


def _marquez_document() -> Path:
    for parent in Path(settings.BASE_DIR).parents:
        candidate = parent / "shared" / "marquez" / "openapi.yml"
        if candidate.is_file():
            return candidate
    return Path(settings.BASE_DIR).parent / "shared" / "marquez" / "openapi.yml"


def _marquez_api() -> OpenAPI:
    """Marquez's document, with its slips mended: "paramteters" on
    /runlineage/upstream (a spec check refuses the document, so none is run),
    the empty `type:` of SearchResult's name and updatedAt, which its
    descriptions say are strings (a validator cannot use a type of null), and
    the job versions' status codes written as numbers (YAML's 200, not '200'),
    and /column-lineage typed as the dataset graph (nodes of type JOB or
    DATASET) where Marquez answers DATASET_FIELD nodes: their data is described
    here as Marquez's ColumnLineageNodeData writes it (nulls included)."""
    document = yaml.safe_load(_marquez_document().read_text())
    schemas = document["components"]["schemas"]
    schemas["NodeType"]["enum"].append("DATASET_FIELD")
    nullable = {"type": "string", "nullable": True}
    schemas["ColumnLineageNodeData"] = {"type": "object", "required": ["namespace", "dataset", "field", "inputFields"],
        "properties": {"type": {"type": "string"}, "namespace": {"type": "string"}, "dataset": {"type": "string"},
                       "field": {"type": "string"}, "fieldType": nullable, "transformationDescription": nullable,
                       "transformationType": nullable,
                       "inputFields": {"type": "array", "items": {"type": "object",
                           "required": ["namespace", "dataset", "field"],
                           "properties": {"namespace": {"type": "string"}, "dataset": {"type": "string"},
                                          "field": {"type": "string"}, "transformationDescription": nullable,
                                          "transformationType": nullable}}}}}
    data = schemas["GraphNode"]["properties"]["data"]
    data["oneOf"].append({"$ref": "#/components/schemas/ColumnLineageNodeData"})
    data["discriminator"]["mapping"]["DATASET_FIELD"] = "#/components/schemas/ColumnLineageNodeData"
    for operations in document["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"] = {str(code): answer for code, answer in operation["responses"].items()}
    result = document["components"]["schemas"]["SearchResult"]["properties"]
    for key in ("name", "updatedAt"):
        assert result[key]["type"] is None
        result[key]["type"] = "string"
    return OpenAPI.from_dict(document, config=Config(spec_validator_cls=None))


MARQUEZ = _marquez_api()

NS = quote(WAREHOUSE, safe="")  # as Marquez's clients send a namespace: one encoded segment
D = f"dataset:{WAREHOUSE}:"


def facet(**fields) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/Facet.json", **fields}


@pytest.fixture
def pipeline(db):
    """raw.orders -> [clean] -> stage.orders -> [aggregate] -> mart.totals, in
    Postgres namespace postgres://warehouse:5432 and job namespace airflow:
    clean ran twice (started and completed, then failed), aggregate once."""
    first = run_event("START", job="clean", event_time="2026-11-30T01:00:00.000Z",
                      inputs=[{"namespace": WAREHOUSE, "name": "raw.orders",
                               "facets": {"schema": schema_facet(("order_id", "BIGINT"), ("amount", "NUMERIC"))}}],
                      outputs=[{"namespace": WAREHOUSE, "name": "stage.orders",
                                "facets": {"schema": schema_facet(("order_id", "BIGINT"), ("total", "NUMERIC"))}}],
                      job_facets={"sourceCodeLocation": facet(type="git", url="https://git.example.com/etl/clean.py"),
                                  "documentation": facet(description="Cleans the orders.")})
    first["run"]["facets"] = {"nominalTime": facet(nominalStartTime="2026-11-30T01:00:00Z")}
    store_event(first)
    done = json.loads(json.dumps(first))
    done.update(eventType="COMPLETE", eventTime="2026-11-30T01:05:30.250Z")
    store_event(done)
    store_event(run_event("FAIL", job="clean", event_time="2026-11-30T02:00:00.000Z",
                          inputs=["raw.orders"], outputs=["stage.orders"]))
    store_event(run_event("COMPLETE", job="aggregate", event_time="2026-11-30T03:00:00.000Z",
                          inputs=["stage.orders"], outputs=["mart.totals"]))
    return first["run"]["runId"]


@pytest.fixture
def reader(client, owner):
    client.force_login(owner)
    return client


def valid(response, path: str, params: dict | None = None):
    """The answer, after openapi-core has validated it against Marquez's document."""
    assert response.status_code == 200, response.content
    request = MockRequest("http://localhost:5000", "get", path,
                          args=ImmutableMultiDict({k: str(v) for k, v in (params or {}).items()}))
    MARQUEZ.validate_response(request, MockResponse(response.content, status_code=200,
                                                    content_type="application/json"))
    return response.json()


def get(client, path: str, **params):
    """GET an /api/v1 path, validated against Marquez's document."""
    return valid(client.get(f"/api/v1{path}", params), f"/api/v1{path.rstrip('/')}", params)


def marquez_paths(run_id: str) -> list[tuple[str, dict]]:
    return [
        ("/namespaces", {}),
        (f"/namespaces/{NS}", {}),
        ("/namespaces/airflow", {}),
        (f"/namespaces/{NS}/datasets", {"limit": 2, "offset": 1}),
        (f"/namespaces/{NS}/datasets/stage.orders", {}),
        (f"/namespaces/{NS}/datasets/raw.orders", {}),
        (f"/namespaces/{NS}/datasets/stage.orders/versions", {}),
        (f"/namespaces/{NS}/datasets/stage.orders/versions/{run_id}", {}),
        ("/namespaces/airflow/jobs", {}),
        ("/namespaces/airflow/jobs/clean", {}),
        ("/namespaces/airflow/jobs/clean/runs", {"limit": 1}),
        (f"/jobs/runs/{run_id}", {}),
        (f"/jobs/runs/{run_id}/facets", {"type": "run"}),
        (f"/jobs/runs/{run_id}/facets", {"type": "job"}),
        ("/lineage", {"nodeId": D + "stage.orders", "depth": 2}),
        ("/lineage", {"nodeId": "job:airflow:clean"}),
        ("/search", {"q": "orders"}),
        ("/search", {"q": "c_e%", "filter": "job", "sort": "updated_at", "limit": 5}),
        ("/events/lineage", {"sortDirection": "asc", "limit": 2}),
        ("/events/lineage", {"after": "2026-01-01T00:00:00Z"}),
    ]


def test_every_marquez_endpoint_answers_in_the_shape_of_marquez_openapi_document(pipeline, reader):
    for path, params in marquez_paths(pipeline):
        get(reader, path, **params)
        get(reader, path + "/", **params)  # trailing slashes, as Marquez's clients send some


def test_namespaces_are_the_namespaces_of_datasets_and_jobs(pipeline, reader, owner_team, admin):
    owner_team.map_job_namespace("airflow", by=admin)
    answer = get(reader, "/namespaces")
    assert [n["name"] for n in answer["namespaces"]] == ["airflow", WAREHOUSE]
    assert answer["totalCount"] == 2
    assert answer["namespaces"][0]["ownerName"] == "checkout"
    assert get(reader, f"/namespaces/{NS}")["name"] == WAREHOUSE


def test_a_dataset_carries_its_fields_times_and_current_version(pipeline, reader):
    stage = get(reader, f"/namespaces/{NS}/datasets/stage.orders")
    latest_writer = Run.objects.filter(dataset_edges__dataset__name="stage.orders",
                                       dataset_edges__direction="out").order_by("-pk").first()
    assert stage["id"] == {"namespace": WAREHOUSE, "name": "stage.orders"}
    assert stage["type"] == "DB_TABLE" and stage["sourceName"] == WAREHOUSE
    assert {(f["name"], f["type"]) for f in stage["fields"]} == {("order_id", "BIGINT"), ("total", "NUMERIC")}
    assert stage["currentVersion"] == str(latest_writer.run_uuid)
    # Last modified by the run that completed; updated by the newest write (which failed).
    assert stage["lastModifiedAt"] == "2026-11-30T01:05:30.25+00:00"
    assert stage["updatedAt"] >= "2026-11-30T02:00:00+00:00"
    # A dataset only ever read has no version.
    assert "currentVersion" not in get(reader, f"/namespaces/{NS}/datasets/raw.orders")


def test_dataset_versions_are_the_runs_that_wrote_it(pipeline, reader):
    answer = get(reader, f"/namespaces/{NS}/datasets/stage.orders/versions")
    assert answer["totalCount"] == 2
    newest, oldest = answer["versions"]
    assert oldest["version"] == pipeline and oldest["createdByRun"]["state"] == "COMPLETED"
    assert newest["createdByRun"]["state"] == "FAILED"
    assert "fields" in newest and "fields" not in oldest  # only the latest schema is kept
    one = get(reader, f"/namespaces/{NS}/datasets/stage.orders/versions/{pipeline}")
    assert one["id"] == {"namespace": WAREHOUSE, "name": "stage.orders", "version": pipeline}


def test_a_job_carries_its_datasets_latest_run_location_and_description(pipeline, reader):
    clean = get(reader, "/namespaces/airflow/jobs/clean")
    assert clean["inputs"] == [{"namespace": WAREHOUSE, "name": "raw.orders"}]
    assert clean["outputs"] == [{"namespace": WAREHOUSE, "name": "stage.orders"}]
    assert clean["latestRun"]["state"] == "FAILED" and "facets" not in clean["latestRun"]
    assert clean["location"] == "https://git.example.com/etl/clean.py"
    assert clean["description"] == "Cleans the orders."
    assert clean["type"] == "BATCH" and clean["facets"]["documentation"]["description"] == "Cleans the orders."


def test_a_run_says_which_dataset_versions_it_read_and_wrote(pipeline, reader):
    aggregate = Run.objects.get(job__name="aggregate")
    answer = get(reader, f"/jobs/runs/{aggregate.run_uuid}")
    failed = Run.objects.get(job__name="clean", state="FAIL")
    assert answer["state"] == "COMPLETED"
    assert answer["jobVersion"]["name"] == "aggregate"
    # It read the stage.orders that the failed clean run wrote last before it.
    assert answer["inputDatasetVersions"] == [{"datasetVersionId": {
        "namespace": WAREHOUSE, "name": "stage.orders", "version": str(failed.run_uuid)}, "facets": {}}]
    assert answer["outputDatasetVersions"][0]["datasetVersionId"]["version"] == str(aggregate.run_uuid)
    first = get(reader, f"/jobs/runs/{pipeline}")
    assert first["durationMs"] == 330250 and first["nominalStartTime"] == "2026-11-30T01:00:00Z"
    # raw.orders was never seen written: no version of it to name.
    assert first["inputDatasetVersions"] == []


def test_run_facets_are_the_run_or_job_facets_by_name(pipeline, reader):
    run_facets = get(reader, f"/jobs/runs/{pipeline}/facets", type="run")
    assert run_facets["runId"] == pipeline
    assert run_facets["facets"]["nominalTime"]["nominalStartTime"] == "2026-11-30T01:00:00Z"
    job_facets = get(reader, f"/jobs/runs/{pipeline}/facets", type="job")["facets"]
    assert job_facets["sourceCodeLocation"]["url"] == "https://git.example.com/etl/clean.py"


def test_lineage_nodes_carry_marquez_full_payload(pipeline, reader):
    graph = get(reader, "/lineage", nodeId=D + "stage.orders", depth=1)
    nodes = {node["id"]: node for node in graph["graph"]}
    stage = nodes[D + "stage.orders"]
    assert stage["type"] == "DATASET" and stage["data"]["type"] == "DATASET"
    assert {f["name"] for f in stage["data"]["fields"]} == {"order_id", "total"}
    assert stage["data"]["updatedAt"] and stage["data"]["createdAt"]
    clean = nodes["job:airflow:clean"]
    assert clean["data"]["latestRun"]["state"] == "FAILED"
    assert clean["data"]["inputs"] == [{"namespace": WAREHOUSE, "name": "raw.orders"}]
    assert clean["data"]["updatedAt"]
    # Marquez's web UI sizes a dataset node by its fields: every dataset node has them.
    assert all(isinstance(n["data"]["fields"], list) for n in graph["graph"] if n["type"] == "DATASET")


def test_graph_node_data_is_what_the_dataset_and_job_endpoints_say(pipeline, reader):
    graph = get(reader, "/lineage", nodeId=D + "stage.orders", depth=5)
    assert len(graph["graph"]) == 5
    for node in graph["graph"]:
        data = node["data"]
        if node["type"] == "DATASET":
            endpoint = get(reader, f"/namespaces/{NS}/datasets/{quote(data['name'], safe='')}")
            left_out = ("type", "facets", "deleted")
        else:
            endpoint = get(reader, f"/namespaces/airflow/jobs/{quote(data['name'], safe='')}")
            left_out = ("type", "facets", "currentVersion")
        expected = {k: v for k, v in endpoint.items() if k not in left_out}
        assert {k: v for k, v in data.items() if k != "type"} == expected


def test_the_graph_is_still_one_statement_with_the_full_payload(pipeline, django_assert_num_queries):
    # 1: resolve the node id, walk, and build every node's data.
    with django_assert_num_queries(1):
        graph = marquez_graph(D + "raw.orders", depth=20)
    lean = lineage_graph(D + "raw.orders", depth=20).to_marquez()
    assert [n["id"] for n in graph["graph"]] == [n["id"] for n in lean["graph"]]
    assert [n["inEdges"] for n in graph["graph"]] == [n["inEdges"] for n in lean["graph"]]


def test_the_lineage_endpoint_takes_a_trailing_slash_both_ways(pipeline, client, lineage_secret):
    from .conftest import post

    answer = client.get("/api/v1/lineage/", {"nodeId": "job:airflow:aggregate", "depth": 1},
                        HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert answer.status_code == 200 and len(answer.json()["graph"]) == 3
    response = post(client, run_event("START", job="late"), lineage_secret, path="/api/v1/lineage/")
    assert response.status_code == 201


def test_a_read_only_token_reads(pipeline, client, read_only_secret):
    response = client.get("/api/v1/namespaces/airflow/jobs", HTTP_AUTHORIZATION=f"Bearer {read_only_secret}")
    assert response.status_code == 200 and response.json()["totalCount"] == 2


def test_reading_needs_a_token_or_a_session(pipeline, client):
    response = client.get("/api/v1/namespaces")
    assert response.status_code == 401 and response.json()["code"] == "token_missing"


@pytest.mark.parametrize("path", [
    "/api/v1/namespaces/nowhere", "/api/v1/namespaces/nowhere/datasets", "/api/v1/namespaces/nowhere/jobs/",
    f"/api/v1/namespaces/{NS}/datasets/nothing", f"/api/v1/namespaces/{NS}/datasets/nothing/versions",
    "/api/v1/namespaces/airflow/jobs/nothing", "/api/v1/namespaces/airflow/jobs/nothing/runs",
    "/api/v1/jobs/runs/8d1a3b8c-9a4e-4c1e-9d0e-000000000000", "/api/v1/jobs/runs/not-a-uuid/facets",
    f"/api/v1/namespaces/{NS}/datasets/stage.orders/versions/8d1a3b8c-9a4e-4c1e-9d0e-000000000000",
])
def test_a_name_never_seen_is_a_json_404(pipeline, reader, path):
    response = reader.get(path)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found" and response.json()["detail"]


@pytest.mark.parametrize(("path", "params", "message"), [
    ("/api/v1/namespaces", {"limit": "many"}, "limit must be a whole number"),
    ("/api/v1/namespaces/airflow/jobs", {"offset": "-1"}, "offset must be 0 or more"),
    ("/api/v1/namespaces", {"limit": "100000"}, "limit must be from 0 to 10000"),
    ("/api/v1/search", {}, "Send q="),
    ("/api/v1/search", {"q": "x", "filter": "table"}, "filter must be dataset or job"),
    ("/api/v1/search", {"q": "x", "before": "yesterday"}, "before must be YYYY-MM-DD"),
    ("/api/v1/events/lineage", {"sortDirection": "up"}, "sortDirection must be asc or desc"),
    (f"/api/v1/jobs/runs/{'8d1a3b8c-9a4e-4c1e-9d0e-000000000000'}/facets", {"type": "dataset"}, "type must be run or job"),
])
def test_a_bad_parameter_is_a_json_400_saying_what_to_send(pipeline, reader, path, params, message):
    response = reader.get(path, params)
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_search_matches_marquez_patterns_in_datasets_and_jobs(pipeline, reader):
    answer = get(reader, "/search", q="ORDERS")
    assert [(r["type"], r["name"]) for r in answer["results"]] == [("DATASET", "raw.orders"),
                                                                   ("DATASET", "stage.orders")]
    assert answer["results"][0]["nodeId"] == D + "raw.orders"
    assert [r["name"] for r in get(reader, "/search", q="c_e%")["results"]] == ["clean"]
    assert get(reader, "/search", q="a", filter="job", sort="updated_at")["results"][0]["name"] == "aggregate"
    assert get(reader, "/search", q="orders", namespace="airflow")["totalCount"] == 0
    assert get(reader, "/search", q="%", after="2030-01-01")["totalCount"] == 0


def test_events_are_the_raw_events_newest_first(pipeline, reader):
    answer = get(reader, "/events/lineage", limit=2)
    assert answer["totalCount"] == 4 and len(answer["events"]) == 2
    assert answer["events"][0]["job"]["name"] == "aggregate"
    assert get(reader, "/events/lineage", sortDirection="asc")["events"][0]["eventType"] == "START"


def test_namespace_paths_split_where_marquez_clients_put_the_segments():
    assert route("postgres://db:5432") == Route("namespace", "postgres://db:5432")
    assert route("postgres://db:5432/datasets") == Route("datasets", "postgres://db:5432")
    assert route("s3://bucket/data/datasets/events/2026/part") == Route("dataset", "s3://bucket/data", "events/2026/part")
    assert route("s3://b/datasets/x/jobs/y/versions") == Route("dataset_versions", "s3://b", "x/jobs/y")
    uuid = "8d1a3b8c-9a4e-4c1e-9d0e-000000000000"
    assert route(f"s3://b/datasets/x/versions/{uuid}") == Route("dataset_version", "s3://b", "x", uuid)
    assert route("airflow/jobs") == Route("jobs", "airflow")
    assert route("airflow/jobs/dag.task") == Route("job", "airflow", "dag.task")
    assert route("airflow/jobs/dag/task/runs") == Route("job_runs", "airflow", "dag/task")


def test_a_namespace_with_slashes_reads_through_an_encoded_path(reader):
    store_event(run_event("COMPLETE", job="copy", inputs=[{"namespace": "s3://bucket/lake", "name": "raw/events"}],
                          outputs=[{"namespace": "s3://bucket/lake", "name": "clean/events"}]))
    path = f"/namespaces/{quote('s3://bucket/lake', safe='')}/datasets/{quote('raw/events', safe='')}"
    assert get(reader, path)["name"] == "raw/events"


# --- query counts: fixed whatever the number of rows ------------------------------

def more_pipelines(count: int) -> None:
    for i in range(count):
        store_event(run_event("COMPLETE", job=f"extra_{i}", inputs=["raw.orders"], outputs=[f"extra.table_{i}"],
                              job_namespace="airflow" if i % 2 else f"team_{i}"))


@pytest.mark.parametrize(("path", "params", "queries"), [
    # session, user; then: count, page (the namespaces with their owners).
    ("/api/v1/namespaces", {}, 4),
    # session, user; count, page (each dataset with its schema, team and newest writes).
    (f"/api/v1/namespaces/{NS}/datasets", {}, 4),
    # session, user; count, page (each job with its latest run's id), their edges, those runs.
    ("/api/v1/namespaces/airflow/jobs", {}, 6),
    # session, user; the job, count, page, the runs' edges (each input with the version it read).
    ("/api/v1/namespaces/airflow/jobs/clean/runs", {}, 6),
    # session, user; the dataset, count, page with the runs.
    (f"/api/v1/namespaces/{NS}/datasets/raw.orders/versions", {}, 5),
    # session, user; count, page.
    ("/api/v1/search", {"q": "%"}, 4),
    ("/api/v1/events/lineage", {}, 4),
])
def test_list_query_counts_do_not_grow_with_the_rows(pipeline, reader, django_assert_num_queries, path, params,
                                                     queries):
    with django_assert_num_queries(queries):
        small = reader.get(path, params)
    more_pipelines(6)
    for _ in range(3):
        store_event(run_event("COMPLETE", job="clean", inputs=["raw.orders"], outputs=["stage.orders", "raw.orders"]))
    with django_assert_num_queries(queries):
        large = reader.get(path, params)
    assert small.status_code == large.status_code == 200
    assert large.content != small.content


def test_a_token_reads_the_namespaces_in_four_queries(pipeline, client, read_only_secret, django_assert_num_queries):
    # 1: the token (with its person and team), 2: its last use (first use), 3: count, 4: page.
    with django_assert_num_queries(4):
        assert client.get("/api/v1/namespaces", HTTP_AUTHORIZATION=f"Bearer {read_only_secret}").status_code == 200


# --- sources, tags, job versions, run lineage and column lineage -------------------

def tags_facet(*tags: tuple[str, str]) -> dict:
    return {**facet(tags=[{"key": key, "value": value, "source": "CONFIG"} for key, value in tags]),
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json"}


@pytest.fixture
def described(pipeline):
    """The pipeline, and a run of `publish` (mart.totals -> report.totals) whose
    events carry tags (dataset and job), a dataSource and column lineage."""
    source = facet(name="warehouse", uri="postgres://warehouse:5432")
    event = run_event(
        "COMPLETE", job="publish", event_time="2026-11-30T04:00:00.000Z",
        inputs=[{"namespace": WAREHOUSE, "name": "mart.totals", "facets": {"dataSource": source}}],
        outputs=[{"namespace": WAREHOUSE, "name": "report.totals",
                  "facets": {"dataSource": source, "tags": tags_facet(("PII", "true"), ("tier", "gold")),
                             "schema": schema_facet(("total", "NUMERIC")),
                             "columnLineage": column_lineage_facet(
                                 {"total": [input_field("mart.totals", "total", "DIRECT/AGGREGATION")]})}}],
        job_facets={"tags": {**tags_facet(("nightly", "true")),
                             "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsJobFacet.json"}})
    store_event(event)
    return event["run"]["runId"]


def described_paths(run_id: str) -> list[tuple[str, dict]]:
    return [
        ("/sources", {}),
        ("/sources/warehouse", {}),
        (f"/sources/{quote('s3://never-seen', safe='')}", None),
        ("/tags", {}),
        ("/namespaces/airflow/jobs/clean/versions", {}),
        (f"/namespaces/airflow/jobs/clean/versions/{job_version('airflow', 'clean')}", {}),
        ("/runlineage/upstream", {"runId": run_id}),
        ("/runlineage/upstream", {"runId": run_id, "depth": 1}),
        ("/column-lineage", {"nodeId": "job:airflow:publish"}),
        ("/column-lineage", {"nodeId": D + "report.totals", "withDownstream": "true"}),
        ("/column-lineage", {"nodeId": f"datasetField:{WAREHOUSE}:report.totals:total", "depth": 1}),
    ]


def test_sources_tags_job_versions_and_lineage_answer_in_marquez_shape_with_or_without_a_slash(described, reader):
    for path, params in described_paths(described):
        if params is None:
            assert reader.get(f"/api/v1{path}").status_code == 404
            continue
        get(reader, path, **params)
        get(reader, path + "/", **params)


def test_sources_are_the_data_sources_named_by_facets_and_the_dataset_namespaces(described, reader):
    found = {s["name"]: s for s in get(reader, "/sources")["sources"]}
    # The warehouse namespace is where the facet says the "warehouse" source is: listed once.
    assert list(found) == ["warehouse"]
    assert found["warehouse"]["connectionUrl"] == WAREHOUSE and found["warehouse"]["type"] == "POSTGRES"
    assert get(reader, "/sources/warehouse")["name"] == "warehouse"
    # A namespace no facet locates is its own source.
    store_event(run_event("COMPLETE", job="copy", outputs=[{"namespace": "s3://lake", "name": "orders"}]))
    lake = get(reader, f"/sources/{quote('s3://lake', safe='')}")
    assert lake["connectionUrl"] == "s3://lake" and lake["type"] == "S3"


def test_tags_are_those_the_dataset_and_job_tags_facets_carry(described, reader):
    assert get(reader, "/tags")["tags"] == [{"name": "PII"}, {"name": "nightly"},
                                            {"name": "tier", "description": "gold"}]


def test_a_job_has_one_version_and_reads_it_by_id(described, reader):
    versions = get(reader, "/namespaces/airflow/jobs/clean/versions")["versions"]
    assert [v["id"] for v in versions] == [{"namespace": "airflow", "name": "clean",
                                            "version": job_version("airflow", "clean")}]
    assert versions[0]["location"] == "https://git.example.com/etl/clean.py"
    assert reader.get(f"/api/v1/namespaces/airflow/jobs/clean/versions/{uuid.uuid4()}").status_code == 404


def test_upstream_run_lineage_walks_the_runs_that_wrote_what_each_run_read(described, reader):
    runs = get(reader, "/runlineage/upstream", runId=described)["runs"]
    assert [r["job"]["name"] for r in runs] == ["publish", "aggregate", "clean"]
    aggregate = Run.objects.get(job__name="aggregate")
    assert runs[0]["inputs"] == [{"namespace": WAREHOUSE, "name": "mart.totals",
                                  "version": str(aggregate.run_uuid), "producedByRunId": str(aggregate.run_uuid)}]
    assert runs[0]["run"]["status"] == "COMPLETED"
    assert [r["job"]["name"] for r in get(reader, "/runlineage/upstream", runId=described, depth=1)["runs"]] == \
        ["publish", "aggregate"]


def test_column_lineage_by_job_starts_from_the_fields_it_fed(described, reader):
    graph = get(reader, "/column-lineage", nodeId="job:airflow:publish")["graph"]
    assert [n["id"] for n in graph] == [f"datasetField:{WAREHOUSE}:mart.totals:total",
                                        f"datasetField:{WAREHOUSE}:report.totals:total"]
    assert reader.get("/api/v1/column-lineage", {"nodeId": "job:airflow:nothing"}).status_code == 404


@pytest.mark.parametrize(("path", "params", "queries"), [
    ("/api/v1/sources", {}, 4),  # session, user; the dataSource facets, the namespaces
    ("/api/v1/tags", {}, 4),  # session, user; the datasets' tags facets, the jobs' tags facets
    ("/api/v1/namespaces/airflow/jobs/clean/versions", {}, 5),  # session, user; the job, its edges, its latest run
])
def test_new_list_query_counts_do_not_grow_with_the_rows(described, reader, django_assert_num_queries, path, params,
                                                         queries):
    with django_assert_num_queries(queries):
        small = reader.get(path, params)
    for i in range(4):
        store_event(run_event("COMPLETE", job=f"tagged_{i}", outputs=[{
            "namespace": f"postgres://db{i}:5432", "name": f"t{i}",
            "facets": {"tags": tags_facet((f"tag{i}", "true")),
                       "dataSource": facet(name=f"db{i}", uri=f"postgres://db{i}:5432")}}]))
    with django_assert_num_queries(queries):
        large = reader.get(path, params)
    assert small.status_code == large.status_code == 200


def test_upstream_run_lineage_costs_queries_per_level_not_per_run(described, reader, django_assert_num_queries):
    # session, user; the run; then per level of runs: their inputs (with the version each read), the runs
    # that wrote them; the last level's inputs only.
    with django_assert_num_queries(8):
        assert len(reader.get("/api/v1/runlineage/upstream", {"runId": described}).json()["runs"]) == 3
    more_pipelines(6)  # more runs reading raw.orders: the same levels
    with django_assert_num_queries(8):
        assert len(reader.get("/api/v1/runlineage/upstream", {"runId": described}).json()["runs"]) == 3
