"""The contract pages and the review page in a real Chromium: a dataframe diff that speaks
columns, an event or api contract as tables of its properties, a review diff in hunks
that unfold in place, and none of them wider than the window, on a laptop or a phone."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from django.conf import settings as django_settings
from playwright.sync_api import expect
from registry_client.compat import check_compatibility

from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import Consumer, Dataset
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOMAINS = Path(django_settings.BASE_DIR) / "fixtures" / "contracts" / "domains" / "retail"
WIDTHS = (1280, 390)


def fixture_text(entity: str, version: str) -> str:
    return (DOMAINS / entity / f"v{version.replace('.', '_')}" / "schema.yaml").read_text()


def fixture_document(entity: str, version: str) -> dict:
    return yaml.safe_load(fixture_text(entity, version))


@pytest.fixture
def world(settings, tmp_path):
    """The demo's contracts: retail.sales.orders at 1.0 and 2.0 (a dataframe), the
    order_placed event and the refund api; alice (Checkout) proposes orders 3.0, which
    drops a column, and Analytics (carol) consumes the bound dataset."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice, carol = make_user("alice"), make_user("carol")
    checkout = make_team("Checkout", "checkout", alice)
    make_team("Payments", "payments", alice)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=make_team("Analytics", "analytics", carol))
    orders = record_version(fixture_document("sales/orders", "1.0"), by=alice).contract
    record_version(fixture_document("sales/orders", "2.0"), by=alice)
    for entity, version in (("checkout/order_placed", "2.0"), ("payments/refund_api", "1.0")):
        record_version(fixture_document(entity, version), by=alice, yaml_text=fixture_text(entity, version))
    orders.bind(dataset, by=alice)
    proposed = copy.deepcopy(fixture_document("sales/orders", "2.0"))
    proposed["schema"]["version"] = "3.0"
    proposed["columns"] = [c for c in proposed["columns"] if c["name"] != "coupon_code"]
    report = check_compatibility([fixture_document("sales/orders", "2.0")], proposed, "BACKWARD").to_dict()
    return {"request": open_change_request(orders, proposed, by=alice, report=report)}


