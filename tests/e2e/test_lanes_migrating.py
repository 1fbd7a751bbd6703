"""A consumer answers "migrating by" a date, the owner publishes 3.0 while the consumer's
pipeline keeps resolving 2.x, then the consumer moves and the lane page shows it gone."""

from __future__ import annotations

import copy
from datetime import date, timedelta

import pytest
from playwright.sync_api import expect
from registry_client import Registry
from registry_client.backends import HttpBackend

from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import ApiToken, Consumer, Dataset
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document, report_for
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "retail.checkout.order_placed"


@pytest.fixture
def world(settings, tmp_path):
    """alice's Checkout owns the dataset and its contract at 2.0; carol's Analytics consumes it and
    its pipeline reads the contract with a team token; 3.0 (customer_id required) waits for Analytics."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice, carol = make_user("alice"), make_user("carol")
    checkout = make_team("Checkout", "checkout", alice)
    analytics = make_team("Analytics", "analytics", carol)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=analytics)
    two = copy.deepcopy(BASE_DOCUMENT)
    two["schema"]["version"] = "2.0"
    contract = record_version(two, by=alice).contract
    contract.bind(dataset, by=alice)
    three = proposed_document("3.0")
    request = open_change_request(contract, three, by=alice, report=report_for(three))
    _, secret = ApiToken.issue("analytics nightly orders", team=analytics)
    return {"request": request, "secret": secret}


def log_in(browser, live_server, username: str):
    """A logged-in page, with room for a busy machine (60 s a step)."""
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    return page


def test_a_migrating_consumer_stays_on_2x_until_it_moves(world, browser, live_server):
    request, secret = world["request"], world["secret"]

    def pipeline(selector: str) -> str:  # a fresh process of carol's pipeline, as a nightly run is
        registry = Registry(HttpBackend(live_server.url, secret))
        return registry.get_schema(NAME, selector)["schema"]["version"]

    assert pipeline("2.x") == "2.0"

    carol = log_in(browser, live_server, "carol")
    carol.goto(f"/change-requests/{request.pk}/")
    by = (date.today() + timedelta(days=30)).isoformat()
    carol.fill("#review-form input[name=migrating_by]", by)
    carol.click("#migrating-button")
    expect(carol.get_by_text(f"Analytics is migrating by {by}")).to_be_visible()
    expect(carol.locator("tr[data-team=analytics] .review-status")).to_contain_text(f"Migrating by {by}")

    alice = log_in(browser, live_server, "alice")
    alice.goto(f"/change-requests/{request.pk}/")
    alice.click("#publish-form button")
    expect(alice.get_by_text("Published retail.checkout.order_placed 3.0")).to_be_visible()

    assert pipeline("latest") == "3.0"
    assert pipeline("2.x") == "2.0"  # the old lane stays served: carol's pipeline keeps resolving it

    alice.goto(f"/contracts/{NAME}/lanes/")
    old = alice.locator("#lane-2")
    expect(old.locator(".lane-summary")).to_have_text("1 team, 1 job still on 2.x")
    expect(old.locator(".lane-readers")).to_contain_text("Analytics")
    expect(alice.locator("#lane-3 .lane-summary")).to_have_text("0 teams, 0 jobs on 3.x")

    assert pipeline("3.x") == "3.0"  # carol's pipeline moves to the new lane
    alice.reload()
    expect(old.locator(".lane-summary")).to_have_text("0 teams, 0 jobs still on 2.x")
    expect(old.locator(".lane-readers")).to_have_count(0)
    expect(alice.locator("#lane-3 .lane-readers")).to_contain_text("Analytics")
