"""Adopting from dbt in a real browser: a governance admin uploads a dbt project's manifest and
catalog (a dry run first), then the owner team reviews a drafted contract and publishes it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from contracts_app.models import ContractVersion, DatasetBinding
from registry.env import parse_contract_store
from registry.models import Dataset
from tests.adopting.conftest import CATALOG, MANIFEST, NAMESPACE
from tests.conftest import make_team, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    make_user("gina", is_staff=True, is_superuser=True)
    make_team("Sales", "sales", make_user("alice"))
    make_team("Finance", "finance", make_user("carol"))
    make_team("Platform", "platform", make_user("bob"))


def test_an_admin_imports_dbt_and_the_owner_team_reviews_and_publishes_a_draft(world, person):
    admin = person("gina")
    admin.goto("/drafts/")
    admin.click("#import-dbt-link")
    admin.set_input_files("input[name=manifest]", str(MANIFEST))
    admin.set_input_files("input[name=catalog]", str(CATALOG))
    admin.fill("input[name=namespace]", NAMESPACE)
    admin.click("#dbt-import-form button[type=submit]")
    expect(admin.locator("#dbt-import-report h2")).to_contain_text("Dry run: nothing was stored")
    expect(admin.locator("#dbt-import-changes")).to_contain_text("created   draft wh.sales.orders 1.0")
    assert not Dataset.objects.exists()

    admin.set_input_files("input[name=manifest]", str(MANIFEST))
    admin.set_input_files("input[name=catalog]", str(CATALOG))
    admin.fill("input[name=namespace]", NAMESPACE)
    admin.uncheck("input[name=dry_run]")
    admin.click("#dbt-import-form button[type=submit]")
    expect(admin.locator("#dbt-import-report h2")).to_contain_text("Imported")
    expect(admin.locator("#dbt-import-errors")).to_contain_text("postgres type 'jsonb' has no canonical dtype")

    outsider = person("carol")  # Finance: not the owner of wh.sales.orders
    outsider.goto("/drafts/?team=sales")
    outsider.click("text=wh.sales.orders")
    expect(outsider.locator("#cannot-approve")).to_be_visible()

    owner = person("alice")
    owner.goto("/drafts/")
    expect(owner.locator("#queue-sales")).to_contain_text("wh.sales.orders")
    owner.click("#queue-sales >> text=wh.sales.orders")
    expect(owner.locator("#draft-gate")).to_contain_text("passes")
    expect(owner.locator("#impact-verdict")).to_contain_text("a new contract")
    owner.click("text=Approve and publish")
    owner.wait_for_url("**/contracts/wh.sales.orders/")
    assert ContractVersion.objects.filter(contract__name="wh.sales.orders", version="1.0").exists()
    assert DatasetBinding.objects.get(dataset__name="wh.sales.orders").contract.name == "wh.sales.orders"
