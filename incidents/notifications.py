"""Telling the teams: IncidentTeam rows (who was told, by which path) and the
outbox, IncidentNotification rows, written in the transaction that opens the
incident and sent after commit through the teams' channels
(registry.hooks.send_on_channel: change_requests keeps the transports) and to
each member's e-mail. A unique constraint makes a second queueing a no-op; each
row is claimed by a conditional UPDATE before it is sent, so two workers never
send it twice."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from incidents.models import Incident, IncidentEvent, IncidentNotification, IncidentTeam
from incidents.routing import who_reads
from registry.hooks import send_on_channel, team_channels_provider
from registry.models import Team
from registry.outbox import MAX_ATTEMPTS, send_once

log = logging.getLogger(__name__)

DELIVER_TASK = "incidents.deliver_notifications"


def incident_url(incident: Incident) -> str:
    return settings.SITE_URL.rstrip("/") + incident.get_absolute_url()


def _members(team_ids: list[int]) -> dict[int, list[str]]:
    rows = (get_user_model().objects.filter(memberships__team_id__in=team_ids, is_active=True).exclude(email="")
            .values_list("memberships__team_id", "email").distinct())
    found: dict[int, list[str]] = {}
    for team_id, email in rows:
        found.setdefault(team_id, []).append(email)
    return found


def tell_downstream(incident: Incident, *, now: datetime | None = None) -> list[IncidentTeam]:
    """Route a new incident and queue its messages (inside the opening transaction)."""
    now = now or timezone.now()
    dataset = incident.dataset
    told, spared = who_reads(dataset.pk, incident.column, owner_team_id=dataset.owner_team_id, now=now)
    rows = [IncidentTeam(incident=incident, team_id=team_id, paths=t.paths) for team_id, t in told.items()]
    if dataset.owner_team_id:
        rows.append(IncidentTeam(incident=incident, team_id=dataset.owner_team_id, owner=True, paths=[]))
    IncidentTeam.objects.bulk_create(rows, ignore_conflicts=True)
    team_ids = [row.team_id for row in rows]
    teams = Team.objects.in_bulk([*team_ids, *(s["team_id"] for s in spared)])
    members = _members(team_ids)
    provider = team_channels_provider()
    channels = provider.current(team_ids) if provider and team_ids else {}
    label = f"{dataset.namespace}/{dataset.name}"
    outbox: list[IncidentNotification] = []
    for row in rows:
        team = teams[row.team_id]
        if row.owner:
            subject = f"[{settings.SITE_NAME}] Incident on {label}, which your team owns: {incident.summary}"
            why = "Your team owns this dataset: acknowledge the incident, then resolve it (or a passing run will)."
        else:
            subject = f"[{settings.SITE_NAME}] Upstream incident reaches your jobs: {label}: {incident.summary}"
            why = "Your team's jobs read what it affects:\n" + "\n".join("  " + " -> ".join(p) for p in row.paths)
        body = f"{incident.summary}\n\n{why}\n\nSee {incident_url(incident)}\n"
        payload = {"event": "incident.opened", "incident": {
            "id": incident.pk, "url": incident_url(incident), "dataset": label, "cause": incident.cause,
            "column": incident.column or None, "summary": incident.summary, "evidence": incident.evidence,
            "opened_at": incident.opened_at.isoformat()}, "team": team.slug, "owner": row.owner, "paths": row.paths}
        for email in members.get(team.pk, []):
            outbox.append(IncidentNotification(incident=incident, team=team, channel="email", recipient=email,
                                               subject=subject[:300], body=body, payload=payload))
        for _, kind, channel_settings in channels.get(team.pk, []):
            outbox.append(IncidentNotification(incident=incident, team=team, channel=kind,
                                               recipient=provider.recipient(kind, channel_settings)[:500],
                                               settings=channel_settings, subject=subject[:300], body=body,
                                               payload=payload))
    IncidentNotification.objects.bulk_create(outbox, ignore_conflicts=True)
    readers = [teams[r.team_id].slug for r in rows if not r.owner]
    IncidentEvent.objects.create(
        incident=incident, at=now, kind="notified", actor_label="incident evaluator",
        text=(f"told {', '.join(readers)} (their jobs read what it affects)" if readers
              else "no other team's job reads what it affects") + (
            f"; and the owner team {teams[dataset.owner_team_id].slug}" if dataset.owner_team_id else ""),
        detail={"teams": {teams[r.team_id].slug: r.paths for r in rows if not r.owner},
                "not_affected": [{"team": teams[s["team_id"]].slug, "why": s["why"]} for s in spared]})
    if outbox:
        transaction.on_commit(lambda: _enqueue(incident.pk))
    return rows


def _enqueue(incident_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        deliver_pending(incident_id)
        return
    try:
        from registry.celery import (
            app,  # Celery loads in the processes that send, not at every start
        )

        app.send_task(DELIVER_TASK, args=[incident_id])
    except Exception:  # the broker is down: the rows wait for the sweep
        log.exception("could not enqueue the notifications of incident %s; the sweep will send them", incident_id)


def deliver_pending(incident_id: int | None = None, *, limit: int = 500) -> tuple[int, int]:
    """Send the unsent rows (of one incident, or all); (sent, failed)."""
    unsent = IncidentNotification.objects.filter(sent_at__isnull=True, attempts__lt=MAX_ATTEMPTS)
    rows = unsent.order_by("id") if incident_id is None else unsent.filter(incident_id=incident_id).order_by("id")
    sent = failed = 0
    for row in rows[:limit]:
        done = send_once(unsent, row.pk, lambda row=row: send_on_channel(row.channel, row.settings or {}, row),
                         what=f"Incident notification to {row.recipient}")
        sent += done is True
        failed += done is False
    return sent, failed
