"""Draft -> review -> publish: who may approve, what the approval records, and the
publish gate deciding only after it."""

from __future__ import annotations

import copy

import pytest
from django.core.exceptions import PermissionDenied

from change_requests.models import ChangeRequest
from contracts_app.drafting import (
    DraftRefused,
    approve_draft,
    dataframe_document,
    gate_verdict,
    save_generated_draft,
)
from contracts_app.models import ContractVersion, Draft, DraftAction, DraftOrigin, DraftState
from registry.models import AuditEvent, RegistryError

pytestmark = pytest.mark.django_db

COLUMNS = [{"name": "order_id", "dtype": "int64", "nullable": False, "unique": True},
           {"name": "amount", "dtype": "float64", "nullable": True}]


def drafted(dataset, owner_team, columns=COLUMNS):
    document = dataframe_document(["retail", "public", "orders"], owner=owner_team, columns=columns, datasets=[dataset])
    change = save_generated_draft(document, origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}",
                                  owner=owner_team, dataset=dataset)
    return change.draft


def test_a_member_of_the_owner_team_approves_and_the_gate_publishes_it(dataset, owner_team, teammate):
    draft = drafted(dataset, owner_team)
    outcome = approve_draft(draft, by=teammate)
    assert outcome.status == "published"
    draft.refresh_from_db()
    assert draft.state == DraftState.PUBLISHED and draft.reviewed_by == teammate
    version = ContractVersion.objects.get(contract__name="retail.public.orders", version="1.0")
    assert version.document == draft.document and version.published_by == teammate
    assert dataset.contract_binding.contract.name == "retail.public.orders"
    audit = AuditEvent.objects.get(action=DraftAction.APPROVED, object_id=str(draft.pk))
    assert audit.actor == teammate
    assert audit.after == {"state": "published", "gate": "published", "change_request": None,
                           "contract": "retail.public.orders", "version": "1.0"}


def test_an_outsider_cannot_approve_and_nothing_is_recorded(dataset, owner_team, outsider, consumer):
    draft = drafted(dataset, owner_team)
    for person in (outsider, consumer):
        with pytest.raises(PermissionDenied, match="Only a member of the owner team checkout"):
            approve_draft(draft, by=person)
    draft.refresh_from_db()
    assert draft.state == DraftState.PENDING
    assert not ContractVersion.objects.exists()
    assert not AuditEvent.objects.filter(action=DraftAction.APPROVED).exists()


def test_a_governance_admin_may_approve(dataset, owner_team, admin):
    draft = drafted(dataset, owner_team)
    assert approve_draft(draft, by=admin).status == "published"


def test_a_draft_the_gate_refuses_stays_pending_and_says_why(dataset, owner_team, owner):
    draft = drafted(dataset, owner_team, columns=[{"name": "amount", "dtype": "double", "nullable": True}])
    assert gate_verdict(draft) == ["column 'amount': dtype 'double' is not canonical (the exporter writes 'float64'): "
                                   "this YAML was not produced by the current exporter; re-export it with "
                                   "`manage.py export_contracts` instead of editing it"]
    with pytest.raises(DraftRefused, match="failed the publish gate"):
        approve_draft(draft, by=owner)
    draft.refresh_from_db()
    assert draft.state == DraftState.PENDING
    assert not ContractVersion.objects.exists()
    assert not AuditEvent.objects.filter(action=DraftAction.APPROVED).exists()


def test_an_approved_draft_cannot_be_approved_again(dataset, owner_team, owner):
    draft = drafted(dataset, owner_team)
    approve_draft(draft, by=owner)
    with pytest.raises(RegistryError, match="was already approved and published"):
        approve_draft(draft, by=owner)


def test_a_breaking_draft_is_numbered_a_major_and_its_approval_opens_a_change_request(dataset, owner_team, owner):
    approve_draft(drafted(dataset, owner_team), by=owner)
    # the table lost a column since: the generator drafts the next version, numbered as the checker says
    change = save_generated_draft(
        dataframe_document(["retail", "public", "orders"], owner=owner_team, columns=COLUMNS[:1], datasets=[dataset]),
        origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}", owner=owner_team, dataset=dataset)
    assert (change.action, change.version) == ("created", "2.0")
    outcome = approve_draft(change.draft, by=owner)
    assert outcome.status == "breaking"
    draft = Draft.objects.get(pk=change.draft.pk)
    request = ChangeRequest.objects.get()
    assert draft.state == DraftState.CHANGE_REQUESTED and draft.change_request_id == request.pk
    assert request.proposed_version == "2.0"
    assert not ContractVersion.objects.filter(version="2.0").exists()


def test_a_person_edit_is_audited_and_keeps_the_generator_away(dataset, owner_team, owner, outsider):
    draft = drafted(dataset, owner_team)
    edited = copy.deepcopy(draft.document)
    edited["columns"][1]["checks"] = [{"ge": 0}]
    with pytest.raises(PermissionDenied):
        draft.edit(edited, by=outsider)
    assert draft.edit(edited, by=owner) is True
    assert AuditEvent.objects.filter(action=DraftAction.EDITED, object_id=str(draft.pk), actor=owner).exists()
    again = save_generated_draft(
        dataframe_document(["retail", "public", "orders"], owner=owner_team, columns=COLUMNS, datasets=[dataset]),
        origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}", owner=owner_team, dataset=dataset)
    assert again.action == "kept" and "edited by alice" in again.detail
    assert Draft.objects.get(pk=draft.pk).document == edited


def test_the_owner_team_queue_lists_its_pending_drafts_only(dataset, owner_team, other_team, owner):
    draft = drafted(dataset, owner_team)
    assert list(Draft.objects.queued_for(owner_team)) == [draft]
    assert not Draft.objects.queued_for(other_team).exists()
    approve_draft(draft, by=owner)
    assert not Draft.objects.queued_for(owner_team).exists()
