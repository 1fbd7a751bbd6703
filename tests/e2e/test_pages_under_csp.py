"""The pages still work in a real Chromium under the Content-Security-Policy: nothing is
refused, the lineage graph keeps its styles and the Copy button its script."""

from __future__ import annotations

import pytest
from django.test import Client

from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import ApiToken, Consumer, Dataset
from tests.change_requests.conftest import BASE_DOCUMENT
from tests.conftest import make_team, make_user
from tests.lineage.conftest import post, run_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice = make_user("alice", is_staff=True, is_superuser=True)
    checkout = make_team("Checkout", "checkout", alice)
    dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=make_team("Analytics", "analytics"))
    record_version(BASE_DOCUMENT, by=alice).contract.bind(dataset, by=alice)
    secret = ApiToken.issue("airflow", team=checkout)[1]
    event = run_event("COMPLETE", inputs=["retail.public.orders"], outputs=["mart.orders"])
    event["inputs"][0]["namespace"] = dataset.namespace
    assert post(Client(), event, secret).status_code == 201
    return {"dataset": dataset}


def test_no_page_breaks_the_policy(world, person):
    page = person("alice")
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)

    for path in ("/", f"/datasets/{world['dataset'].pk}/", "/contracts/retail.checkout.order_placed/",
                 "/change-requests/", "/admin/", "/admin/registry/team/add/"):
        page.goto(path)
        page.wait_for_load_state("networkidle")

    page.goto(f"/datasets/{world['dataset'].pk}/")
    # The graph's <style nonce=…> applied: a dataset box is filled, not black.
    fill = page.eval_on_selector(".lineage-graph .dataset rect", "r => getComputedStyle(r).fill")
    assert fill == "rgb(238, 244, 255)"
    assert refused == []


def test_the_copy_button_works_from_the_static_script(world, person, live_server):
    page = person("alice")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto("/contracts/retail.checkout.order_placed/")
    page.click("button[data-copy-from=snippet]")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "retail.checkout.order_placed" in copied
