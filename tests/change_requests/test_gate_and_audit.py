"""The publish gate opens requests, and a full request leaves a complete audit trail."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.core.exceptions import PermissionDenied
from django.core.management import call_command

from change_requests.models import ChangeRequest
from contracts_app.models import ContractVersion
from contracts_app.publishing import BREAKING, publish_document
from registry.models import AuditEvent

from .conftest import proposed_document

pytestmark = pytest.mark.django_db


def test_a_breaking_publish_opens_a_request_instead_of_publishing(contract, owner, consumer):
    outcome = publish_document(proposed_document(), by=owner)
    assert outcome.status == BREAKING
    request = outcome.change_request
    assert request.state == "open" and request.report == outcome.report.to_dict()
    assert f"Change request #{request.pk} is open and waits for analytics" in outcome.message
    assert not ContractVersion.objects.filter(version="2.0").exists()


def test_a_dry_run_opens_nothing(contract, owner):
    outcome = publish_document(proposed_document(), by=owner, dry_run=True)
    assert outcome.status == BREAKING and outcome.change_request is None
    assert not ChangeRequest.objects.exists()


def test_the_publish_command_opens_a_request_and_exits_2(contract, tmp_path: Path, capsys):
    folder = tmp_path / "domains" / "retail" / "checkout" / "order_placed" / "v2_0"
    folder.mkdir(parents=True)
    (folder / "schema.yaml").write_text(yaml.safe_dump(proposed_document(), sort_keys=False))
    with pytest.raises(SystemExit) as exit_:
        call_command("publish_contracts", root=tmp_path)
    assert exit_.value.code == 2
    request = ChangeRequest.objects.get()
    assert f"Change request #{request.pk} is open" in capsys.readouterr().out
    assert request.opened_by_label == "system"


def test_the_audit_trail_of_a_full_request(change_request, consumer_team, consumer, owner):
    change_request.object(consumer_team, by=consumer, comment="Wait for our backfill.")
    change_request.acknowledge(consumer_team, by=consumer, comment="Backfill done.")
    version = change_request.publish(by=owner)
    trail = list(
        AuditEvent.objects.filter(object_type="contracts_app.changerequest", object_id=str(change_request.pk))
        .order_by("at", "id").values_list("actor_label", "action")
    )
    assert trail == [
        ("alice", "change_request.opened"),
        ("carol", "change_request.objected"),
        ("carol", "change_request.acknowledged"),
        ("system", "change_request.approved"),
        ("alice", "change_request.published"),
    ]
    opened = AuditEvent.objects.get(action="change_request.opened")
    assert opened.after["required_teams"] == ["analytics"] and opened.after["base_version"] == "1.0"
    published = AuditEvent.objects.get(action="change_request.published")
    assert published.before == {"state": "approved", "proposed_version": "2.0"}
    assert published.after["version_id"] == version.pk
    assert AuditEvent.objects.filter(action="contract.version_published", object_id=str(version.pk)).exists()


def test_a_refused_transition_writes_no_audit_row(change_request, outsider):
    before = AuditEvent.objects.count()
    with pytest.raises(PermissionDenied):
        change_request.withdraw(by=outsider)
    assert AuditEvent.objects.count() == before
