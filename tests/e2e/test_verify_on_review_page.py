"""A consumer team presses Verify on the review page and reads the error its job would get."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from change_requests.workflows import open_change_request
from registry.env import parse_contract_store
from registry.models import Consumer, Dataset
from tests.change_requests.sql_world import job_ran, proposed, publish_orders, report_of
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def dropped_amount(settings, tmp_path):
    """alice's Checkout proposes dropping `amount` from retail.public.orders; carol's Analytics
    has a job summing it, and lineage saw its compiled SQL."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice, carol = make_user("alice"), make_user("carol")
    checkout, analytics = make_team("Checkout", "checkout", alice), make_team("Analytics", "analytics", carol)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=analytics)
    publish_orders(dataset, alice)
    job_ran(analytics, "daily_revenue", "select date_trunc('day', o.placed_at) as day, sum(o.amount) as revenue "
                                        "from retail.public.orders o group by 1")
    document = proposed(drop=("amount",))
    return open_change_request(dataset.contract_binding.contract, document, by=alice, report=report_of(document))


def logged_in(browser, live_server, username: str):
    """A page with `username`'s session (logging in through the form is other tests' business)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(60_000)  # the machine running the suite may be busy
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                          "url": live_server.url}])
    return context.new_page()


def test_shows_a_teams_verified_error_on_the_review_page(dropped_amount, browser, live_server):
    carol = logged_in(browser, live_server, "carol")
    carol.goto(f"/change-requests/{dropped_amount.pk}/")
    row = carol.locator('#routing tr.assessment[data-team="analytics"]')
    expect(row.locator(".verdict-kind")).to_have_text("assumed affected")
    expect(row.locator(".assumed-why")).to_contain_text("not verified")

    carol.click("#verify-form button[type=submit]")
    expect(carol.get_by_text("Verified: 1 consumer job(s) EXPLAINed on a scratch schema")).to_be_visible()
    row = carol.locator('#routing tr.assessment[data-team="analytics"]')
    expect(row.locator(".verdict-kind")).to_contain_text("proven broken")
    expect(row.locator(".verdict-kind")).to_contain_text("by EXPLAIN")
    expect(row.locator(".verified-error")).to_contain_text("analytics/daily_revenue would fail with:")
    expect(row.locator(".verified-error pre")).to_have_text("column o.amount does not exist (SQLSTATE 42703)")
    expect(carol.locator(".verification-summary")).to_contain_text("1 consumer job EXPLAINed")