def fits_the_window(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_dataframe_diff_speaks_columns_and_fits_the_window(world, person):
    page = person("carol")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/contracts/retail.sales.orders/diff/?from=1.0&to=2.0")
        lines = page.locator("#column-changes")
        expect(lines.locator('tr[data-column="total_amount"]')).to_contain_text(
            "column total_amount removed — consumers reading it break")
        expect(lines.locator('tr[data-column="channel"]')).to_contain_text(
            "column channel added, required — rows written before it lack it")
        expect(lines.locator('tr[data-column="status"]')).to_contain_text("status accepts returned")
        expect(lines.locator('tr[data-column="channel"] td.before')).to_have_text("— absent")
        expect(lines.locator('tr[data-column="total_amount"] td.after')).to_have_text("— absent")
        expect(page.locator("main")).not_to_contain_text("additionalProperties")
        expect(page.locator("main")).not_to_contain_text("9223372036854775807")
        assert fits_the_window(page), f"the diff page is wider than {width} px"
        # the table stays inside its card
        card, table = (page.locator(s).bounding_box() for s in ("#column-changes", "#column-changes table"))
        assert table["x"] + table["width"] <= card["x"] + card["width"] + 0.5


def test_an_event_diff_keeps_json_schema_paths_and_fits_the_window(world, person):
    before = fixture_document("checkout/order_placed", "2.0")
    after = copy.deepcopy(before)
    after["schema"]["version"] = "3.0"
    after["payload"]["properties"]["gift_message"] = {
        "type": "string", "maxLength": 500,
        "description": "A message printed on the packing slip, which can be long enough to need wrapping " * 3}
    record_version(after, by=make_checkout_member())
    page = person("carol")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/contracts/retail.checkout.order_placed/diff/?from=2.0&to=3.0")
        expect(page.locator("#changes")).to_contain_text("/payload/properties/gift_message")
        expect(page.locator("#changes td.before")).to_have_text("— absent")
        expect(page.locator("#verdicts")).to_contain_text("property_added")
        assert fits_the_window(page), f"the event diff page is wider than {width} px"


def make_checkout_member():
    from registry.models import Membership, Team

    user = make_user("frank")
    Membership.objects.create(team=Team.objects.get(slug="checkout"), user=user)
    return user


def test_the_review_diff_shows_hunks_that_unfold_in_place(world, person):
    page = person("carol")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(world["request"].get_absolute_url())
    diff = page.locator("#document-diff")
    expect(diff).to_contain_text("version: '3.0'")
    expect(diff).to_contain_text("name: coupon_code")
    hidden_before = diff.locator("tbody.folded").count()
    assert hidden_before >= 1
    far = diff.locator("td.old pre", has_text="name: total_amount_minor")
    expect(far).to_be_hidden()  # far from both changes

    fold = diff.locator("[data-unfold]").first
    rows = diff.locator(f"#{fold.get_attribute('data-unfold')} tr")
    folded = rows.count()
    expect(fold).to_have_text(f"Show {folded} unchanged lines")
    fold.click()
    expect(rows.first).to_be_visible()
    expect(far).to_be_visible()
    assert page.url.endswith(world["request"].get_absolute_url())  # in place, no reload
    assert diff.locator("tbody.fold").count() == hidden_before - 1


def test_the_review_page_gutters_are_narrow_and_it_fits_the_window(world, person):
    page = person("carol")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(world["request"].get_absolute_url())
        table = page.locator("#document-diff").bounding_box()
        gutter = page.locator("#document-diff td.no").first.bounding_box()
        assert 2 * gutter["width"] < 0.25 * table["width"], f"the line numbers take too much room at {width} px"
        assert fits_the_window(page), f"the review page is wider than {width} px"
    # Open and waiting: the deadline counts down.
    expect(page.locator("#countdown")).to_contain_text("Deadline")


def test_an_approved_request_shows_no_countdown(world, person):
    from registry.models import Team

    world["request"].acknowledge(Team.objects.get(slug="analytics"), by=world["request"].opened_by.__class__.objects.get(username="carol"))
    page = person("carol")
    page.goto(world["request"].get_absolute_url())
    expect(page.locator("#cr-state")).to_have_text("Approved")
    expect(page.locator("#countdown")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("Deadline")


def test_event_and_api_contracts_are_tables_of_their_properties(world, person):
    page = person("carol")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/contracts/retail.checkout.order_placed/")
    payload = page.locator(".schema-section", has=page.locator("h2", has_text="payload"))
    channel = payload.locator("tr", has=page.locator("td.name", has_text="channel"))
    expect(channel.locator("td").nth(1)).to_have_text("enum")
    expect(channel.locator("td").nth(2)).to_have_text("no")
    expect(channel.locator("td").nth(3)).to_have_text("one of web, app, store")
    # The order lines' fields sit indented beneath `lines` and its items.
    sku = payload.locator("tr", has=page.locator("td.name", has_text="sku"))
    expect(sku).to_have_attribute("data-depth", "2")
    lines_x = payload.locator("tr", has=page.locator("td.name", has_text="lines")).locator("code").first.bounding_box()["x"]
    assert sku.locator("code").first.bounding_box()["x"] > lines_x
    expect(sku.locator("td").nth(2)).to_have_text("yes")
    # The raw YAML is one click away.
    raw = payload.locator("details.raw-yaml pre")
    expect(raw).to_be_hidden()
    payload.locator("details.raw-yaml summary").click()
    expect(raw).to_be_visible()
    expect(raw).to_contain_text("additionalProperties: false")

    page.goto("/contracts/retail.payments.refund_api/")
    for section in ("request", "response", "callback refund_settled"):
        expect(page.locator(".schema-section h2", has_text=section)).to_have_count(1)
    amount = page.locator(".schema-section", has=page.locator("h2", has_text="request")).locator(
        "tr", has=page.locator("td.name", has_text="amount_minor"))
    expect(amount.locator("td").nth(3)).to_have_text("> 0")
    # in the order they were written, not the database's
    expect(page.locator(".schema-section").first.locator("td.name")).to_have_text(
        ["payment_id", "amount_minor", "reason", "note"])
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert fits_the_window(page), f"the api contract page is wider than {width} px"
