"""Small truths in a real browser: the claim form offers the chosen team's members as owner,
the owner team is not offered to consume its own dataset, and a depth-5 lineage graph keeps
readable labels, scrolling sideways inside its card."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from lineage.ingest import store_event
from registry.models import Dataset, Team
from tests.conftest import make_team, make_user
from tests.lineage.conftest import run_event

User = get_user_model()

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world():
    """alice is in Checkout (with bob) and Warehouse (with dave); retail.public.orders is unowned."""
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    make_team("Checkout", "checkout", alice, bob)
    make_team("Warehouse", "warehouse", alice, dave)
    return Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders")


def owners_offered(page) -> list[str]:
    return page.locator("#claim-form select[name=owner] option").all_inner_texts()


def test_the_claim_form_offers_the_members_of_the_chosen_team(world, person):
    alice = person("alice")
    alice.goto(f"/datasets/{world.pk}/")
    expect(alice.locator("#claim-form select[name=team] option:checked")).to_have_text("Checkout")
    assert owners_offered(alice) == ["alice", "bob"]

    alice.select_option("#claim-form select[name=team]", label="Warehouse")
    assert owners_offered(alice) == ["alice", "dave"]
    expect(alice.locator("#claim-form select[name=owner] option:checked")).to_have_text("alice")  # kept

    alice.select_option("#claim-form select[name=owner]", label="dave")
    alice.click("#claim-form button[type=submit]")
    expect(alice.get_by_text("Warehouse now owns")).to_be_visible()
    expect(alice.locator(".card", has_text="Ownership")).to_contain_text("owner: dave")
    # alice is in Warehouse, the owner team, and in Checkout: only Checkout may register as consumer
    assert alice.locator("#consume-form select[name=team] option").all_inner_texts() == ["Checkout"]


def test_the_owner_team_alone_is_not_offered_to_register_as_consumer(world, person):
    bob = User.objects.get(username="bob")  # in Checkout only
    world.claim(Team.objects.get(slug="checkout"), owner=bob, by=bob)
    page = person("bob")
    page.goto(f"/datasets/{world.pk}/")
    expect(page.locator("#owner-not-consumer")).to_contain_text("Checkout owns this dataset")
    expect(page.get_by_role("button", name="Register as consumer")).to_have_count(0)


@pytest.fixture
def deep_lineage(world):
    """Five jobs either way of retail.public.orders, every dataset with a long name."""
    own = {"namespace": world.namespace, "name": world.name}
    before = own
    for i in range(5):
        name = f"retail.sales.orders_upstream_stage_{i}"
        store_event(run_event("COMPLETE", job=f"load_{i}", inputs=[name], outputs=[before]))
        before = name
    after = own
    for i in range(5):
        name = f"retail.sales.orders_downstream_stage_{i}"
        store_event(run_event("COMPLETE", job=f"derive_{i}", inputs=[after], outputs=[name]))
        after = name
    return world


@pytest.mark.parametrize(("width", "direction"), [(1280, "both"), (1280, "downstream"), (390, "downstream")])
def test_a_depth_five_graph_keeps_readable_labels_and_scrolls_inside_its_card(deep_lineage, person, width, direction):
    alice = person("alice")
    alice.set_viewport_size({"width": width, "height": 900})
    alice.goto(f"/datasets/{deep_lineage.pk}/?depth=5&direction={direction}")
    box = alice.locator(".lineage-scroll")
    label = alice.locator(".lineage-graph .dataset text:not(.kind)", has_text="retail.sales.orders_downs…").first
    expect(label).to_be_visible()
    assert label.bounding_box()["height"] >= 12  # 12 px text, never scaled down
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")  # wider than its card: it scrolls
    card, view = alice.locator("#lineage").bounding_box(), box.bounding_box()
    assert card["x"] <= view["x"] and view["x"] + view["width"] <= card["x"] + card["width"]  # inside its card
    # the graph opens on the dataset the page is about
    start = alice.locator(".lineage-graph .start rect").bounding_box()
    assert view["x"] <= start["x"] and start["x"] + start["width"] <= view["x"] + view["width"]
