"""A governance admin at work in the Django admin, in a real Chromium under the
Content-Security-Policy: an ownership transfer through the admin action with a reason,
and a change request rejected through its transition (issue 16, point 11)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from change_requests.models import ChangeRequest
from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import AuditEvent, Consumer, Dataset
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document, report_for
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(settings, tmp_path):
    """gina the governance admin; orders owned by Checkout (alice), consumed by Analytics (carol),
    bound to a contract with a breaking 2.0 waiting for Analytics; dave in Warehouse."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    make_user("gina", is_staff=True, is_superuser=True)
    alice, carol, dave = make_user("alice"), make_user("carol"), make_user("dave")
    checkout = make_team("Checkout", "checkout", alice)
    analytics = make_team("Analytics", "analytics", carol)
    make_team("Warehouse", "warehouse", dave)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=analytics)
    contract = record_version(BASE_DOCUMENT, by=alice).contract
    contract.bind(dataset, by=alice)
    document = proposed_document()
    request = open_change_request(contract, document, by=alice, report=report_for(document),
                                  summary="Every order now names its customer.")
    return {"dataset": dataset, "request": request}


def watch_policy(page) -> list[str]:
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    return refused


def test_a_governance_admin_transfers_a_dataset_with_a_reason(world, person):
    dataset = world["dataset"]
    gina = person("gina")
    refused = watch_policy(gina)

    gina.goto("/admin/registry/dataset/")
    expect(gina.locator("#site-name")).to_have_text("Dataset registry administration")
    gina.check(f'input[name="_selected_action"][value="{dataset.pk}"]')
    gina.select_option('select[name="action"]', label="Transfer the selected datasets to another owner")
    gina.click('button[name="index"]')

    expect(gina.locator("#ownership-datasets")).to_contain_text("(owned by team checkout, alice)")
    gina.select_option("#ownership-form select[name=team]", label="Warehouse")
    gina.select_option("#ownership-form select[name=owner]", label="dave")
    gina.fill("#ownership-form textarea[name=reason]", "The warehouse team took over the order pipeline.")
    gina.click('#ownership-form input[name="apply"]')

    expect(gina.locator(".messagelist .success")).to_have_text(
        f"1 dataset now owned by team warehouse: {dataset}.")
    expect(gina.locator("#result_list")).to_contain_text("Warehouse")
    dataset.refresh_from_db()
    assert (dataset.owner_team.slug, dataset.owner.username) == ("warehouse", "dave")
    event = AuditEvent.objects.get(action="dataset.owner_changed", object_id=str(dataset.pk))
    assert event.actor_label == "gina"
    assert event.after == {"owner_team": "warehouse", "owner": "dave",
                           "reason": "The warehouse team took over the order pipeline."}

    # The audit log shows the change, filtered by the dataset.
    gina.goto("/admin/registry/auditevent/")
    gina.click(f'details[data-filter-title="dataset"] a[href*="dataset={dataset.pk}"]')
    expect(gina.locator("#result_list")).to_contain_text("dataset.owner_changed")
    assert refused == []


def test_a_governance_admin_rejects_a_change_request_from_the_admin(world, person):
    request = world["request"]
    gina = person("gina")
    refused = watch_policy(gina)

    gina.goto(f"/admin/change_requests/changerequest/{request.pk}/change/")
    expect(gina.locator("#cr-admin-state")).to_have_text("Open")
    expect(gina.locator(".cr-admin-step")).to_have_text(["Reject"])
    expect(gina.locator("#reviews-group")).to_contain_text("Analytics")
    gina.click('.cr-admin-step[data-transition="_reject"]')

    # The reason is required before the form goes (the server refuses one without it too).
    gina.click('#cr-step-form input[type="submit"]')
    expect(gina.locator("#cr-step-form textarea[name=comment]:invalid")).to_have_count(1)
    assert ChangeRequest.objects.get(pk=request.pk).state == "open"
    gina.fill("#cr-step-form textarea[name=comment]", "Customers may opt out of giving their id.")
    gina.click('#cr-step-form input[type="submit"]')

    expect(gina.locator(".messagelist .success")).to_have_text(f"Change request #{request.pk} is now rejected.")
    expect(gina.locator("#cr-admin-state")).to_have_text("Rejected")
    expect(gina.locator("#cr-admin-no-step")).to_be_visible()
    request = ChangeRequest.objects.get(pk=request.pk)
    assert request.state == "rejected" and request.closing_comment == "Customers may opt out of giving their id."
    event = AuditEvent.objects.get(action="change_request.rejected")
    assert event.actor_label == "gina" and event.after["comment"] == "Customers may opt out of giving their id."

    # The product's own review page says so too.
    gina.goto(f"/change-requests/{request.pk}/")
    expect(gina.locator("#cr-state")).to_have_text("Rejected")
    assert refused == []
