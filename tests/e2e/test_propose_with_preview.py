"""Proposing from the UI in a real browser: the owner picks a contract, edits the latest
version's document, reads the impact preview before submitting, and lands on the request."""

from __future__ import annotations

import re

import pytest
import yaml
from playwright.sync_api import expect

from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from registry.models import Consumer, Dataset
from tests.conftest import make_team, make_user
from tests.publish.conftest import cell_count

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "lab.analytics.cell_count"


@pytest.fixture
def world(settings, tmp_path):
    """alice in Checkout owns lab.cell_counts, bound to lab.analytics.cell_count 1.0; Analytics consumes it."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    alice = make_user("alice")
    checkout = make_team("Checkout", "checkout", alice)
    analytics = make_team("Analytics", "analytics", make_user("carol"))
    dataset = Dataset.objects.create(namespace="postgres://lab-db:5432", name="lab.cell_counts",
                                     owner_team=checkout, owner=alice)
    Consumer.objects.create(dataset=dataset, team=analytics)
    contract = record_version(cell_count(), by=alice).contract
    contract.bind(dataset, by=alice)
    return {"contract": contract}


def csp_refusals(page) -> list[str]:
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    return refused


def without_viability(text: str) -> str:
    document = yaml.safe_load(text)
    document["schema"]["version"] = "2.0"
    document["columns"] = [c for c in document["columns"] if c["name"] != "viability"]
    return yaml.safe_dump(document, sort_keys=False)


def test_the_owner_proposes_a_breaking_version_with_the_preview(world, person):
    alice = person("alice")
    refused = csp_refusals(alice)
    alice.goto("/change-requests/new/")
    alice.select_option("#propose-form select[name=contract]", label=NAME)
    editor = alice.locator("textarea[name=document]")
    expect(editor).to_have_value(re.compile(r"name: viability"))
    expect(alice.locator("#preview-verdict")).to_contain_text("compatible")  # 1.0 against itself
    assert "contract=lab.analytics.cell_count" in alice.url

    editor.fill(without_viability(editor.input_value()))
    expect(alice.locator("#preview-verdict .tag")).to_have_text("breaking")
    expect(alice.locator("#preview-version")).to_contain_text("2.0")
    expect(alice.locator("#preview-version .tag")).to_have_text("major")
    expect(alice.locator('#preview-affected li[data-team="analytics"]')).to_be_visible()
    expect(alice.locator("#preview-outcome")).to_contain_text("waits for analytics")
    expect(alice.locator("#preview-changes")).to_contain_text("viability")

    alice.fill("textarea[name=summary]", "Viability moves to its own table.")
    alice.click("#propose-form button[type=submit]")
    alice.wait_for_url(re.compile(r"/change-requests/\d+/$"))
    expect(alice.locator("#cr-state")).to_have_text("Open")
    expect(alice.locator('tr[data-team="analytics"] .review-status')).to_have_text("Waiting")
    assert refused == []


def test_the_contract_page_links_to_the_propose_page_started_from_its_latest_version(world, person):
    alice = person("alice")
    alice.goto(f"/contracts/{NAME}/")
    alice.click("text=Propose a new version")
    alice.wait_for_url(re.compile(r"/change-requests/new/\?contract="))
    expect(alice.locator("#propose-form select[name=contract] option:checked")).to_have_text(NAME)
    expect(alice.locator("textarea[name=document]")).to_have_value(re.compile(r"version: '1.0'"))
    expect(alice.locator("#preview-verdict")).to_contain_text("compatible")


def test_a_half_typed_document_gets_a_reason_not_a_preview(world, person):
    alice = person("alice")
    alice.goto("/change-requests/new/")
    alice.fill("textarea[name=document]", "schema: [unclosed")
    expect(alice.locator("#preview-status")).to_contain_text("the YAML has an error")
    expect(alice.locator("#editor-error")).to_be_visible()
    expect(alice.locator("#preview-body")).to_be_hidden()


BROKEN = "schema:\n  name: lab.analytics.cell_count\n  version: [2.0\nmeta: {}\n"


def test_a_yaml_error_is_marked_at_its_line_in_the_editor_once(world, person):
    alice = person("alice")
    alice.goto("/change-requests/new/")
    alice.fill("textarea[name=document]", BROKEN)
    where = alice.locator("#editor-error .editor-error-where")
    expect(where).to_have_text(re.compile(r"Line 4, column \d+"))
    expect(alice.locator(".code-editor .gutter li")).to_have_count(5)  # four lines and the last, empty one
    expect(alice.locator(".code-editor .gutter li.error")).to_have_text("4")
    expect(alice.locator(".code-editor .error-band")).to_be_visible()
    expect(alice.locator("#preview-status")).to_contain_text("line 4 (marked in the editor)")
    # said once: the message is under the editor, not again in the preview
    message = alice.locator("#editor-error .editor-error-message").inner_text()
    assert alice.locator("body").inner_text().count(message) == 1
    where.click()
    assert alice.evaluate("document.activeElement.name") == "document"

    alice.click("#propose-form button[type=submit]")  # the server refuses it the same way
    expect(alice.locator("#editor-error .editor-error-where")).to_have_text(re.compile(r"Line 4, column \d+"))
    expect(alice.locator(".code-editor .gutter li.error")).to_have_text("4")
    assert alice.locator(".flash.error").count() == 0

    alice.fill("textarea[name=document]", "schema: {}\n")
    expect(alice.locator("#editor-error")).to_be_hidden()
    expect(alice.locator(".code-editor .gutter li.error")).to_have_count(0)
