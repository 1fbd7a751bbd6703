"""What the owner team does with an incident: acknowledge it, resolve it. Audited."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from incidents.evaluation import AuditAction, resolve_by_owner
from incidents.hooks import can_handle
from incidents.models import Incident, IncidentEvent, IncidentState
from registry.models import AuditEvent, RegistryError, actor_label


class IncidentClosed(RegistryError):
    http_status = 409


def _locked(incident: Incident, by, doing: str) -> Incident:
    if not can_handle(by, incident.dataset):
        who = incident.dataset.owner_team.name if incident.dataset.owner_team_id else "a governance admin"
        raise PermissionDenied(f"Only {who} can {doing} incident #{incident.pk}.")
    locked = Incident.objects.select_for_update().select_related("dataset").get(pk=incident.pk)
    if not locked.is_open:
        raise IncidentClosed(f"Incident #{incident.pk} is already resolved.")
    return locked


def acknowledge(incident: Incident, *, by) -> Incident:
    with transaction.atomic():
        locked = _locked(incident, by, "acknowledge")
        if locked.state == IncidentState.ACKNOWLEDGED:
            return locked
        now = timezone.now()
        locked.state, locked.acknowledged_at = IncidentState.ACKNOWLEDGED, now
        locked.acknowledged_by = by if getattr(by, "pk", None) and not getattr(by, "principal_team_ids", None) else None
        locked.save(update_fields=["state", "acknowledged_at", "acknowledged_by"])
        IncidentEvent.objects.create(incident=locked, at=now, kind="acknowledged", actor_label=actor_label(by),
                                     text=f"acknowledged by {actor_label(by)}")
        AuditEvent.record(by, AuditAction.ACKNOWLEDGED, locked, before={"state": IncidentState.OPEN},
                          after={"state": locked.state})
    return locked


def resolve(incident: Incident, *, by, note: str = "") -> Incident:
    with transaction.atomic():
        locked = _locked(incident, by, "resolve")
        resolve_by_owner(locked, by=by, note=note)
    return locked
