"""Every transition of a change request, and who may make it."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from change_requests.models import ChangeRequest, ChangeRequestError, NotRequiredTeam, ReviewStatus
from change_requests.workflows import open_change_request
from contracts_app.models import ContractVersion
from registry.models import AuditEvent, Consumer
from tests.conftest import make_team, make_user

from .conftest import proposed_document, report_for

pytestmark = pytest.mark.django_db


def test_a_breaking_proposal_opens_a_request_waiting_for_the_consumer_team(change_request, consumer_team):
    assert change_request.state == "open"
    assert change_request.proposed_version == "2.0"
    assert change_request.base_version.version == "1.0"
    assert change_request.report["compatible"] is False
    assert [r.team for r in change_request.reviews.all()] == [consumer_team]
    assert change_request.reviews.get().status == ReviewStatus.PENDING


def test_outsider_cannot_propose_a_change(contract, outsider):
    doc = proposed_document()
    with pytest.raises(PermissionDenied, match="owner team checkout"):
        open_change_request(contract, doc, by=outsider, report=report_for(doc))
    assert not ChangeRequest.objects.exists()


def test_proposing_an_already_published_version_is_refused(contract, owner):
    doc = proposed_document(version="1.0")
    with pytest.raises(ChangeRequestError, match="already published"):
        open_change_request(contract, doc, by=owner, report=report_for(doc))


def test_the_required_teams_are_frozen_when_the_request_opens(change_request, dataset, other_team, outsider):
    dataset.register_consumer(other_team, by=outsider)
    assert [r.team.slug for r in change_request.reviews.all()] == ["analytics"]
    with pytest.raises(NotRequiredTeam, match="not among the teams this request waits for"):
        change_request.acknowledge(other_team, by=outsider)


def test_the_owner_team_is_not_asked_to_acknowledge_its_own_change(contract, dataset, owner_team, owner):
    Consumer.objects.create(dataset=dataset, team=owner_team)
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    assert [r.team.slug for r in request.reviews.all()] == ["analytics"]


def test_a_request_without_consumer_teams_is_approved_at_once(contract, consumer_team, owner):
    Consumer.objects.filter(team=consumer_team).delete()
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    assert request.state == "approved"


def test_consumer_acknowledges_for_their_team_and_the_request_is_approved(change_request, consumer_team, consumer):
    change_request.acknowledge(consumer_team, by=consumer)
    change_request.refresh_from_db()
    assert change_request.state == "approved"
    review = change_request.reviews.get()
    assert (review.status, review.responded_by) == (ReviewStatus.ACKNOWLEDGED, consumer)


def test_the_request_waits_until_every_required_team_acknowledged(contract, dataset, owner, consumer_team, consumer, other_team, outsider):
    dataset.register_consumer(other_team, by=outsider)
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    request.acknowledge(consumer_team, by=consumer)
    assert request.state == "open"
    request.acknowledge(other_team, by=outsider)
    assert request.state == "approved"


def test_consumer_cannot_acknowledge_for_another_team(change_request, consumer_team, outsider, owner):
    for person in (outsider, owner):
        with pytest.raises(PermissionDenied, match="Only a member of team analytics"):
            change_request.acknowledge(consumer_team, by=person)
    assert change_request.reviews.get().status == ReviewStatus.PENDING


def test_an_objection_needs_a_comment_and_is_withdrawn_by_acknowledging(change_request, consumer_team, consumer):
    with pytest.raises(ChangeRequestError, match="needs a comment"):
        change_request.object(consumer_team, by=consumer, comment="  ")
    change_request.object(consumer_team, by=consumer, comment="Our nightly backfill has no customer ids.")
    review = change_request.reviews.get()
    assert (review.status, review.comment) == (ReviewStatus.OBJECTED, "Our nightly backfill has no customer ids.")
    assert change_request.state == "open"
    change_request.acknowledge(consumer_team, by=consumer)
    assert change_request.reviews.get().status == ReviewStatus.ACKNOWLEDGED
    assert change_request.state == "approved"


def test_outsider_cannot_object_for_a_team(change_request, consumer_team, outsider):
    with pytest.raises(PermissionDenied):
        change_request.object(consumer_team, by=outsider, comment="no")


def test_owner_publishes_an_approved_request_and_the_version_is_recorded(change_request, consumer_team, consumer, teammate):
    change_request.acknowledge(consumer_team, by=consumer)
    version = change_request.publish(by=teammate)
    assert change_request.state == "published"
    assert version.version == "2.0"
    assert ContractVersion.objects.get(contract=change_request.contract, version="2.0").document == change_request.proposed_document
    change_request.refresh_from_db()
    assert change_request.published_version == version


def test_an_open_request_cannot_be_published(change_request, owner):
    with pytest.raises(ChangeRequestError, match="approved first"):
        change_request.publish(by=owner)
    assert not ContractVersion.objects.filter(version="2.0").exists()


def test_only_the_owner_team_publishes(change_request, consumer_team, consumer, admin, outsider):
    change_request.acknowledge(consumer_team, by=consumer)
    for person in (consumer, outsider, admin):
        with pytest.raises(PermissionDenied, match="owner team"):
            change_request.publish(by=person)
    change_request.refresh_from_db()
    assert change_request.state == "approved"
    assert not ContractVersion.objects.filter(version="2.0").exists()


@pytest.mark.parametrize("acknowledged_first", [False, True])
def test_owner_withdraws_an_open_or_approved_request(change_request, consumer_team, consumer, owner, acknowledged_first):
    if acknowledged_first:
        change_request.acknowledge(consumer_team, by=consumer)
    change_request.withdraw(by=owner, comment="We will add the column as optional instead.")
    assert change_request.state == "withdrawn"
    change_request.refresh_from_db()
    assert change_request.closing_comment == "We will add the column as optional instead."


def test_consumer_cannot_withdraw(change_request, consumer):
    with pytest.raises(PermissionDenied, match="owner team"):
        change_request.withdraw(by=consumer)


@pytest.mark.parametrize("acknowledged_first", [False, True])
def test_governance_admin_rejects_an_open_or_approved_request(change_request, consumer_team, consumer, admin, acknowledged_first):
    if acknowledged_first:
        change_request.acknowledge(consumer_team, by=consumer)
    with pytest.raises(ChangeRequestError, match="needs a comment"):
        change_request.reject(by=admin, comment="")
    change_request.reject(by=admin, comment="Breaks the finance export.")
    assert change_request.state == "rejected"


def test_owner_cannot_reject(change_request, owner):
    with pytest.raises(PermissionDenied, match="governance admin"):
        change_request.reject(by=owner, comment="no")


def test_a_finished_request_accepts_no_further_transition(change_request, owner, admin, consumer_team, consumer):
    change_request.withdraw(by=owner)
    with pytest.raises(ChangeRequestError, match="already withdrawn"):
        change_request.reject(by=admin, comment="late")
    with pytest.raises(ChangeRequestError, match="already withdrawn"):
        change_request.publish(by=owner)
    with pytest.raises(ChangeRequestError, match="teams answer only while it is open"):
        change_request.acknowledge(consumer_team, by=consumer)


def test_admin_approves_an_escalated_request_over_a_silent_team(change_request, admin, owner):
    with pytest.raises(ChangeRequestError, match="cannot be approved over silent teams now"):
        change_request.approve_over_silence(by=admin)
    ChangeRequest.objects.filter(pk=change_request.pk).update(escalated_at=change_request.deadline_at)
    change_request.refresh_from_db()
    with pytest.raises(PermissionDenied):
        change_request.approve_over_silence(by=owner)
    change_request.approve_over_silence(by=admin, comment="Analytics has not answered in two weeks.")
    assert change_request.state == "approved"
    event = AuditEvent.objects.filter(action="change_request.approved").get()
    assert event.after["silent_teams"] == ["analytics"]


def test_an_objection_still_blocks_approval_after_escalation(change_request, admin, consumer_team, consumer):
    change_request.object(consumer_team, by=consumer, comment="This breaks our dashboard.")
    ChangeRequest.objects.filter(pk=change_request.pk).update(escalated_at=change_request.deadline_at)
    change_request.refresh_from_db()
    with pytest.raises(ChangeRequestError):
        change_request.approve_over_silence(by=admin)


def test_a_team_token_acts_for_its_team(change_request, consumer_team):
    from registry.auth import TeamPrincipal
    from registry.models import ApiToken

    token, _ = ApiToken.issue("analytics ci", team=consumer_team)
    change_request.acknowledge(consumer_team, by=TeamPrincipal(token))
    review = change_request.reviews.get()
    assert review.responded_by is None and review.responded_by_label.startswith("token:analytics ci")


def test_a_member_of_several_teams_answers_for_each_separately(contract, dataset, owner, consumer_team, consumer, other_team):
    carol_in_both = make_user("erin")
    for team in (consumer_team, other_team):
        team.memberships.create(user=carol_in_both)
    dataset.register_consumer(other_team, by=carol_in_both)
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    request.acknowledge(consumer_team, by=carol_in_both)
    assert request.state == "open"
    request.acknowledge(other_team, by=carol_in_both)
    assert request.state == "approved"
    assert make_team  # the shared helpers stay importable for other tests


def test_the_author_cannot_acknowledge_for_a_consumer_team_they_also_belong_to(change_request, consumer_team, owner):
    consumer_team.memberships.create(user=owner)
    with pytest.raises(PermissionDenied, match="You opened this request, so you cannot acknowledge it for team analytics"):
        change_request.acknowledge(consumer_team, by=owner)
    change_request.refresh_from_db()
    assert change_request.state == "open" and change_request.reviews.get().status == ReviewStatus.PENDING


def test_the_author_cannot_acknowledge_even_as_a_governance_admin_in_the_team(contract, dataset, consumer_team, admin):
    contract.owner_team.memberships.create(user=admin)
    consumer_team.memberships.create(user=admin)
    doc = proposed_document()
    request = open_change_request(contract, doc, by=admin, report=report_for(doc))
    with pytest.raises(PermissionDenied, match="You opened this request"):
        request.acknowledge(consumer_team, by=admin)
    with pytest.raises(PermissionDenied, match="another governance admin must acknowledge it"):
        request.acknowledge(consumer_team, by=admin, comment="Team away.", on_behalf=True)
    assert request.reviews.get().status == ReviewStatus.PENDING


def test_the_author_may_still_object_for_a_team_they_belong_to(change_request, consumer_team, owner):
    consumer_team.memberships.create(user=owner)
    change_request.object(consumer_team, by=owner, comment="Analytics' nightly job has no customer ids yet.")
    assert change_request.reviews.get().status == ReviewStatus.OBJECTED


def test_a_governance_admin_acknowledges_on_a_teams_behalf_and_the_audit_log_says_so(change_request, consumer_team, admin):
    change_request.acknowledge(consumer_team, by=admin, comment="Analytics signed off by e-mail; they are offline.",
                               on_behalf=True)
    change_request.refresh_from_db()
    assert change_request.state == "approved"
    review = change_request.reviews.get()
    assert (review.status, review.responded_by) == (ReviewStatus.ACKNOWLEDGED, admin)
    row = AuditEvent.objects.get(action="change_request.acknowledged")
    assert (row.actor, row.after["team"]) == (admin, "analytics")
    assert row.after["override"] == "a governance admin acknowledged on the team's behalf"


def test_acknowledging_on_a_teams_behalf_needs_a_governance_admin_and_a_reason(change_request, consumer_team, consumer, admin):
    with pytest.raises(PermissionDenied, match="Only a governance admin can acknowledge on a team's behalf"):
        change_request.acknowledge(consumer_team, by=consumer, comment="me", on_behalf=True)
    with pytest.raises(ChangeRequestError, match="needs a comment saying why"):
        change_request.acknowledge(consumer_team, by=admin, on_behalf=True)
    assert change_request.reviews.get().status == ReviewStatus.PENDING
    assert not AuditEvent.objects.filter(action="change_request.acknowledged").exists()
