"""The lists and the chrome in a real Chromium: the dataset list's badges lead to the
section that explains them, the catalogue finds a contract by a column's name, the
navigation folds into a menu on a phone, and no list is wider than the window, at
1,280 px or at 390 px."""

from __future__ import annotations

import pytest

from contracts_app.models import DatasetBinding
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import Consumer, Dataset
from tests.conftest import make_team, make_user
from tests.publish.conftest import cell_count, order_placed, refund_api
from tests.registry import troubles

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture
def world(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice = make_user("alice")
    checkout = make_team("Checkout", "checkout", alice)
    analytics = make_team("Analytics", "analytics")
    warehouse = make_team("Warehouse", "warehouse")
    contracts = [record_version(document, by=alice).contract for document in (cell_count(), order_placed(), refund_api())]
    orders = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                    owner_team=checkout, owner=alice, description="One row per order placed.")
    Consumer.objects.create(dataset=orders, team=analytics)
    DatasetBinding.objects.create(dataset=orders, contract=contracts[0])
    troubles.drift(orders, findings=2)
    troubles.quality(orders, failed=1)
    troubles.open_request(contracts[0])
    troubles.read(orders, "warehouse/nightly_export", warehouse)
    # Long names and namespaces, the kind that used to push a page wider than a phone.
    for i in range(12):
        Dataset.objects.create(namespace=f"s3://a-rather-long-bucket-name-for-the-lake-{i}",
                               name=f"bioprocess/bioreactor_run_summaries_by_vessel_and_day_{i}",
                               owner_team=checkout if i % 2 else None)
    return {"orders": orders}


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_badges_show_and_lead_to_the_section_that_explains_them(world, person):
    page = person("alice")
    page.goto("/")
    row = page.locator("tr", has=page.locator("a", has_text="retail.public.orders"))
    badges = row.locator(".badges a.tag")
    # The bound contract declares checks none of which has reported a final result yet:
    # not passing, so its status is a badge too.
    assert badges.all_inner_texts() == ["1 unregistered reader", "schema drift", "1 open change request",
                                        "1 failed check", "contract unverified"]
    for badge in badges.all():
        assert badge.is_visible()

    row.get_by_text("schema drift").click()
    page.wait_for_url(f"**/datasets/{world['orders'].pk}/#schema-drift")
    assert page.locator("#schema-drift").is_visible()
    page.go_back()
    page.get_by_text("1 unregistered reader").click()
    page.wait_for_url("**#readers")
    assert page.locator("#readers").get_by_text("nightly_export").is_visible()
    page.go_back()
    page.get_by_text("contract unverified").click()
    page.wait_for_url("**#contract-status")
    assert page.locator("#contract-status").is_visible()


def test_the_dataset_list_is_one_table_with_the_same_columns_for_every_status(world, person):
    page = person("alice")
    page.goto("/")
    assert page.locator("main table").count() == 1
    assert page.locator("main table th").all_inner_texts() == [
        "Dataset", "Status", "Owner", "Consumers", "Mode", "Age", "Deadline"]


def test_the_catalogue_finds_a_contract_by_a_column_name_and_filters_by_kind(world, person):
    page = person("alice")
    page.goto("/contracts/")
    assert page.locator("tr[data-contract]").count() == 3
    page.fill("input[name=q]", "viability")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**/contracts/?q=viability*")
    rows = page.locator("tr[data-contract]")
    assert rows.count() == 1 and rows.first.get_attribute("data-contract") == "lab.analytics.cell_count"
    assert rows.first.locator(".matched").inner_text() == "Matching column: viability"

    page.fill("input[name=q]", "")
    page.select_option("select[name=kind]", "event")
    page.click("#catalogue-filters button[type=submit]")
    page.wait_for_url("**kind=event*")
    assert page.locator("tr[data-contract]").evaluate_all("rows => rows.map(r => r.dataset.contract)") == [
        "retail.checkout.order_placed"]
    assert page.locator("#catalogue-count").inner_text() == "1 contract"


def test_on_a_phone_the_navigation_is_a_menu(world, person):
    page = person("alice")
    page.set_viewport_size(PHONE)
    page.goto("/")
    toggle = page.locator("header .nav-toggle")
    nav = page.locator("#site-nav")
    assert toggle.is_visible() and not nav.is_visible()

    toggle.click()
    assert nav.is_visible() and toggle.get_attribute("aria-expanded") == "true"
    assert _fits(page)
    page.keyboard.press("Escape")
    assert not nav.is_visible() and toggle.get_attribute("aria-expanded") == "false"

    toggle.click()
    nav.get_by_role("link", name="Contracts").click()
    page.wait_for_url("**/contracts/")
    assert not page.locator("#site-nav").is_visible()  # a new page starts folded

    page.set_viewport_size(DESKTOP)
    assert page.locator("#site-nav").is_visible() and not page.locator("header .nav-toggle").is_visible()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_lists_are_no_wider_than_the_window(world, person, viewport):
    page = person("alice")
    page.set_viewport_size(viewport)
    for path in ("/", "/?q=bioreactor", "/contracts/", "/contracts/?q=viability", "/contracts/browse/retail"):
        page.goto(path)
        assert _fits(page), f"{path} is wider than {viewport['width']} px"
    page.context.clear_cookies()
    page.goto("/login/")
    assert _fits(page), f"/login/ is wider than {viewport['width']} px"


def test_the_title_brand_and_favicon(world, browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.goto("/login/")
    assert page.title() == "Log in · Dataset registry"
    assert page.locator("header .brand").inner_text() == "Dataset registry"
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert page.request.get(icon).headers["content-type"].startswith("image/svg+xml")
    ico = page.request.get("/favicon.ico")  # followed to the SVG
    assert ico.ok and ico.url.endswith("/static/favicon.svg")
    context.close()
