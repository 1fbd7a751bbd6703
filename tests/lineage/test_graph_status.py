"""The lineage graph says each dataset's health (freshness, drift, failed checks, open
change requests) on its node, names every node in full on hover and focus, and nests no
link inside another interactive element; the dataset page says the same health above the fold."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from freshness.evaluation import evaluate, record_write, set_slo
from lineage.ingest import store_event
from lineage.models import QualityCheck
from registry.models import Dataset

from .conftest import run_event

pytestmark = pytest.mark.django_db

LONG = "retail.sales.orders_enriched_daily"


@pytest.fixture
def graph(dataset):
    """raw.orders -> [clean] -> retail.public.orders (`dataset`) -> [aggregate] -> retail.sales.orders_enriched_daily"""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    store_event(run_event("COMPLETE", job="clean", inputs=["raw.orders"], outputs=[own]))
    store_event(run_event("COMPLETE", job="aggregate", inputs=[own], outputs=[LONG]))


def _stale(dataset, owner) -> None:
    then = datetime.now(UTC) - timedelta(hours=10)
    set_slo(dataset, max_age=timedelta(hours=1), warn_after=None, by=owner, now=then)
    record_write(dataset, at=then, row_count=1, now=then)
    evaluate(datetime.now(UTC))


def _failed_check(dataset) -> None:
    QualityCheck.objects.create(dataset=dataset, job_namespace="dbt", job_name="test", event_time=datetime.now(UTC),
                                assertions=[{"assertion": "not_null", "column": "id", "success": False}],
                                assertion_count=1, failed_count=1)


def _node(svg: str, name: str) -> str:
    return re.search(rf'<a [^>]*data-name="[^"]*{re.escape(name)}"[^>]*>.*?</a>', svg, re.S).group(0)


def test_each_dataset_node_says_whether_it_is_stale_or_failing_its_checks(graph, client, owner, dataset):
    _stale(dataset, owner)
    _failed_check(Dataset.objects.get(name=LONG))
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    orders = _node(svg, dataset.name)
    assert re.search(r'data-status="Stale[";]', orders) and '<circle class="marker bad"' in orders
    enriched = _node(svg, LONG)
    assert re.search(r'data-status="[^"]*1 failed check', enriched) and "marker bad" in enriched
    assert "marker bad" not in _node(svg, "raw.orders")  # neither stale nor failing


def test_every_node_names_itself_in_full_for_the_mouse_the_keyboard_and_screen_readers(graph, client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    svg = page[page.index("<svg"):page.index("</svg>")]
    enriched = _node(svg, LONG)
    assert ">retail.sales.orders_enric…</text>" in enriched  # cut to fit its box...
    assert re.search(rf'aria-label="dataset [^"]*{LONG}"', enriched)  # ...but read in full
    assert f"{LONG}</title>" in enriched  # and on hover
    assert 'class="muted lineage-focus" aria-live="polite"' in page  # where focus writes it in full
    # A graph of links is a group, not an image: no link nested in another interactive role.
    assert 'role="img"' not in svg and 'role="group"' in svg


def test_the_dataset_page_says_freshness_drift_and_checks_above_its_first_card(client, owner, dataset):
    _stale(dataset, owner)
    _failed_check(dataset)
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    line = re.search(r'<p class="status-line" id="dataset-status">(.*?)</p>', page, re.S).group(1)
    assert page.index('id="dataset-status"') < page.index("<h2>Ownership</h2>")
    assert re.findall(r'data-kind="(\w[\w-]*)" href="#([\w-]+)"', line) == [
        ("freshness", "freshness"), ("data-quality", "data-quality")]
    assert "Freshness: Stale" in line and "1 failed check" in line


def test_a_healthy_dataset_says_nothing_is_wrong(client, owner, dataset):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert "No freshness SLO, schema drift, failed check or open change request." in page
