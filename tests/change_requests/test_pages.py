"""The change-request pages: list, review page (constant queries), actions, and proposing."""

from __future__ import annotations

import re

import pytest
import yaml
from django.urls import reverse

from change_requests.models import ChangeRequest
from change_requests.workflows import open_change_request
from contracts_app.models import Contract, ContractVersion
from registry.models import Consumer, Dataset
from tests.conftest import make_team, make_user

from .conftest import BASE_DOCUMENT, proposed_document, report_for

pytestmark = pytest.mark.django_db


def test_the_list_shows_open_requests_first_with_deadline_and_progress(client, change_request, consumer, owner):
    change_request.withdraw(by=owner)
    doc = proposed_document("3.0")
    newer = open_change_request(change_request.contract, doc, by=owner, report=report_for(doc))
    client.force_login(consumer)
    page = client.get(reverse("change-request-list")).content.decode()
    assert page.index(f"#{newer.pk}<") < page.index(f"#{change_request.pk}<")
    assert "0/1" in page
    assert newer.deadline_at.strftime("%Y-%m-%d %H:%M") in page


def _many_requests(count: int, owner, owner_team, teams):
    for i in range(count):
        contract = Contract.objects.create(name=f"retail.bulk.entity_{i}", domain="retail", subdomains=["bulk"],
                                           entity=f"entity_{i}", schema_type="event", owner_team=owner_team)
        dataset = Dataset.objects.create(namespace="bulk", name=f"t{i}", owner_team=owner_team, owner=owner)
        for team in teams:
            Consumer.objects.create(dataset=dataset, team=team)
        contract.bind(dataset, by=owner)
        doc = proposed_document()
        doc["schema"]["name"] = contract.name
        open_change_request(contract, doc, by=owner, report=report_for(doc))


@pytest.mark.parametrize("count", [1, 12])
def test_the_list_renders_in_a_constant_number_of_queries(client, consumer, owner, owner_team, consumer_team, other_team, count, django_assert_num_queries):
    _many_requests(count, owner, owner_team, [consumer_team, other_team])
    client.force_login(consumer)
    # 1 session, 2 user, 3-5 requests with contract, owner team, opener and progress counts,
    # a seek each for the open, approved and finished ones (no count)
    with django_assert_num_queries(5):
        response = client.get(reverse("change-request-list"))
    assert response.status_code == 200
    assert response.content.decode().count("0/2") == count


