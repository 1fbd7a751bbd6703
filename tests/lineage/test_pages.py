"""The lineage on the dataset page (server-drawn SVG) and the job pages."""

from __future__ import annotations

import re
import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from lineage.ingest import store_event
from lineage.models import Job
from registry.keyset import encode_token
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
    page = client.get(dataset.get_absolute_url(), {"depth": 2}).content.decode()
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


def test_the_page_shows_one_job_either_way_by_default(chain, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert "raw.orders" in svg and "mart.totals" in svg and "out.report" not in svg
    assert 'class="lineage-graph"' in svg and 'width="' in svg  # drawn at its own size, never scaled down


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
    # 1: the recursive walk with nodes and edges, 2-3: the dataset nodes' statuses (freshness,
    # then drift, failed checks and open change requests in one query), 4: the latest runs
    # writing the dataset (with their jobs).
    with django_assert_num_queries(4):
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
    # 1: session, 2: user, 3: jobs with their latest run's state and time (subqueries), no count.
    with django_assert_num_queries(3):
        page = client.get("/lineage/jobs/").content.decode()
    assert "more_9" in page and "COMPLETE" in page


def test_the_job_list_comes_in_pages(chain, client, owner, settings):
    settings.LIST_PAGE_SIZE = 3
    for i in range(10):
        store_event(run_event("COMPLETE", job=f"more_{i}", outputs=[f"x{i}"]))
    client.force_login(owner)
    first = client.get("/lineage/jobs/").content.decode()
    assert first.count('href="/lineage/jobs/') - first.count('href="/lineage/jobs/"') == 3  # three job links
    assert 'rel="next"' in first and " of " not in first  # no count of the list
    names, url = [], "/lineage/jobs/"
    while url:
        body = client.get(url).content.decode()
        names += re.findall(r'href="/lineage/jobs/\d+/">([^<]+)<', body)
        found = re.search(r'href="\?(after=[^"]+)" rel="next"', body)
        url = f"/lineage/jobs/?{found.group(1)}" if found else None
    assert names == sorted(names) and len(names) == len(set(names)) == Job.objects.count()


def test_a_late_page_of_jobs_costs_the_queries_of_the_first(chain, client, owner, settings, django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 2
    for i in range(10):
        store_event(run_event("COMPLETE", job=f"more_{i}", outputs=[f"x{i}"]))
    last_but_two = Job.objects.order_by("-namespace", "-name")[2]
    client.force_login(owner)
    with django_assert_num_queries(3):  # as the first page: session, user, the jobs after the token
        body = client.get("/lineage/jobs/", {"after": encode_token((last_but_two.namespace, last_but_two.name))})
    assert len(re.findall(r'href="/lineage/jobs/\d+/">', body.content.decode())) == 2


def test_jobs_is_in_the_navigation(client, owner):
    client.force_login(owner)
    assert 'href="/lineage/jobs/"' in client.get("/").content.decode()


def test_admins_can_browse_jobs_runs_and_events(chain, client, admin):
    client.force_login(admin)
    for path in ("/admin/lineage/job/", "/admin/lineage/run/", "/admin/lineage/runevent/"):
        assert client.get(path).status_code == 200


@pytest.fixture
def readers(dataset, consumer_team, other_team):
    """retail.public.orders is read by Analytics' report (order_id, amount direct; status indirect), by
    Warehouse's unregistered export (all columns unknown) and by Analytics' second report (amount)."""
    from registry.models import ApiToken
    from registry.usage import NamespaceTeam

    from .conftest import column_lineage_facet, input_field, post

    own = {"namespace": dataset.namespace, "name": dataset.name}
    facet = column_lineage_facet({"order_id": [input_field(dataset.name, "order_id", "DIRECT", namespace=dataset.namespace)],
                                  "revenue": [input_field(dataset.name, "amount", "DIRECT", namespace=dataset.namespace)]},
                                 dataset_level=[input_field(dataset.name, "status", "INDIRECT", namespace=dataset.namespace)])
    client = Client()
    analytics = ApiToken.issue("analytics", team=consumer_team)[1]
    warehouse = ApiToken.issue("warehouse", team=other_team)[1]
    post(client, run_event("COMPLETE", job="revenue_report", inputs=[own],
                           outputs=[{"namespace": dataset.namespace, "name": "mart.revenue", "facets": {"columnLineage": facet}}]),
         analytics)
    post(client, run_event("COMPLETE", job="nightly_export", inputs=[own], outputs=["out.export"]), warehouse)
    # A job of a namespace mapped to Analytics, whichever token sent it.
    NamespaceTeam.objects.create(namespace="dbt", team=consumer_team)
    facet = column_lineage_facet({"amount": [input_field(dataset.name, "amount", "DIRECT", namespace=dataset.namespace)]})
    post(client, run_event("COMPLETE", job="margins", job_namespace="dbt", inputs=[own],
                           outputs=[{"namespace": dataset.namespace, "name": "mart.margins", "facets": {"columnLineage": facet}}]),
         warehouse)


def test_the_dataset_page_lists_each_columns_readers_and_those_reading_everything(readers, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    section = page[page.index('id="column-usage"'):]
    section = section[:section.index("</section>")]
    everything = section[section.index("Reading all or unknown columns"):section.index("By column")]
    assert "airflow/nightly_export" in everything and "Warehouse" in everything and "unregistered" in everything
    by_column = section[section.index("By column"):]
    rows = [re.sub(r"<[^>]+>|\s+", " ", row).split() for row in by_column.split("<tr>")[2:]]
    by_token = ["decided", "by", "team", "of", "the", "posting", "token"]  # the rule that decided the team
    assert [r[:-2] for r in rows] == [  # without the last-seen date and time
        ["amount", "airflow/revenue_report", "direct", "Analytics", *by_token, "column_lineage"],
        ["dbt/margins", "direct", "Analytics", "decided", "by", "job", "namespace", "mapping", "column_lineage"],
        ["order_id", "airflow/revenue_report", "direct", "Analytics", *by_token, "column_lineage"],
        ["status", "airflow/revenue_report", "indirect", "Analytics", *by_token, "column_lineage"],
    ]


def test_the_column_usage_section_is_three_queries(readers, rf, owner, dataset, django_assert_num_queries):
    from lineage.views import column_usage_section

    request = rf.get(dataset.get_absolute_url())
    request.user = owner
    # 1: the dataset's current column reads with their jobs' and namespaces' teams, 2: those teams, 3: its consumers.
    with django_assert_num_queries(3):
        html = column_usage_section(request, dataset)
    assert "revenue_report" in html


def test_a_dataset_nobody_is_seen_reading_has_no_column_usage_section(client, owner, dataset):
    client.force_login(owner)
    assert 'id="column-usage"' not in client.get(dataset.get_absolute_url()).content.decode()


@pytest.fixture
def cycle(dataset):
    """retail.public.orders -> [enrich] -> retail.sales.orders_enriched_daily -> [feedback] -> retail.public.orders:
    the enriched dataset is both downstream and upstream of the orders; [audit] reads the orders too."""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    store_event(run_event("COMPLETE", job="enrich", inputs=[own], outputs=["retail.sales.orders_enriched_daily"]))
    store_event(run_event("COMPLETE", job="feedback", inputs=["retail.sales.orders_enriched_daily"], outputs=[own]))
    store_event(run_event("COMPLETE", job="audit", inputs=[own], outputs=["retail.sales.audit_log"]))


def test_an_edge_back_to_the_start_runs_below_every_node_not_between_datasets(cycle, dataset):
    from lineage.graph import Node, graph_around
    from lineage.svg import NODE_H, NODE_W, layout

    drawing = layout(graph_around(Node("dataset", dataset.pk, dataset.namespace, dataset.name), depth=3))
    by_name = {n.title.rsplit(":", 1)[-1]: n for n in drawing.nodes}
    back = [path for path in drawing.edges if " V" in path]
    assert len(back) == 1  # feedback writes the orders, to the left of it
    feedback, orders = by_name["feedback"], by_name[dataset.name]
    lane = int(re.search(r"V(\d+) H", back[0]).group(1))
    assert lane > max(n.y + NODE_H for n in drawing.nodes)
    # it leaves the job's right side and enters the dataset's left side: job -> dataset, like every edge
    assert back[0].startswith(f"M{feedback.x + NODE_W},{feedback.y + NODE_H // 2} ")
    assert back[0].endswith(f"V{orders.y + NODE_H // 2} H{orders.x}")
    assert drawing.height > lane


def test_long_labels_are_cut_at_the_end(cycle, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url(), {"depth": 2}).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert ">retail.sales.orders_enric…</text>" in svg
    assert re.search(r":retail\.sales\.orders_enriched_daily( — [^<]+)?</title>", svg)  # the whole name on hover


def test_the_latest_runs_writing_it_are_ordered_by_their_last_event(client, owner, dataset):
    own = {"namespace": dataset.namespace, "name": dataset.name}
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    store_event(run_event("START", run_id=first, job="slow_load", outputs=[own], event_time="2026-11-30T01:00:00.000Z"))
    store_event(run_event("START", run_id=second, job="quick_load", outputs=[own], event_time="2026-11-30T02:00:00.000Z"))
    # The run started first ends last: it is the latest run writing the dataset.
    store_event(run_event("COMPLETE", run_id=first, job="slow_load", outputs=[own], event_time="2026-11-30T03:00:00.000Z"))
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    runs = page[page.index("Latest runs writing it"):]
    assert runs.index("airflow/slow_load") < runs.index("airflow/quick_load")


def test_the_dataset_page_costs_the_same_queries_whatever_its_history(client, owner, dataset, django_assert_num_queries):
    own = {"namespace": dataset.namespace, "name": dataset.name}

    def write(n: int) -> None:
        for i in range(n):
            store_event(run_event("COMPLETE", job=f"load_{i % 3}", outputs=[own],
                                  event_time=f"2026-11-{1 + i % 28:02d}T01:00:00.000Z"))

    write(2)
    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        client.get(dataset.get_absolute_url())
    write(30)
    client.force_login(owner)
    with django_assert_num_queries(len(captured)):
        page = client.get(dataset.get_absolute_url()).content.decode()
    runs = page[page.index("Latest runs writing it"):]
    assert runs[:runs.index("</table>")].count("<tr><td>") == 10  # the ten latest, read among the newest by id
