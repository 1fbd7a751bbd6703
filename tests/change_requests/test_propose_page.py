"""The propose page: a contract picker, the editor started from the latest version, and the
impact preview it calls as the owner types (change_request_preview), opening nothing."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from change_requests.models import ChangeRequest
from contracts_app.publishing import record_version
from tests.conftest import make_team

from .conftest import BASE_DOCUMENT, proposed_document
from .test_routing import reads

pytestmark = pytest.mark.django_db

PROPOSE = reverse("change-request-propose")
PREVIEW = reverse("change-request-preview")


@pytest.fixture
def others_contract(admin):
    """retail.stock.level, owned by Warehouse: not Checkout's to publish."""
    document = yaml.safe_load(yaml.safe_dump(BASE_DOCUMENT))
    document["schema"].update(name="retail.stock.level", subdomains=["stock"], entity="level", owner="warehouse")
    make_team("Warehouse", "warehouse")
    return record_version(document, by=admin).contract


def picker_options(page: str) -> list[str]:
    picker = page[page.index('<select name="contract"'):]
    picker = picker[:picker.index("</select>")]
    return [line.split(">", 1)[1].split("<", 1)[0] for line in picker.split("<option")[1:]]


def test_the_picker_offers_the_contracts_of_the_users_teams(client, contract, others_contract, owner):
    client.force_login(owner)
    assert picker_options(client.get(PROPOSE).content.decode()) == ["— a new contract —", contract.name]


def test_the_picker_offers_every_contract_to_a_governance_admin(client, contract, others_contract, admin):
    client.force_login(admin)
    assert picker_options(client.get(PROPOSE).content.decode()) == [
        "— a new contract —", contract.name, others_contract.name]


@pytest.mark.parametrize("by", ["id", "name"])
def test_the_url_names_the_contract_to_start_from_by_id_or_name(client, contract, owner, by):
    client.force_login(owner)
    page = client.get(PROPOSE, {"contract": contract.pk if by == "id" else contract.name}).content.decode()
    assert f'<option value="{contract.pk}" selected>{contract.name}</option>' in page
    assert "version: &#x27;1.0&#x27;" in page and "order_placed" in page


def test_the_propose_page_is_a_fixed_number_of_queries(client, contract, others_contract, owner,
                                                        django_assert_num_queries):
    client.force_login(owner)
    # 1. session, 2. user, 3. the contract named in the URL with its owner team, 4. its versions
    # (the latest), 5. alice's membership of that team (may she publish it?), 6. the picker's contracts
    with django_assert_num_queries(6):
        client.get(PROPOSE, {"contract": contract.name})


def test_someone_outside_the_owner_team_is_told_they_can_only_preview(client, contract, consumer):
    client.force_login(consumer)
    page = client.get(PROPOSE, {"contract": contract.name}).content.decode()
    assert 'id="cannot-publish"' in page and "Only a member of Checkout" in page


def test_the_editor_starts_from_the_latest_version_over_json(client, contract, owner):
    client.force_login(owner)
    body = client.get(reverse("change-request-start"), {"contract": contract.pk}).json()
    assert body["contract"] == contract.name and body["version"] == "1.0"
    assert yaml.safe_load(body["document"]) == BASE_DOCUMENT
    missing = client.get(reverse("change-request-start"), {"contract": "no.such.thing"})
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_the_preview_says_breaking_major_and_who_would_wait(client, contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "customer_id")
    client.force_login(owner)
    response = client.post(PREVIEW, {"document": yaml.safe_dump(proposed_document())})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["compatible"] is False
    assert (body["suggested_bump"], body["suggested_version"]) == ("major", "2.0")
    assert [t["team"] for t in body["affected"]] == ["analytics"]
    assert not ChangeRequest.objects.exists()


def test_the_preview_of_half_typed_yaml_says_why_it_cannot_answer(client, contract, owner):
    client.force_login(owner)
    response = client.post(PREVIEW, {"document": "schema: [unclosed"})
    assert response.status_code == 400 and response.json()["code"] == "bad_document"
    assert "This is not valid YAML" in response.json()["detail"]


def test_the_preview_lists_what_the_gates_refuse(client, contract, owner):
    document = proposed_document()
    del document["payload"]
    client.force_login(owner)
    response = client.post(PREVIEW, {"document": yaml.safe_dump(document)})
    assert response.status_code == 400 and response.json()["code"] == "gate_refused" and response.json()["errors"]


def test_a_document_for_another_contract_than_the_one_picked_is_refused(client, contract, others_contract, admin):
    client.force_login(admin)
    page = client.post(PROPOSE, {"contract": others_contract.pk,
                                 "document": yaml.safe_dump(proposed_document())}).content.decode()
    assert "schema.name is &#x27;retail.checkout.order_placed&#x27;, not retail.stock.level" in page
    assert not ChangeRequest.objects.exists()


def test_proposing_with_the_picker_opens_the_request(client, contract, owner, django_capture_on_commit_callbacks):
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PROPOSE, {"contract": contract.pk, "document": yaml.safe_dump(proposed_document())})
    assert response.url == ChangeRequest.objects.get().get_absolute_url()


def test_every_contract_page_links_to_the_propose_page(client, contract, consumer):
    client.force_login(consumer)
    page = client.get(contract.get_absolute_url()).content.decode()
    assert f'href="{PROPOSE}?contract={contract.name}">Propose a new version</a>' in page


@pytest.mark.parametrize("text", [
    "", "- a list", "schema: x", "schema: {name: retail.checkout.order_placed}",
    "schema: {name: retail.checkout.order_placed, version: [1], schema_type: event}",
    "schema: {name: retail.checkout.order_placed, version: 'not.a.version', schema_type: event}\npayload: {}",
    "\x00", "a: &a [*a]",
])
def test_whatever_is_typed_the_preview_answers_without_a_server_error(client, contract, owner, text):
    client.force_login(owner)
    response = client.post(PREVIEW, {"document": text})
    assert response.status_code in (200, 400)
    assert response.status_code == 200 or response.json()["detail"]  # a 400 says why


BROKEN = "schema:\n  name: retail.checkout.order_placed\n  version: [2.0\nmeta: {}\n"


def test_the_preview_of_broken_yaml_names_its_line_and_column(client, contract, owner):
    client.force_login(owner)
    answer = client.post(PREVIEW, {"document": BROKEN}).json()
    assert answer["code"] == "bad_document"
    assert answer["line"] == 4 and answer["column"] >= 1
    assert "line" not in answer["message"]  # the line is said once, by the editor


def test_submitting_broken_yaml_marks_the_line_in_the_editor_and_says_it_once(client, contract, owner):
    client.force_login(owner)
    page = client.post(PROPOSE, {"document": BROKEN}).content.decode()
    assert 'id="editor-error" role="alert" data-line="4"' in page
    assert '<ol class="gutter" aria-hidden="true">' in page
    marker = page[page.index('id="editor-error"'):]
    message = marker[marker.index('class="editor-error-message">') + len('class="editor-error-message">'):]
    message = message[:message.index("</span>")]
    assert message and page.count(message) == 1
    assert "Line 4, column" in page
