"""A team answers a breaking change with approve (acknowledge), migrating by a date, or
block (object) with a reason; each answer's effect on the gate, the clock and the record."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import PermissionDenied

from change_requests.models import (
    ChangeRequestAction,
    ChangeRequestError,
    Notification,
    ReviewStatus,
)
from change_requests.workflows import open_change_request, run_clock
from registry.models import AuditEvent, Consumer

from .conftest import proposed_document, report_for


@pytest.fixture
def start(db):
    with time_machine.travel(datetime(2026, 3, 2, 9, 0, tzinfo=UTC), tick=False) as traveller:
        yield traveller


@pytest.fixture
def two_teams_waiting(start, contract, dataset, owner, other_team, django_capture_on_commit_callbacks):
    """Analytics (carol) and Warehouse (dave) both consume the dataset: the request waits for both."""
    Consumer.objects.create(dataset=dataset, team=other_team)
    document = proposed_document()
    with django_capture_on_commit_callbacks(execute=True):
        return open_change_request(contract, document, by=owner, report=report_for(document))


def test_migrating_by_a_date_lets_the_request_publish(change_request, consumer_team, consumer, owner):
    change_request.migrate_by(consumer_team, by=consumer, date=date.today() + timedelta(days=30), comment="Q2 sprint")
    assert change_request.state == "approved"
    review = change_request.reviews.get(team=consumer_team)
    assert review.status == ReviewStatus.MIGRATING and review.migrating_by == date.today() + timedelta(days=30)
    event = AuditEvent.objects.get(action=ChangeRequestAction.MIGRATING)
    assert event.after["migrating_by"] == str(date.today() + timedelta(days=30))
    version = change_request.publish(by=owner)
    assert version.version == "2.0"


def test_migrating_needs_a_date_that_is_not_in_the_past(change_request, consumer_team, consumer):
    with pytest.raises(ChangeRequestError, match="in the past"):
        change_request.migrate_by(consumer_team, by=consumer, date=date.today() - timedelta(days=1))
    with pytest.raises(ChangeRequestError, match="needs a date"):
        change_request.migrate_by(consumer_team, by=consumer, date=None)


def test_a_block_keeps_the_request_from_publishing_and_reaches_the_governance_admins(
        change_request, consumer_team, consumer, owner, admin, django_capture_on_commit_callbacks):
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        change_request.block(consumer_team, by=consumer, comment="Our billing export reads customer_id as optional.")
    assert change_request.state == "open"
    with pytest.raises(ChangeRequestError, match="approved first"):
        change_request.publish(by=owner)
    blocked = [m for m in mail.outbox if m.subject.startswith("[") and "Blocked" in m.subject]
    assert admin.email in {m.to[0] for m in blocked}
    assert "billing export" in blocked[0].body


def test_a_block_needs_a_reason(change_request, consumer_team, consumer):
    with pytest.raises(ChangeRequestError, match="needs a comment saying what would break"):
        change_request.block(consumer_team, by=consumer, comment=" ")


def test_only_a_governance_admin_overrides_a_block_and_the_override_is_audited_and_shown(
        change_request, consumer_team, consumer, owner, admin, client, django_capture_on_commit_callbacks):
    change_request.block(consumer_team, by=consumer, comment="Not before the audit.")
    with pytest.raises(PermissionDenied):
        change_request.override_block(consumer_team, by=owner, reason="we need it")
    with pytest.raises(ChangeRequestError, match="needs a reason"):
        change_request.override_block(consumer_team, by=admin, reason="")
    with django_capture_on_commit_callbacks(execute=True):
        change_request.override_block(consumer_team, by=admin, reason="The audit moved; legal signed off.")
    assert change_request.state == "approved"
    event = AuditEvent.objects.get(action=ChangeRequestAction.BLOCK_OVERRIDDEN)
    assert event.after["reason"] == "The audit moved; legal signed off." and event.actor_label == "gina"
    assert Notification.objects.filter(event="block_overridden", recipient=consumer.email).exists()
    client.force_login(consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert "The audit moved; legal signed off." in page and "Overridden" in page


def test_a_team_that_withdraws_its_block_by_approving_lets_the_request_through(change_request, consumer_team, consumer):
    change_request.block(consumer_team, by=consumer, comment="Wait.")
    change_request.acknowledge(consumer_team, by=consumer)
    assert change_request.state == "approved"


def test_the_clock_neither_reminds_nor_escalates_a_migrating_team(
        two_teams_waiting, start, consumer_team, consumer, django_capture_on_commit_callbacks):
    two_teams_waiting.migrate_by(consumer_team, by=consumer, date=date(2026, 4, 30))
    start.move_to(two_teams_waiting.deadline_at + timedelta(seconds=1))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert run_clock().escalated == [two_teams_waiting.pk]
    event = AuditEvent.objects.get(action="change_request.escalated")
    assert event.after["waiting_for"] == ["warehouse"]  # analytics is migrating: not escalated
    assert all("analytics" not in m.body for m in mail.outbox if "Escalated" in m.subject)


def test_a_blocking_team_is_escalated_with_its_block(two_teams_waiting, start, consumer_team, consumer, other_team,
                                                     outsider, django_capture_on_commit_callbacks):
    two_teams_waiting.migrate_by(other_team, by=outsider, date=date(2026, 4, 30))
    two_teams_waiting.block(consumer_team, by=consumer, comment="Breaks billing.")
    start.move_to(two_teams_waiting.deadline_at + timedelta(seconds=1))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        run_clock()
    escalated = [m for m in mail.outbox if "Escalated" in m.subject]
    assert escalated and all("analytics (objected)" in m.body for m in escalated)


def test_the_api_answers_migrating_and_overrides_a_block(change_request, consumer_team, consumer, admin, client):
    client.force_login(consumer)
    url = f"/api/change-requests/{change_request.pk}/"
    answer = client.post(url + "migrating/", {"team": "analytics", "migrating_by": str(date.today() + timedelta(days=7))},
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["state"] == "approved"
    review = answer.json()["reviews"][0]
    assert review["status"] == "migrating" and review["migrating_by"] == str(date.today() + timedelta(days=7))
    client.force_login(admin)
    refused = client.post(url + "override-block/", {"team": "analytics", "reason": "x"}, content_type="application/json")
    assert refused.status_code == 409  # analytics does not block
