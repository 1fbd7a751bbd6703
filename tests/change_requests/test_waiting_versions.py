"""The contract page and the catalogue show a version that waits on someone: a change
request waiting for the consumer teams, an approved one waiting for its owner team to
publish, a draft waiting for review; each with a link to the page where it is resolved,
and without a query per contract (the request and the drafts come as annotations)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from change_requests.workflows import open_change_request
from contracts_app.models import Contract, Draft
from contracts_app.publishing import record_version
from registry.models import Consumer, Dataset

from .conftest import BASE_DOCUMENT, proposed_document, report_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(client, consumer):
    client.force_login(consumer)
    return client


def _waiting(page: str) -> list[tuple[str, str]]:
    """The (state, version) of each waiting version the page lists, in order."""
    return re.findall(r'<li data-waiting="([a-z_]+)" data-version="([^"]+)">', page)


def _pending_draft(contract: Contract, owner_team, version: str = "1.1") -> Draft:
    document = {**BASE_DOCUMENT, "schema": {**BASE_DOCUMENT["schema"], "version": version}}
    return Draft.objects.create(contract_name=contract.name, version=version, schema_type=contract.schema_type,
                                owner_team=owner_team, document=document, checksum=f"c{version}",
                                origin="person")


def test_the_contract_page_shows_the_version_waiting_for_acknowledgement_and_links_to_its_review(
        browser, change_request, django_assert_num_queries):
    # 1: session, 2: user, 3: the contract with its owner team, its unfinished request and its pending drafts
    # (subqueries), 4: its versions with their publishers, 5: its bound datasets with their consumer counts,
    # 6: is the reader in the owner team, 7: the audit rows of the mode's weakenings,
    # 8: its contract status per bound dataset (the status section), 9: its lanes and 10: the readers
    # seen on them (the lanes section, which reuses the page's versions and bindings; with one lane
    # there is nothing for lineage to tell apart, so no reader job is asked about)
    with django_assert_num_queries(10):
        page = browser.get(reverse("contract-detail", args=[change_request.contract.name])).content.decode()
    assert _waiting(page) == [("awaiting_acknowledgement", "2.0")]
    link = f'<a href="/change-requests/{change_request.pk}/">change request #{change_request.pk}</a>'
    assert "waiting for Analytics to acknowledge (0 of 1 team acknowledged)" in page
    assert f"deadline {change_request.deadline_at:%Y-%m-%d %H:%M} UTC: {link}" in page
    # the versions table names it too, above the published 1.0, as not published yet
    assert re.search(r'<tr class="waiting-row" data-waiting="awaiting_acknowledgement"><td>2\.0</td>.*'
                     rf'not published: {re.escape(link)}', page)


def test_an_objection_is_what_the_waiting_version_says_first(browser, change_request, consumer, consumer_team):
    change_request.object(consumer_team, by=consumer, comment="Our loader reads customer_id as optional.")
    page = browser.get(reverse("contract-detail", args=[change_request.contract.name])).content.decode()
    assert "Analytics objected; 0 of 1 team acknowledged" in page


def test_an_approved_request_waits_for_its_owner_team_to_publish(browser, change_request, consumer, consumer_team):
    change_request.acknowledge(consumer_team, by=consumer)
    change_request.refresh_from_db()
    assert change_request.state == "approved"
    page = browser.get(reverse("contract-detail", args=[change_request.contract.name])).content.decode()
    assert _waiting(page) == [("awaiting_publication", "2.0")]
    assert (f'approved; waiting for Checkout to publish: <a href="/change-requests/{change_request.pk}/">'
            f"change request #{change_request.pk}</a>") in page
    assert "deadline" not in page.split('id="waiting-versions"')[1].split("</ul>")[0]


def test_nothing_waits_once_the_request_is_published_or_withdrawn(browser, change_request, consumer, consumer_team,
                                                                   owner):
    change_request.acknowledge(consumer_team, by=consumer)
    change_request.refresh_from_db()
    change_request.publish(by=owner)
    page = browser.get(reverse("contract-detail", args=[change_request.contract.name])).content.decode()
    assert _waiting(page) == [] and 'id="waiting-versions"' not in page and "waiting-row" not in page
    doc = proposed_document("3.0")
    newer = open_change_request(change_request.contract, doc, by=owner, report=report_for(doc))
    newer.withdraw(by=owner)
    page = browser.get(reverse("contract-detail", args=[change_request.contract.name])).content.decode()
    assert _waiting(page) == []


def test_a_draft_waiting_for_review_is_shown_with_a_link_to_the_draft(browser, contract, owner_team):
    draft = _pending_draft(contract, owner_team)
    page = browser.get(reverse("contract-detail", args=[contract.name])).content.decode()
    assert _waiting(page) == [("awaiting_review", "1.1")]
    assert f'drafted; waiting for Checkout to review it: <a href="/drafts/{draft.pk}/">draft 1.1</a>' in page
    Draft.objects.filter(pk=draft.pk).update(state="discarded")
    assert _waiting(browser.get(reverse("contract-detail", args=[contract.name])).content.decode()) == []


def test_a_contract_page_with_nothing_waiting_shows_no_waiting_card(browser, contract):
    page = browser.get(reverse("contract-detail", args=[contract.name])).content.decode()
    assert 'id="waiting-heading"' not in page and _waiting(page) == []


def _contracts_waiting(count: int, owner, owner_team, consumer_team) -> list[Contract]:
    """`count` event contracts with 1.0 published, each bound to a dataset Analytics consumes and
    with 2.0 waiting for Analytics in a change request."""
    contracts = []
    for i in range(count):
        document = {**BASE_DOCUMENT, "schema": {**BASE_DOCUMENT["schema"], "name": f"retail.bulk.entity_{i}",
                                                "subdomains": ["bulk"], "entity": f"entity_{i}"}}
        contract = record_version(document, by=owner).contract
        dataset = Dataset.objects.create(namespace="bulk", name=f"t{i}", owner_team=owner_team, owner=owner)
        Consumer.objects.create(dataset=dataset, team=consumer_team)
        contract.bind(dataset, by=owner)
        proposed = proposed_document()
        proposed["schema"].update(name=contract.name, subdomains=["bulk"], entity=f"entity_{i}")
        open_change_request(contract, proposed, by=owner, report=report_for(proposed))
        contracts.append(contract)
    return contracts


@pytest.mark.parametrize("count", [1, 12])
def test_the_catalogue_shows_each_waiting_version_in_a_constant_number_of_queries(
        browser, owner, owner_team, consumer_team, count, django_assert_num_queries):
    _contracts_waiting(count, owner, owner_team, consumer_team)
    # 1: session, 2: user, 3: a page of contracts with owner team, unfinished request and pending drafts
    # (subqueries), 4: their versions, 5: the lanes with a deprecation or sunset date (one query for the
    # page's contracts), 6: the total (counted up to 1,000), 7: the owner filter's teams
    with django_assert_num_queries(7):
        page = browser.get(reverse("contract-catalogue")).content.decode()
    assert _waiting(page) == [("awaiting_acknowledgement", "2.0")] * count
    assert page.count("waiting for Analytics to acknowledge (0 of 1 team acknowledged)") == count


def test_the_catalogue_row_links_each_waiting_version_where_it_is_resolved(
        browser, change_request, consumer, consumer_team, owner_team, owner):
    contract = change_request.contract
    draft = _pending_draft(contract, owner_team, version="2.1")
    # a second contract, in the same domain, with nothing waiting
    record_version({**BASE_DOCUMENT, "schema": {**BASE_DOCUMENT["schema"], "name": "retail.checkout.order_paid",
                                                "entity": "order_paid"}}, by=owner)
    page = browser.get(reverse("contract-browse", args=["retail"])).content.decode()
    row = page.split(f'<tr data-contract="{contract.name}">')[1].split("</tr>")[0]
    assert _waiting(row) == [("awaiting_acknowledgement", "2.0"), ("awaiting_review", "2.1")]
    assert f'href="/change-requests/{change_request.pk}/"' in row and f'href="/drafts/{draft.pk}/"' in row
    quiet = page.split('<tr data-contract="retail.checkout.order_paid">')[1].split("</tr>")[0]
    assert _waiting(quiet) == []
    change_request.acknowledge(consumer_team, by=consumer)
    row = browser.get(reverse("contract-catalogue")).content.decode() \
        .split(f'<tr data-contract="{contract.name}">')[1].split("</tr>")[0]
    assert _waiting(row)[0] == ("awaiting_publication", "2.0") and "waiting for Checkout to publish" in row
