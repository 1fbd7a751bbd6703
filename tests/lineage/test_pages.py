"""The lineage on the dataset page (server-drawn SVG) and the job pages."""

from __future__ import annotations

import re

import pytest

from lineage.ingest import store_event
from lineage.models import Job
from registry.models import Dataset

from .conftest import run_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def chain(dataset):
    """raw.orders -> [clean] -> retail.public.orders (`dataset`) -> [aggregate] -> mart.totals -> [export] -> out.report"""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    store_event(run_event("START", job="clean", inputs=["raw.orders"], outputs=[own]))
    store_event(run_event("COMPLETE", job="aggregate", inputs=[own], outputs=["mart.totals"]))
    store_event(run_event("FAIL", job="export", inputs=["mart.totals"], outputs=["out.report"]))


def test_the_dataset_page_draws_its_lineage_as_svg_with_links(chain, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert "<script" not in svg.lower()
    clean = Job.objects.get(name="clean")
    raw = Dataset.objects.get(name="raw.orders")
    assert f'href="/lineage/jobs/{clean.pk}/"' in svg
    assert f'href="/datasets/{raw.pk}/"' in svg
    # Depth 2 by default: two jobs either way, so out.report (behind export) is drawn.
    assert "mart.totals" in svg and "out.report" in svg
    assert 'class="dataset start"' in svg
    assert len(re.findall(r'<path class="edge"', svg)) == 6


def test_the_depth_selector_narrows_the_graph(chain, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url(), {"depth": 1, "direction": "downstream"}).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert "mart.totals" in svg and "out.report" not in svg and "raw.orders" not in svg
    assert '<option value="1" selected>' in page and '<option value="downstream" selected>' in page


def test_the_dataset_page_lists_the_runs_that_wrote_it(chain, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert "Latest runs writing it" in page and "airflow/clean" in page


def test_a_dataset_without_lineage_says_so(client, owner, dataset):
    client.force_login(owner)
    assert "No lineage yet" in client.get(dataset.get_absolute_url()).content.decode()


def test_the_lineage_section_costs_two_queries(chain, rf, owner, dataset, django_assert_num_queries):
    from lineage.views import lineage_section

    request = rf.get(dataset.get_absolute_url(), {"depth": 5})
    request.user = owner
    # 1: the recursive walk with nodes and edges, 2: the latest runs writing the dataset (with their jobs).
    with django_assert_num_queries(2):
        lineage_section(request, dataset)


def test_the_job_page_shows_its_graph_and_runs(chain, client, owner):
    job = Job.objects.get(name="export")
    client.force_login(owner)
    page = client.get(job.get_absolute_url()).content.decode()
    assert "<svg" in page and "out.report" in page and "FAIL" in page


def test_the_job_list_is_a_fixed_number_of_queries(chain, client, owner, django_assert_num_queries):
    for i in range(10):
        store_event(run_event("COMPLETE", job=f"more_{i}", outputs=[f"x{i}"]))
    client.force_login(owner)
    # 1: session, 2: user, 3: jobs with their latest run's state and time (subqueries).
    with django_assert_num_queries(3):
        page = client.get("/lineage/jobs/").content.decode()
    assert "more_9" in page and "COMPLETE" in page


def test_jobs_is_in_the_navigation(client, owner):
    client.force_login(owner)
    assert 'href="/lineage/jobs/"' in client.get("/").content.decode()
