"""Sunset reminders: 30, 7 and 1 day(s) before a lane's sunset, every team still reading
it hears about it through its members' e-mail and its channels (and sees it in its inbox,
lanes.inbox).

Two steps, as for change requests: `queue_sunset_reminders` writes a LaneReminder per
(lane, team, step, sunset) and one LaneNotice per recipient in one transaction (a repeat
is a no-op: unique constraints); after commit, the `lanes.deliver_lane_notices` task
sends the unsent notices through each channel kind's transport.
"""

from __future__ import annotations

import logging
from datetime import date

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from change_requests.transports import EMAIL, transport_for
from lanes.evidence import lane_usage
from lanes.models import Lane, LaneNotice, LaneReminder
from registry.hooks import team_channels_provider
from registry.models import Team
from registry.outbox import MAX_ATTEMPTS, send_once

log = logging.getLogger(__name__)

STEPS = (30, 7, 1)
DELIVER_TASK = "lanes.deliver_lane_notices"


def lane_url(lane: Lane) -> str:
    return settings.SITE_URL.rstrip("/") + reverse("lane-page", args=[lane.contract.name])


def due_step(sunset: date, today: date) -> int | None:
    """The reminder step due today: the smallest step not below the days left (a lane whose
    sunset is set 5 days ahead gets the 7-day reminder, then the 1-day one)."""
    left = (sunset - today).days
    if left < 1 or left > STEPS[0]:
        return None
    return min(s for s in STEPS if s >= left)


def queue_sunset_reminders(today: date | None = None) -> list[int]:
    """Queue today's due reminders; returns the ids of the LaneReminders created."""
    today = today or timezone.localdate()
    lanes = Lane.objects.filter(Q(sunset_date__isnull=False) | Q(extended_until__isnull=False)).select_related("contract")
    due = {lane.pk: (lane, step) for lane in lanes
           if lane.sunset_in_force and (step := due_step(lane.sunset_in_force, today)) is not None}
    if not due:
        return []
    usage = lane_usage({lane.contract for lane, _ in due.values()})
    readers = {}
    for lane, _ in due.values():
        found = next((u for u in usage.get(lane.contract_id, []) if u.major == lane.major), None)
        readers[lane.pk] = sorted(found.team_ids) if found else []
    team_ids = sorted({t for ids in readers.values() for t in ids})
    teams = {t.pk: t for t in Team.objects.filter(pk__in=team_ids)}
    members = _members(team_ids)
    provider = team_channels_provider()
    channels = provider.current(team_ids) if provider else {}
    created: list[int] = []
    with transaction.atomic():
        for lane_pk, (lane, step) in due.items():
            for team_id in readers[lane_pk]:
                reminder, new = LaneReminder.objects.get_or_create(
                    lane=lane, team_id=team_id, days_before=step, sunset_date=lane.sunset_in_force)
                if not new:
                    continue
                created.append(reminder.pk)
                subject, body = _message(lane, teams[team_id], step)
                payload = {"event": "lane.sunset_reminder", "contract": lane.contract.name, "lane": lane.label,
                           "sunset_date": lane.sunset_in_force.isoformat(), "days_before": step,
                           "team": teams[team_id].slug, "url": lane_url(lane)}
                rows = [LaneNotice(reminder=reminder, channel=EMAIL, recipient=email, subject=subject, body=body,
                                   payload=payload) for email in members.get(team_id, [])]
                for channel_id, kind, channel_settings in channels.get(team_id, []):
                    rows.append(LaneNotice(reminder=reminder, channel=kind, team_channel_id=channel_id,
                                           recipient=provider.recipient(kind, channel_settings), subject=subject,
                                           body=body, payload=payload))
                LaneNotice.objects.bulk_create(rows, ignore_conflicts=True)
        if created:
            transaction.on_commit(_enqueue)
    return created


def _message(lane: Lane, team: Team, step: int) -> tuple[str, str]:
    sunset = lane.sunset_in_force
    subject = (f"[{settings.SITE_NAME}] {lane.contract.name} {lane.label} reaches its sunset in {step} "
               f"day{'s' if step != 1 else ''} ({sunset})")
    body = (f"{team.name} still reads lane {lane.label} of {lane.contract.name}. On {sunset} the lane stops "
            f"resolving for \"{lane.major}\", \"{lane.label}\" and \"latest\" (explicit versions still resolve, with a "
            f"warning). Move your pipelines to a newer lane before then.\n\nWho still reads it: {lane_url(lane)}\n")
    return subject, body


def _members(team_ids: list[int]) -> dict[int, list[str]]:
    rows = (get_user_model().objects.filter(memberships__team_id__in=team_ids, is_active=True)
            .exclude(email="").values_list("memberships__team_id", "email").distinct())
    found: dict[int, list[str]] = {}
    for team_id, email in rows:
        found.setdefault(team_id, []).append(email)
    return found


def _enqueue() -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        deliver_notices()
        return
    try:
        from registry.celery import (
            app,  # Celery loads in the processes that send, not at every start
        )

        app.send_task(DELIVER_TASK)
    except Exception:  # the broker is down: the rows are stored; the next beat pass sends them
        log.exception("Could not enqueue lane notices; the next reminder pass sends them")


def deliver_notices(limit: int = 500) -> tuple[int, int]:
    """Send the unsent notices (registry.outbox.send_once); returns (sent, failed)."""
    provider = team_channels_provider()
    settings_of = {}
    unsent = LaneNotice.objects.filter(sent_at__isnull=True, attempts__lt=MAX_ATTEMPTS)
    pending = list(unsent.select_related("reminder").order_by("created_at", "id")[:limit])
    if provider:
        for channels in provider.current(sorted({n.reminder.team_id for n in pending})).values():
            for channel_id, _kind, channel_settings in channels:
                settings_of[channel_id] = channel_settings
    sent = failed = 0
    for notice in pending:
        done = send_once(unsent, notice.pk,
                         lambda notice=notice: transport_for(notice.channel).send(
                             notice, settings_of.get(notice.team_channel_id, {})),
                         what=f"Lane notice to {notice.recipient}")
        sent += done is True
        failed += done is False
    return sent, failed


def sunset_pass(today: date | None = None) -> dict:
    """The beat task's pass: queue what is due, send what is unsent."""
    created = queue_sunset_reminders(today)
    sent, failed = deliver_notices()
    return {"reminders": len(created), "sent": sent, "failed": failed}

