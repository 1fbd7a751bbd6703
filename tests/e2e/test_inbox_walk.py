"""The inbox in a real browser: carol lands on hers, sees that Analytics must answer a
change request, follows it and acknowledges; alice's inbox then says she may publish,
she follows it and publishes, and both inboxes are empty again. The navigation's count
follows along."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import Consumer, Dataset
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document, report_for
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "retail.checkout.order_placed"


@pytest.fixture
def waiting(settings, tmp_path):
    """Checkout (alice) proposes 2.0 of its contract; Analytics (carol) consumes the bound dataset."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice, carol = make_user("alice"), make_user("carol")
    checkout, analytics = make_team("Checkout", "checkout", alice), make_team("Analytics", "analytics", carol)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=analytics)
    version = record_version(BASE_DOCUMENT, by=alice)
    version.contract.bind(dataset, by=alice)
    document = proposed_document()
    return open_change_request(version.contract, document, by=alice, report=report_for(document),
                               summary="Every order now names its customer.")


def test_carol_answers_from_her_inbox_and_alice_publishes_from_hers(waiting, person):
    carol = person("carol")
    expect(carol).to_have_url(re.compile(r"/inbox/$"))
    expect(carol.locator("#nav-inbox .nav-count")).to_have_text("1")
    item = carol.locator('#inbox-acknowledge li.inbox-item')
    expect(item).to_contain_text(f"Analytics must answer change request #{waiting.pk}: {NAME} 2.0")
    expect(item.locator(".due")).to_contain_text("due ")
    item.locator("a").click()
    expect(carol).to_have_url(re.compile(rf"/change-requests/{waiting.pk}/$"))
    carol.click("#review-form button[value=acknowledge]")
    expect(carol.get_by_text("Analytics acknowledged the change.")).to_be_visible()
    carol.goto("/inbox/")
    expect(carol.locator("#inbox-empty")).to_contain_text("Nothing waits for you or your teams")
    expect(carol.locator("#nav-inbox .nav-count")).to_be_hidden()

    alice = person("alice")
    expect(alice.locator("#nav-inbox .nav-count")).to_have_text("1")
    publish = alice.locator("#inbox-publish li.inbox-item")
    expect(publish).to_contain_text(f"Checkout may publish {NAME} 2.0: change request #{waiting.pk} is approved")
    publish.locator("a").click()
    alice.click("#publish-form button[type=submit]")
    expect(alice.get_by_text(f"Published {NAME} 2.0.")).to_be_visible()
    alice.goto("/inbox/")
    expect(alice.locator("#inbox-empty")).to_be_visible()