def test_a_deep_page_of_the_list_costs_the_queries_of_the_first(client, consumer, owner, owner_team, consumer_team,
                                                                 settings, django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 2
    _many_requests(10, owner, owner_team, [consumer_team])
    for request in ChangeRequest.objects.order_by("pk")[:3]:
        request.withdraw(by=owner)
        request.save()
    expected = [r.pk for r in ChangeRequest.objects.filter(state="open").order_by("deadline_at", "pk")] + [
        r.pk for r in ChangeRequest.objects.exclude(state="open").order_by("deadline_at", "pk")]
    client.force_login(consumer)
    seen, urls, url = [], [], reverse("change-request-list")
    while url:
        urls.append(url)
        body = client.get(url).content.decode()
        seen += [int(pk) for pk in re.findall(r"#(\d+)<", body)]
        found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', body)
        url = reverse("change-request-list") + "?" + found.group(1).replace("&amp;", "&") if found else None
    assert seen == expected and len(expected) == 10
    # 1 session, 2 user, 3 the open requests (two, and one more: the page is full)
    with django_assert_num_queries(3):
        client.get(urls[0])
    with django_assert_num_queries(3):  # the same from the token of the fourth open request
        client.get(urls[2])


def _wide_request(contract, owner, dataset, teams: int, changes: int) -> ChangeRequest:
    for i in range(teams):
        team = make_team(f"Team {i}", f"team-{i}", make_user(f"member{i}"))
        Consumer.objects.create(dataset=dataset, team=team)
    doc = proposed_document()
    doc["payload"]["properties"].update({f"field_{i}": {"type": "integer"} for i in range(changes)})
    report = report_for(doc)
    report["changes"] = [{"path": f"/payload/properties/field_{i}", "kind": "property_added", "breaks_backward": False,
                          "breaks_forward": True, "reason": f"field_{i} is new", "against": "1.0"} for i in range(changes)]
    return open_change_request(contract, doc, by=owner, report=report)


@pytest.mark.parametrize(("teams", "changes"), [(1, 1), (15, 40)])
def test_the_review_page_renders_in_a_constant_number_of_queries(client, contract, dataset, owner, consumer, other_team, outsider, teams, changes, django_assert_num_queries):
    request = _wide_request(contract, owner, dataset, teams, changes)
    dataset.register_consumer(other_team, by=outsider)  # late: shown, not required
    client.force_login(consumer)
    # 1 session, 2 user, 3 the request with contract, owner team, base version and opener,
    # 4 its team reviews with team and responder, 5 every team's assessment with its team,
    # 6 the viewer's team ids, 7 the bound datasets, 8 teams that registered after opening, 9 its audit history
    with django_assert_num_queries(9):
        response = client.get(request.get_absolute_url())
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count('class="change"') == changes
    assert "registered after this request opened" in page


def test_the_review_page_shows_diff_report_teams_and_the_consumers_actions(client, change_request, consumer):
    client.force_login(consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert "1.0 (published)" in page and "2.0 (proposed)" in page
    assert '<tr class="replace">' in page or '<tr class="insert">' in page
    assert "breaking" in page
    assert '<span class="tag bad">backward</span>' in page
    assert "&#x27;customer_id&#x27; is now required" in page
    assert 'data-team="analytics"' in page
    assert 'id="review-form"' in page
    assert 'id="publish-form"' not in page and 'id="withdraw-form"' not in page


def test_the_owner_sees_withdraw_then_publish_once_approved(client, change_request, owner, consumer, consumer_team):
    client.force_login(owner)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert 'id="withdraw-form"' in page and 'id="publish-form"' not in page and 'id="review-form"' not in page
    change_request.acknowledge(consumer_team, by=consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert 'id="publish-form"' in page


def test_an_outsider_sees_the_request_but_no_actions(client, change_request, outsider):
    client.force_login(outsider)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert 'id="actions"' not in page


def test_a_consumer_objects_and_then_acknowledges_on_the_page(client, change_request, consumer, consumer_team, outsider):
    client.force_login(consumer)
    url = reverse("change-request-review", args=[change_request.pk])
    response = client.post(url, {"team": consumer_team.pk, "comment": "Backfill first, please.", "decision": "object"}, follow=True)
    assert "Backfill first, please." in response.content.decode()
    client.force_login(outsider)
    assert "Analytics objects" in client.get(change_request.get_absolute_url()).content.decode()
    client.force_login(consumer)
    client.post(url, {"team": consumer_team.pk, "decision": "acknowledge"})
    change_request.refresh_from_db()
    assert change_request.state == "approved"


def test_a_consumer_cannot_answer_for_a_team_they_are_not_in(client, change_request, consumer_team, outsider):
    client.force_login(outsider)
    response = client.post(reverse("change-request-review", args=[change_request.pk]),
                           {"team": consumer_team.pk, "decision": "acknowledge"}, follow=True)
    assert "Choose one of your teams" in response.content.decode()
    assert change_request.reviews.get().status == "pending"


def test_the_owner_publishes_on_the_page(client, change_request, owner, consumer, consumer_team):
    change_request.acknowledge(consumer_team, by=consumer)
    client.force_login(owner)
    response = client.post(reverse("change-request-publish", args=[change_request.pk]), follow=True)
    assert "Published retail.checkout.order_placed 2.0" in response.content.decode()
    assert ContractVersion.objects.filter(contract=change_request.contract, version="2.0").exists()


def test_publishing_an_open_request_on_the_page_says_why_not(client, change_request, owner):
    client.force_login(owner)
    response = client.post(reverse("change-request-publish", args=[change_request.pk]), follow=True)
    assert "must be approved first" in response.content.decode()


def test_an_admin_rejects_on_the_page(client, change_request, admin):
    client.force_login(admin)
    client.post(reverse("change-request-reject", args=[change_request.pk]), {"comment": "Conflicts with finance."})
    change_request.refresh_from_db()
    assert (change_request.state, change_request.closing_comment) == ("rejected", "Conflicts with finance.")


def test_proposing_a_breaking_version_on_the_page_opens_a_request(client, contract, owner, django_capture_on_commit_callbacks):
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("change-request-propose"),
                               {"document": yaml.safe_dump(proposed_document()), "summary": "Orders name a customer."})
    request = ChangeRequest.objects.get()
    assert response.url == request.get_absolute_url()
    assert request.summary == "Orders name a customer."
    assert request.report["compatible"] is False


def test_proposing_a_compatible_version_publishes_it_at_once(client, contract, dataset, owner):
    # Under mode NONE every change is compatible, whichever checker is installed.
    Dataset.objects.filter(pk=dataset.pk).update(compatibility_mode="NONE")
    client.force_login(owner)
    doc = yaml.safe_load(yaml.safe_dump(BASE_DOCUMENT))
    doc["schema"]["version"] = "1.1"
    doc["schema"]["description"] = "An order was placed (described better)."
    response = client.post(reverse("change-request-propose"), {"document": yaml.safe_dump(doc)})
    assert not ChangeRequest.objects.exists()
    assert ContractVersion.objects.filter(contract=contract, version="1.1").exists()
    assert response.url == contract.get_absolute_url()


def test_proposing_is_for_the_owner_team(client, contract, consumer):
    client.force_login(consumer)
    response = client.post(reverse("change-request-propose"), {"document": yaml.safe_dump(proposed_document())})
    assert "Only a member of the contract&#x27;s owner team" in response.content.decode()
    assert not ChangeRequest.objects.exists()


def test_the_propose_page_starts_from_the_latest_version(client, contract, owner):
    client.force_login(owner)
    page = client.get(reverse("change-request-propose") + "?contract=retail.checkout.order_placed").content.decode()
    assert "order_placed" in page and "version: &#x27;1.0&#x27;" in page


def test_bad_yaml_is_refused_with_the_reason(client, contract, owner):
    client.force_login(owner)
    page = client.post(reverse("change-request-propose"), {"document": "schema: [unclosed"}).content.decode()
    assert 'id="editor-error" role="alert" data-line="2"' in page
    assert "while parsing a flow sequence did not find expected" in page


def test_the_dataset_page_lists_the_breaking_changes_waiting(client, change_request, dataset, consumer):
    client.force_login(consumer)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert 'id="dataset-change-requests"' in page
    assert f"#{change_request.pk} retail.checkout.order_placed 2.0" in page and "0/1 teams acknowledged" in page


def test_the_diff_keeps_the_contract_format_order(client, change_request, consumer):
    client.force_login(consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert page.index("<pre>schema:</pre>") < page.index("<pre>meta:</pre>") < page.index("<pre>payload:</pre>")


def test_governance_admins_see_requests_and_set_review_periods_in_the_admin(client, change_request, admin):
    client.force_login(admin)
    assert "retail.checkout.order_placed" in client.get("/admin/change_requests/changerequest/").content.decode()
    assert client.get(f"/admin/change_requests/changerequest/{change_request.pk}/change/").status_code == 200
    assert client.get("/admin/change_requests/reviewpolicy/add/").status_code == 200
    assert client.get("/admin/change_requests/notification/").status_code == 200


def test_the_review_page_shows_changes_a_budget_decided_apart_from_proven_and_assumed_ones(client, contract, owner, consumer):
    from registry_client.compat import check_compatibility

    doc = proposed_document("3.0")
    # a budget of a few steps: the checker proves the new requirement, then stops before the properties
    report = check_compatibility([BASE_DOCUMENT], doc, "BACKWARD", budget=5).to_dict()
    assert report["counts"]["decided_by_budget"] >= 1
    request = open_change_request(contract, doc, by=owner, report=report)
    client.force_login(consumer)
    page = client.get(request.get_absolute_url()).content.decode()
    assert 'id="proof-counts"' in page
    assert f'{report["counts"]["decided_by_budget"]} decided by a budget</span>' in page
    assert '<div class="budget"><span class="tag warn">decided by a budget</span>' in page
    assert "not decided within 5 steps: treated as breaking both ways" in page
