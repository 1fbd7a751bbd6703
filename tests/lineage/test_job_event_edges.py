"""A JobEvent's inputs and outputs on the job view and its Marquez-shaped API
(issue 32, point 4): the datasets the graph shows, whether runs showed them or
a JobEvent declared them."""

from __future__ import annotations

import pytest

from lineage.models import Job

from .conftest import WAREHOUSE, post, run_event
from .test_marquez_api import get
from .test_static_events import job_event

pytestmark = pytest.mark.django_db


def named(*names: str) -> list[dict]:
    return [{"namespace": WAREHOUSE, "name": name} for name in names]


@pytest.fixture
def declared(client, lineage_secret):
    """etl.declared, only ever declared by a JobEvent: reads raw.orders and raw.customers, writes stage.orders."""
    response = post(client, job_event(inputs=["raw.orders", "raw.customers"], outputs=["stage.orders"]), lineage_secret)
    assert response.status_code == 201
    return Job.objects.get(name="etl.declared")


def test_the_job_api_lists_the_datasets_a_job_event_declared(declared, client, owner):
    client.force_login(owner)

    job = get(client, "/namespaces/airflow/jobs/etl.declared")

    assert job["inputs"] == named("raw.customers", "raw.orders")
    assert job["outputs"] == named("stage.orders")


def test_the_job_list_and_the_graph_node_say_the_same(declared, client, owner):
    client.force_login(owner)

    listed = get(client, "/namespaces/airflow/jobs")["jobs"]
    node = next(n for n in get(client, "/lineage", nodeId="job:airflow:etl.declared")["graph"]
                if n["id"] == "job:airflow:etl.declared")

    assert listed[0]["inputs"] == node["data"]["inputs"] == named("raw.customers", "raw.orders")
    assert listed[0]["outputs"] == node["data"]["outputs"] == named("stage.orders")


def test_a_dataset_both_declared_and_seen_in_a_run_is_listed_once(declared, client, lineage_secret, owner):
    post(client, run_event("COMPLETE", job="etl.declared", inputs=["raw.orders"], outputs=["stage.extra"]),
         lineage_secret)
    client.force_login(owner)

    job = get(client, "/namespaces/airflow/jobs/etl.declared")

    assert job["inputs"] == named("raw.customers", "raw.orders")
    assert job["outputs"] == named("stage.extra", "stage.orders")
    edges = declared.edges()
    assert [(e.name, e.declared) for e in edges["in"]] == [("raw.customers", True), ("raw.orders", False)]


def test_the_job_page_lists_its_inputs_and_outputs_and_which_are_declared(declared, client, lineage_secret, owner):
    post(client, run_event("COMPLETE", job="etl.declared", inputs=["raw.orders"]), lineage_secret)
    client.force_login(owner)

    page = client.get(declared.get_absolute_url()).content.decode()

    section = page.split('id="datasets"', 1)[1].split("</section>", 1)[0]
    rows = section.split("<tr>")[2:]
    assert ["reads" in r and "raw.customers" in r and "declared" in r for r in rows[:1]] == [True]
    assert "raw.orders" in rows[1] and "declared" not in rows[1] and "runs" in rows[1]
    assert "writes" in rows[2] and "stage.orders" in rows[2] and "declared" in rows[2]


def test_a_job_without_datasets_says_so(client, lineage_secret, owner):
    post(client, job_event("etl.empty"), lineage_secret)
    client.force_login(owner)

    page = client.get(Job.objects.get(name="etl.empty").get_absolute_url()).content.decode()

    assert "No datasets yet." in page


def test_the_edges_of_many_jobs_are_one_query(declared, client, lineage_secret, django_assert_num_queries):
    for i in range(3):
        post(client, job_event(f"etl.more_{i}", inputs=["raw.orders"], outputs=[f"stage.more_{i}"]), lineage_secret)
    ids = list(Job.objects.values_list("pk", flat=True))

    with django_assert_num_queries(1):
        edges = Job.edges_of(ids)

    assert len(edges) == 8
