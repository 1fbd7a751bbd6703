"""The whole breaking-change workflow in a real browser, as the people in it do it.

An owner claims a dataset, a consumer team registers, the owner proposes a
breaking version, the consumer acknowledges on the review page (or first
objects), the owner publishes, and the new version is in the catalogue and is
what the thin client returns.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from playwright.sync_api import expect

from contracts_app.models import ContractVersion
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import ApiToken, Dataset
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "retail.checkout.order_placed"


@pytest.fixture
def world(settings, tmp_path):
    """alice in Checkout, carol in Analytics, an unowned dataset bound to a contract at 1.0."""
    store = str(tmp_path / "store")
    settings.CONTRACT_STORE = parse_contract_store(store, base_dir=tmp_path)
    alice, carol = make_user("alice"), make_user("carol")
    make_team("Checkout", "checkout", alice)
    make_team("Analytics", "analytics", carol)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders")
    version = record_version(BASE_DOCUMENT, by=alice)  # committed: its upload runs after commit
    version.contract.bind(dataset, by=alice)
    return {"dataset": dataset, "alice": alice, "carol": carol, "store": store}


def claim_and_consume(person, dataset):
    alice = person("alice")
    alice.goto(f"/datasets/{dataset.pk}/")
    alice.select_option("#claim-form select[name=team]", label="Checkout")
    alice.select_option("#claim-form select[name=owner]", label="alice")
    alice.click("#claim-form button[type=submit]")
    expect(alice.get_by_text("Checkout now owns")).to_be_visible()

    carol = person("carol")
    carol.goto(f"/datasets/{dataset.pk}/")
    carol.select_option("#consume-form select[name=team]", label="Analytics")
    carol.click("#consume-form button[type=submit]")
    expect(carol.get_by_text("Analytics is now a consumer")).to_be_visible()
    return alice, carol


def propose_breaking_version(alice) -> int:
    alice.goto("/change-requests/")
    alice.click("text=Publish a new contract version")
    alice.fill("textarea[name=document]", yaml.safe_dump(proposed_document(), sort_keys=False))
    alice.fill("textarea[name=summary]", "Every order now names its customer.")
    alice.click("#propose-form button[type=submit]")
    alice.wait_for_url(re.compile(r"/change-requests/\d+/$"))
    expect(alice.locator("#cr-state")).to_have_text("Open")
    expect(alice.locator('tr[data-team="analytics"] .review-status')).to_have_text("Waiting")
    expect(alice.locator("#publish-form")).to_have_count(0)
    return int(re.search(r"/change-requests/(\d+)/", alice.url).group(1))


def publish_and_check_everywhere(alice, live_server, store: str, request_id: int) -> None:
    alice.goto(f"/change-requests/{request_id}/")
    expect(alice.locator("#cr-state")).to_have_text("Approved")
    alice.click("#publish-form button[type=submit]")
    expect(alice.get_by_text(f"Published {NAME} 2.0.")).to_be_visible()
    expect(alice.locator("#cr-state")).to_have_text("Published")

    alice.goto(f"/contracts/{NAME}/")
    expect(alice.locator("#versions")).to_contain_text("2.0")
    expect(alice.locator("h1 .tag").first).to_have_text("2.0")

    from registry_client import Registry

    # Uploaded after commit exactly as a compatible publish is: the store's index lists it...
    assert ContractVersion.objects.get(contract__name=NAME, version="2.0").uploaded_at is not None
    from_store = Registry.from_url(store)
    assert from_store.resolve(NAME) == "2.0"
    assert from_store.get_schema(NAME)["payload"]["required"] == ["order_id", "customer_id"]
    # ...and a pipeline reading through the service's API gets it too.
    _, secret = ApiToken.issue("pipeline", user=make_user("pipeline"))
    over_http = Registry.from_url(live_server.url, token=secret)
    assert over_http.resolve(NAME) == "2.0"
    assert over_http.get_schema(NAME)["payload"]["required"] == ["order_id", "customer_id"]


def test_a_consumer_acknowledges_a_breaking_change_and_the_owner_publishes_it(world, person, live_server):
    alice, carol = claim_and_consume(person, world["dataset"])
    request_id = propose_breaking_version(alice)

    # The contract page says 2.0 waits for Analytics, and its link leads to the request's review
    carol.goto(f"/contracts/{NAME}/")
    expect(carol.locator('#waiting-versions li[data-version="2.0"]')).to_contain_text(
        "waiting for Analytics to acknowledge")
    carol.click(f"#waiting-versions >> text=change request #{request_id}")
    carol.wait_for_url(f"**/change-requests/{request_id}/")
    expect(carol.locator("#report")).to_contain_text("breaking")
    expect(carol.locator("#diff")).to_contain_text("customer_id")
    carol.click("#review-form button[value=acknowledge]")
    expect(carol.get_by_text("Analytics acknowledged the change.")).to_be_visible()
    expect(carol.locator("#cr-state")).to_have_text("Approved")
    expect(carol.locator('tr[data-team="analytics"] .review-status')).to_have_text("Acknowledged")

    # The catalogue now says 2.0 waits for its owner team to publish, linked to the request
    alice.goto("/contracts/")
    waiting = alice.locator(f'tr[data-contract="{NAME}"] li[data-waiting="awaiting_publication"]')
    expect(waiting).to_contain_text("to publish")
    expect(waiting.locator("a")).to_have_attribute("href", f"/change-requests/{request_id}/")

    publish_and_check_everywhere(alice, live_server, world["store"], request_id)
    expect(alice.locator("#waiting-versions")).to_have_count(0)


def test_the_review_page_shows_the_document_that_proves_the_break(world, person, live_server):
    alice, carol = claim_and_consume(person, world["dataset"])
    request_id = propose_breaking_version(alice)

    carol.goto(f"/change-requests/{request_id}/")
    row = carol.locator("#report tr.change.breaking", has_text="required_added")
    expect(row.locator(".witness .tag")).to_have_text("proven")
    expect(row.locator(".witness")).to_contain_text("valid under the published version and fails the proposed one")
    # an order written under 1.0 without a customer: valid then, refused by 2.0
    witness = json.loads(row.locator(".witness-document").inner_text())
    assert "order_id" in witness and "customer_id" not in witness


def test_an_objection_holds_the_change_until_the_consumer_acknowledges(world, person, live_server):
    alice, carol = claim_and_consume(person, world["dataset"])
    request_id = propose_breaking_version(alice)

    carol.goto(f"/change-requests/{request_id}/")
    carol.fill("#review-form textarea[name=comment]", "Our nightly backfill has no customer ids yet.")
    carol.click("#review-form button[value=object]")
    expect(carol.locator('tr[data-team="analytics"] .review-status')).to_have_text("Objected")

    alice.goto(f"/change-requests/{request_id}/")
    expect(alice.locator(".objection")).to_contain_text("Our nightly backfill has no customer ids yet.")
    expect(alice.locator("#cr-state")).to_have_text("Open")
    expect(alice.locator("#publish-form")).to_have_count(0)

    carol.fill("#review-form textarea[name=comment]", "Backfill done.")
    carol.click("#review-form button[value=acknowledge]")
    expect(carol.locator("#cr-state")).to_have_text("Approved")
    expect(carol.locator(".objection")).to_have_count(0)

    publish_and_check_everywhere(alice, live_server, world["store"], request_id)


def test_a_routed_request_waits_for_the_team_it_breaks_and_tells_the_other(world, person, live_server):
    """Analytics' job reads customer_id (the column the change makes required); Warehouse declares
    it reads only order_id. The request waits for Analytics alone and tells Warehouse."""
    from django.utils import timezone

    from registry.models import Team
    from registry.usage import ColumnRead, UsageSource

    dave = make_user("dave")
    make_team("Warehouse", "warehouse", dave)
    alice, carol = claim_and_consume(person, world["dataset"])
    ColumnRead.objects.create(dataset=world["dataset"], job_namespace="airflow", job_name="orders_by_customer",
                              column="customer_id", source=UsageSource.SQL, last_seen_at=timezone.now(),
                              token_team=Team.objects.get(slug="analytics"))

    warehouse = person("dave")
    warehouse.goto(f"/datasets/{world['dataset'].pk}/")
    warehouse.select_option("#consume-form select[name=team]", label="Warehouse")
    warehouse.fill("#consume-form input[name=columns]", "order_id")
    warehouse.click("#consume-form button[type=submit]")
    expect(warehouse.get_by_text("Warehouse is now a consumer")).to_be_visible()
    expect(warehouse.locator('li[data-team="warehouse"]')).to_contain_text("declared: order_id")

    request_id = propose_breaking_version(alice)
    expect(alice.locator('tr.assessment[data-team="analytics"]')).to_contain_text("must acknowledge")
    expect(alice.locator('tr.assessment[data-team="analytics"]')).to_contain_text("airflow/orders_by_customer")
    expect(alice.locator('tr.assessment[data-team="warehouse"]')).to_contain_text("not affected: told")
    expect(alice.locator('#teams tr[data-team="warehouse"]')).to_have_count(0)  # not asked

    warehouse.goto(f"/change-requests/{request_id}/")
    expect(warehouse.locator('tr.assessment[data-team="warehouse"]')).to_contain_text("not affected")
    expect(warehouse.locator("#review-form")).to_have_count(0)

    carol.goto(f"/change-requests/{request_id}/")
    carol.click("#review-form button[value=acknowledge]")
    expect(carol.locator("#cr-state")).to_have_text("Approved")

    publish_and_check_everywhere(alice, live_server, world["store"], request_id)
