"""The change-request REST API: the same actions as the review page, with bearer tokens."""

from __future__ import annotations

import pytest

from change_requests.models import ChangeRequest
from contracts_app.models import ContractVersion
from registry.models import ApiToken
from tests.conftest import bearer as bearer_header

from .conftest import proposed_document

pytestmark = pytest.mark.django_db


def bearer(user=None, team=None) -> dict:
    """Bearer headers with a new token for `user` or `team`."""
    _, secret = ApiToken.issue("test", user=user, team=team)
    return bearer_header(secret)


def test_the_owner_proposes_a_breaking_version_and_gets_the_request(client, contract, owner):
    response = client.post("/api/change-requests/", {"document": proposed_document(), "summary": "Customer ids."},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["state"], body["proposed_version"], body["base_version"]) == ("open", "2.0", "1.0")
    assert body["reviews"] == [{"team": "analytics", "status": "pending", "comment": "", "responded_by": "",
                                "responded_at": None, "migrating_by": None, "block_overridden_at": None,
                                "block_override_reason": ""}]
    assert body["summary"] == "Customer ids."
    assert body["report"]["compatible"] is False
    assert body["page"].endswith(f"/change-requests/{body['id']}/")


def test_a_second_proposal_gets_409_naming_the_open_request(client, change_request, owner):
    response = client.post("/api/change-requests/", {"document": proposed_document("3.0")},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 409
    assert f"#{change_request.pk}" in response.json()["detail"]


def test_proposing_the_same_document_again_points_at_its_request(client, change_request, owner):
    response = client.post("/api/change-requests/", {"document": proposed_document()},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 200
    assert response.json()["id"] == change_request.pk


def test_a_consumer_team_token_acknowledges_and_the_owner_publishes(client, change_request, consumer_team, owner):
    url = f"/api/change-requests/{change_request.pk}/"
    response = client.post(url + "acknowledge/", {"team": "analytics"}, content_type="application/json",
                           **bearer(team=consumer_team))
    assert response.status_code == 200
    assert response.json()["state"] == "approved"
    response = client.post(url + "publish/", content_type="application/json", **bearer(owner))
    assert response.status_code == 200
    assert response.json()["state"] == "published"
    assert ContractVersion.objects.filter(version="2.0").exists()


def test_acknowledging_for_another_team_is_forbidden(client, change_request, outsider):
    response = client.post(f"/api/change-requests/{change_request.pk}/acknowledge/", {"team": "analytics"},
                           content_type="application/json", **bearer(outsider))
    assert response.status_code == 403
    assert "Only a member of team analytics" in response.json()["detail"]


def test_an_objection_without_a_comment_is_refused(client, change_request, consumer):
    response = client.post(f"/api/change-requests/{change_request.pk}/object/", {"team": "analytics"},
                           content_type="application/json", **bearer(consumer))
    assert response.status_code == 409
    assert "needs a comment" in response.json()["detail"]


def test_publishing_an_open_request_is_a_conflict(client, change_request, owner):
    response = client.post(f"/api/change-requests/{change_request.pk}/publish/", content_type="application/json",
                           **bearer(owner))
    assert response.status_code == 409
    assert "approved first" in response.json()["detail"]


def test_withdraw_and_reject_through_the_api(client, change_request, owner, admin, contract):
    response = client.post(f"/api/change-requests/{change_request.pk}/reject/", {"comment": "no"},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 403
    response = client.post(f"/api/change-requests/{change_request.pk}/withdraw/", {"comment": "later"},
                           content_type="application/json", **bearer(owner))
    assert response.json()["state"] == "withdrawn"


def test_the_list_filters_by_state_and_contract(client, change_request, consumer):
    headers = bearer(consumer)
    assert [r["id"] for r in client.get("/api/change-requests/?state=open", **headers).json()["results"]] == [change_request.pk]
    assert client.get("/api/change-requests/?state=published", **headers).json()["results"] == []
    assert len(client.get("/api/change-requests/?contract=retail.checkout.order_placed", **headers).json()["results"]) == 1
    response = client.get("/api/change-requests/?state=bogus", **headers)
    assert response.status_code == 400 and "bogus" in str(response.json())


def test_an_unknown_request_is_404(client, consumer):
    response = client.get("/api/change-requests/999999/", **bearer(consumer))
    assert response.status_code == 404 and "#999999" in response.json()["detail"]


def test_anonymous_callers_are_told_how_to_authenticate(client, change_request):
    assert client.get("/api/change-requests/").status_code == 401
    assert ChangeRequest.objects.count() == 1


def test_an_outsider_cannot_publish_through_the_api(client, contract, outsider):
    response = client.post("/api/change-requests/", {"document": proposed_document()},
                           content_type="application/json", **bearer(outsider))
    assert response.status_code == 403
    assert "owner team (checkout)" in response.json()["detail"]
    assert not ChangeRequest.objects.exists()


def test_a_compatible_version_is_published_at_once_through_the_api(client, contract, dataset, owner):
    from registry.models import Dataset

    # A version must pass the contract's mode (FULL for new contracts) and its datasets': set both to NONE.
    Dataset.objects.filter(pk=dataset.pk).update(compatibility_mode="NONE")
    contract.set_mode("NONE", by=owner)
    response = client.post("/api/change-requests/", {"document": proposed_document("2.0")},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 200
    assert response.json()["status"] == "published"
    assert not ChangeRequest.objects.exists()


def test_a_document_that_fails_the_gate_is_a_400_listing_the_problems(client, contract, owner):
    document = proposed_document()
    document["schema"]["schema_type"] = "table"
    response = client.post("/api/change-requests/", {"document": document},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 400
    assert any("schema_type" in e for e in response.json()["errors"])


@pytest.mark.parametrize("count", [1, 10])
def test_the_list_takes_a_constant_number_of_queries(client, consumer, owner, owner_team, consumer_team, other_team, count, django_assert_num_queries):
    from .test_pages import _many_requests

    _many_requests(count, owner, owner_team, [consumer_team, other_team])
    client.force_login(consumer)
    # 1 session, 2 user, 3-5 the page of requests (contract, owner team, base version, progress),
    # a seek each for the open, approved and finished ones (no count), 6 their team reviews with team
    with django_assert_num_queries(6):
        response = client.get("/api/change-requests/")
    assert len(response.json()["results"]) == count
    assert all(len(r["reviews"]) == 2 for r in response.json()["results"])


def test_the_author_cannot_acknowledge_through_the_api_for_a_team_they_belong_to(client, change_request, consumer_team, owner):
    consumer_team.memberships.create(user=owner)
    response = client.post(f"/api/change-requests/{change_request.pk}/acknowledge/", {"team": "analytics"},
                           content_type="application/json", **bearer(owner))
    assert response.status_code == 403
    assert "You opened this request" in response.json()["detail"]


def test_a_governance_admin_acknowledges_on_a_teams_behalf_through_the_api(client, change_request, admin):
    response = client.post(f"/api/change-requests/{change_request.pk}/acknowledge/",
                           {"team": "analytics", "on_behalf": True, "comment": "Signed off by e-mail."},
                           content_type="application/json", **bearer(admin))
    assert response.status_code == 200, response.json()
    assert response.json()["state"] == "approved"
