"""The dataset page in a real Chromium: on a phone its tables scroll inside their own box
(the latest runs writing it, with their long run ids, most of all), and the owner team's
own job reading the dataset is tagged as the owner team's, never as an unregistered reader."""

from __future__ import annotations

import pytest

from lineage.ingest import store_event
from registry.usage import ColumnRead, UsageSource
from tests.lineage.conftest import run_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def written_and_read(dataset, owner_team, other_team):
    """retail.public.orders, written by three runs of a long-named job, read by Checkout's
    own reconciliation job and by Warehouse's export (Warehouse consumes nothing)."""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    for hour in (1, 2, 3):
        store_event(run_event("COMPLETE", job="checkout.load_orders_from_the_shop_database_every_hour",
                              outputs=[own], event_time=f"2026-11-30T0{hour}:00:00.000Z"))
    for job, team in (("checkout/reconcile_payments", owner_team), ("warehouse/nightly_export", other_team)):
        namespace, name = job.split("/")
        ColumnRead.objects.create(dataset=dataset, job_namespace=namespace, job_name=name, column="order_id",
                                  source=UsageSource.COLUMN_LINEAGE, token_team=team)
    return dataset


def test_on_a_phone_the_latest_runs_scroll_inside_their_box(written_and_read, person):
    page = person("alice")
    page.set_viewport_size(PHONE)
    page.goto(written_and_read.get_absolute_url())
    runs = page.locator("#lineage .table-scroll", has=page.get_by_text("Run", exact=True))
    assert runs.locator("tbody tr").count() == 3
    assert runs.evaluate("box => box.scrollWidth > box.clientWidth"), "the runs table fits: nothing to scroll"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_owner_teams_own_job_is_tagged_as_the_owner_teams(written_and_read, person):
    page = person("alice")
    page.goto(written_and_read.get_absolute_url())
    own = page.locator("#readers tr[data-job='checkout/reconcile_payments']")
    assert own.locator(".tag").all_inner_texts() == ["owner team"]
    export = page.locator("#readers tr[data-job='warehouse/nightly_export']")
    assert export.locator(".tag").all_inner_texts() == ["unregistered reader"]
    usage = page.locator("#column-usage tbody tr")
    assert [row.locator(".tag").all_inner_texts() for row in usage.all()] == [
        ["indirect", "owner team"], ["indirect", "unregistered"]]
