"""A failing dbt test opens an incident that the consumer sees on the dataset page
and in her team's inbox (which leads to it); the owner acknowledges it there, and
a passing run resolves it by itself, which empties the inbox of it."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from contracts_app.models import Contract, ContractVersion, DatasetBinding
from registry.models import ApiToken
from registry.usage import ColumnRead, UsageKind, UsageSource
from tests.incidents.conftest import ALL_PASS, failed, orders_document
from tests.incidents.conftest import test_event as dbt_test_event

pytestmark = pytest.mark.django_db(transaction=True)

@pytest.fixture
def contract(dataset, owner_team):
    c = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                entity="orders", schema_type="dataframe", owner_team=owner_team)
    ContractVersion.objects.create(contract=c, version="1.0", document=orders_document(), checksum="a")
    DatasetBinding.objects.create(dataset=dataset, contract=c)
    return c


def dataset_page_as(browser, live_server, username: str, dataset):
    """Log in straight to the dataset page (the list behind "/" is not what this test is about)."""
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(f"/login/?next=/datasets/{dataset.pk}/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: f"/datasets/{dataset.pk}/" in url)
    return page


def post_event(live_server, secret: str, event: dict) -> None:
    request = urllib.request.Request(f"{live_server.url}/api/v1/lineage", data=json.dumps(event).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {secret}"})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the test's own server
        assert response.status == 201, response.read()

def test_a_failing_dbt_test_opens_an_incident_the_owner_acknowledges_and_a_passing_run_resolves(
        browser, live_server, dataset, contract, owner_team, consumer_team, owner, consumer):

    now = datetime.now(UTC)
    ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name="orders_by_customer",
                              column="order_id", kind=UsageKind.DIRECT, source=UsageSource.SQL,
                              token_team=consumer_team, first_seen_at=now, last_seen_at=now, event_time=now)
    _, dbt = ApiToken.issue("dbt in CI", team=owner_team)
    post_event(live_server, dbt, dbt_test_event(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")],
                                            at=now - timedelta(minutes=5)))

    carol = dataset_page_as(browser, live_server, "carol", dataset)
    section = carol.locator("#contract-status")
    expect(section.locator("[data-contract-status]")).to_have_attribute("data-contract-status", "failing")
    incident = section.locator("article.incident").first
    expect(incident).to_have_attribute("data-state", "open")
    expect(incident).to_contain_text("not_null on order_id failed")
    expect(incident).to_contain_text("Analytics")  # told: its job reads order_id
    expect(incident.get_by_role("button", name="Acknowledge")).to_have_count(0)  # not hers to handle

    # Her team's inbox lists the upstream incident, with the path to its job, and leads back to it.
    carol.goto("/inbox/")
    item = carol.locator("li.inbox-item[data-kind=incident_upstream]")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("reaches Analytics's jobs: not_null on order_id failed")
    expect(item).to_contain_text("orders_by_customer")
    item.get_by_role("link").click()
    carol.wait_for_url(lambda url: f"/datasets/{dataset.pk}/" in url)
    expect(carol.locator("#contract-status article.incident").first).to_have_attribute("data-state", "open")

    alice = dataset_page_as(browser, live_server, "alice", dataset)
    alice.locator("#contract-status article.incident").first.get_by_role("button", name="Acknowledge").click()
    acknowledged = alice.locator("#contract-status article.incident").first
    expect(acknowledged).to_have_attribute("data-state", "acknowledged")
    expect(acknowledged).to_contain_text("acknowledged by alice")

    post_event(live_server, dbt, dbt_test_event(dataset, ALL_PASS, at=now))
    carol.reload()
    resolved = carol.locator("#contract-status article.incident").first
    expect(resolved).to_have_attribute("data-state", "resolved")
    expect(resolved).to_contain_text("resolved by itself: not_null on order_id passed")
    expect(carol.locator("[data-contract-status]")).to_have_attribute("data-contract-status", "passing")
    carol.goto("/inbox/")
    expect(carol.locator("li.inbox-item[data-kind=incident_upstream]")).to_have_count(0)
