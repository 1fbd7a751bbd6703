"""Telling people about change requests: the outbox rows, the team channels, and
sending them through each channel's transport.

Two steps, so that no network I/O happens inside a transaction and nothing is
sent twice:

1. `queue_*` writes one Notification row per (request, event, channel, recipient)
   inside the transaction that makes the event happen: an e-mail to each person,
   and one row per channel the team set up (change_requests.models.TeamChannel).
   A unique constraint makes a second queueing of the same event a no-op
   (`ignore_conflicts`).
2. After commit, the `deliver_change_request_notifications` task sends every
   unsent row of that request through its transport (change_requests.transports).
   Each row is claimed by a conditional UPDATE (`sent_at IS NULL AND claim
   expired`), sent, then marked sent; a failure frees the claim and the task
   retries with backoff, skipping rows already sent. The beat clock also picks up
   rows whose task was lost (a worker died).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from change_requests.transports import EMAIL, TRANSPORTS, WEBHOOK, transport_for
from registry.models import Team
from registry.outbox import send_once

if TYPE_CHECKING:
    from change_requests.models import ChangeRequest

# --- the rows -------------------------------------------------------------------

class NotificationEvent(models.TextChoices):
    OPENED = "opened", "Request opened"
    REMINDER = "reminder", "Deadline reminder"
    ESCALATED = "escalated", "Escalated after the deadline"
    APPROVED = "approved", "Approved: ready to publish"
    NOT_AFFECTED = "not_affected", "Not affected: told, not asked"
    UNREGISTERED_READERS = "unregistered_readers", "Unregistered readers found"
    BLOCKED = "blocked", "A team blocks: escalated to the governance admins"
    BLOCK_OVERRIDDEN = "block_overridden", "A governance admin overrode the team's block"


class TeamChannelQuerySet(models.QuerySet):
    def add(self, team: Team, kind: str, **channel_settings) -> TeamChannel:
        """A new channel for `team`, its settings checked by the kind's transport."""
        channel = self.model(team=team, kind=kind, settings=channel_settings)
        channel.full_clean()
        channel.save()
        return channel

    def add_webhook(self, team: Team, *, url: str, secret: str = "") -> TeamChannel:
        return self.add(team, WEBHOOK, url=url, secret=secret)


class TeamChannel(models.Model):
    """Somewhere a team hears about change requests besides its members' own e-mail:
    a signed webhook, a list address, … The kind names a transport
    (change_requests.transports.TRANSPORTS); its settings are that transport's."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="notification_channels")
    kind = models.CharField(max_length=20, help_text="A transport: " + ", ".join(TRANSPORTS) + ".")
    settings = models.JSONField(default=dict, blank=True,
                                help_text='The transport\'s settings, e.g. {"url": …, "secret": …} for a webhook.')
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamChannelQuerySet.as_manager()

    class Meta:
        ordering = ["team__name", "kind", "id"]

    def __str__(self) -> str:
        return f"{self.team} via {self.kind}"

    @property
    def transport(self):
        return transport_for(self.kind)

    @property
    def recipient(self) -> str:
        return self.transport.recipient(self.settings)

    def clean(self) -> None:
        if self.kind not in TRANSPORTS:
            raise ValidationError({"kind": f"Unknown channel kind {self.kind!r}; known: {', '.join(TRANSPORTS)}."})
        problems = self.transport.settings_problems(self.settings if isinstance(self.settings, dict) else {})
        if problems:
            raise ValidationError({"settings": problems})


class NotificationQuerySet(models.QuerySet):
    def unsent(self) -> NotificationQuerySet:
        return self.filter(sent_at__isnull=True, gave_up_at__isnull=True)

    def lost(self, now: datetime) -> NotificationQuerySet:
        """Unsent rows their task is not looking after: never tried UNTRIED_AFTER after they
        were queued (the broker was down when they were handed over, or the task was lost
        with it), or still unsent LOST_AFTER after (the task gave up retrying early)."""
        return self.unsent().filter(Q(created_at__lt=now - LOST_AFTER)
                                    | Q(attempts=0, created_at__lt=now - UNTRIED_AFTER))


class Notification(models.Model):
    """One message to one recipient about one event of one request.

    Rows are written in the transaction that makes the event happen; sending is a
    Celery task after commit. The unique constraint makes "never twice for the same
    event" a database fact, and a claim column keeps two workers off one row.
    """

    change_request = models.ForeignKey("change_requests.ChangeRequest", on_delete=models.CASCADE, related_name="notifications")
    event = models.CharField(max_length=20, choices=NotificationEvent.choices)
    channel = models.CharField(max_length=20, help_text="The transport that sends it (its kind).")
    recipient = models.CharField(max_length=500, help_text="An e-mail address, or the webhook URL.")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    team_channel = models.ForeignKey(TeamChannel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                     help_text="The team channel it goes to (None: a person's own e-mail).")
    subject = models.CharField(max_length=300)
    body = models.TextField()
    payload = models.JSONField(default=dict, help_text="The webhook body.")
    created_at = models.DateTimeField(default=timezone.now)
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    gave_up_at = models.DateTimeField(null=True, blank=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["change_request", "event", "channel", "recipient"],
                                    name="notification_once_per_event_and_recipient",
                                    violation_error_message="This recipient is already notified of this event of the change request on this channel."),
        ]
        indexes = [models.Index(fields=["created_at"], condition=Q(sent_at__isnull=True, gave_up_at__isnull=True),
                                name="notification_unsent")]

    def __str__(self) -> str:
        return f"{self.event} {self.channel} to {self.recipient} (#{self.change_request_id})"


# --- queueing -------------------------------------------------------------------

log = logging.getLogger(__name__)

LOST_AFTER = timedelta(minutes=15)  # well past the task's first retries
UNTRIED_AFTER = timedelta(seconds=30)  # a task handed over runs within seconds
# The task is named, not imported: tasks.py is the entry point that imports this module.
DELIVER_TASK = "contracts_app.deliver_change_request_notifications"


def review_url(request: ChangeRequest) -> str:
    return settings.SITE_URL.rstrip("/") + request.get_absolute_url()


def _team_members(team_ids: list[int]) -> dict[int, list[str]]:
    """E-mail addresses of the active members of each team, in one query."""
    rows = (
        get_user_model().objects.filter(memberships__team_id__in=team_ids, is_active=True)
        .exclude(email="").values_list("memberships__team_id", "email").distinct()
    )
    members: dict[int, list[str]] = {}
    for team_id, email in rows:
        members.setdefault(team_id, []).append(email)
    return members


def _payload(request: ChangeRequest, event: str, team: Team | None) -> dict:
    return {
        "event": f"change_request.{event}",
        "change_request": {
            "id": request.pk,
            "url": review_url(request),
            "contract": request.contract.name,
            "proposed_version": request.proposed_version,
            "state": request.state,
            "deadline_at": request.deadline_at.isoformat(),
            "escalated": request.escalated_at is not None,
        },
        "team": team.slug if team else None,
    }


def _team_channels(team_ids: list[int]) -> dict[int, list[TeamChannel]]:
    """The channels each team set up, in one query."""
    channels: dict[int, list[TeamChannel]] = {}
    for channel in TeamChannel.objects.filter(team_id__in=team_ids).order_by("id"):
        channels.setdefault(channel.team_id, []).append(channel)
    return channels


def _channel_rows(request: ChangeRequest, event: str, team: Team, channels: list[TeamChannel],
                  subject: str, body: str) -> list[Notification]:
    return [Notification(change_request=request, event=event, channel=channel.kind, recipient=channel.recipient,
                         team=team, team_channel=channel, subject=subject, body=body,
                         payload=_payload(request, event, team))
            for channel in channels]


def _rows_for_teams(request: ChangeRequest, event: str, teams: list[Team], subject: str, body: str,
                    members: dict[int, list[str]], channels: dict[int, list[TeamChannel]]) -> list[Notification]:
    rows = []
    for team in teams:
        for email in members.get(team.pk, []):
            rows.append(Notification(change_request=request, event=event, channel=EMAIL, recipient=email,
                                     team=team, subject=subject, body=body))
        rows += _channel_rows(request, event, team, channels.get(team.pk, []), subject, body)
    return rows


def _store(rows: list[Notification], request_ids: list[int]) -> None:
    """Insert the rows (a repeat of an event is ignored) and send them after commit."""
    if not rows:
        return
    Notification.objects.bulk_create(rows, ignore_conflicts=True)

    def enqueue() -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # In-process (the embedded demo): a failure must not fail the user's request;
            # the clock's next pass sends what is still unsent.
            for request_id in request_ids:
                deliver_pending(request_id)
            return
        try:
            for request_id in request_ids:
                from registry.celery import (
                    app,  # Celery loads in the processes that send, not at every start
                )

                app.send_task(DELIVER_TASK, args=[request_id])
        except Exception:  # the broker is down: the rows are stored, the clock sends them later
            log.exception("Could not enqueue notifications of change requests %s; the clock will send them", request_ids)

    transaction.on_commit(enqueue)


def queue_opened(request: ChangeRequest, teams: list[Team]) -> None:
    """Every member of each required team hears that the request waits for them."""
    subject = f"[{settings.SITE_NAME}] Breaking change to {request.contract.name}: your team's acknowledgement is needed"
    body = (
        f"{request.opened_by_label or 'The owner team'} proposes version {request.proposed_version} of contract "
        f"{request.contract.name}, and the compatibility checker says it breaks consumers under "
        f"{request.report.get('mode', 'its mode')}"
        # the checker's verdict names the first breaking change (a dataframe's in the words of its columns)
        f"{': ' + request.report['verdict'] if request.report.get('verdict') else ''}.\n\n"
        f"Your team consumes a dataset bound to this contract. Please review the change and acknowledge it, "
        f"or object with a comment, before {request.deadline_at:%Y-%m-%d %H:%M} UTC.\n\n"
        f"Review it here: {review_url(request)}\n"
    )
    team_ids = [t.pk for t in teams]
    _store(_rows_for_teams(request, NotificationEvent.OPENED, teams, subject, body, _team_members(team_ids),
                           _team_channels(team_ids)), [request.pk])


def queue_reminders(waiting: dict[ChangeRequest, list[Team]]) -> None:
    """Members of the teams that have not acknowledged yet are reminded before the deadline
    (a batch of requests: one query for the members, one insert)."""
    team_ids = sorted({t.pk for teams in waiting.values() for t in teams})
    members, channels = _team_members(team_ids), _team_channels(team_ids)
    rows: list[Notification] = []
    for request, teams in waiting.items():
        subject = f"[{settings.SITE_NAME}] Reminder: {request.contract.name} {request.proposed_version} waits for your team"
        body = (
            f"The breaking change to {request.contract.name} (version {request.proposed_version}) still waits for your "
            f"team's answer. Its deadline is {request.deadline_at:%Y-%m-%d %H:%M} UTC; after it, the request is "
            f"escalated to the governance admins.\n\nReview it here: {review_url(request)}\n"
        )
        rows += _rows_for_teams(request, NotificationEvent.REMINDER, teams, subject, body, members, channels)
    _store(rows, [r.pk for r in waiting])


def queue_escalations(waiting: dict[ChangeRequest, list[str]], owner_emails: dict[int, list[str]]) -> None:
    """The governance admins and the owner hear that the deadline passed with teams still
    waiting (`waiting`: request -> "team (status)" labels; a batch: one query, one insert)."""
    admins = set(
        get_user_model().objects.filter(Q(is_staff=True) | Q(is_superuser=True), is_active=True)
        .exclude(email="").values_list("email", flat=True)
    )
    channels = _team_channels(sorted({r.owner_team_id for r in waiting if r.owner_team_id}))
    rows: list[Notification] = []
    for request, still_waiting in waiting.items():
        subject = f"[{settings.SITE_NAME}] Escalated: {request.contract.name} {request.proposed_version} passed its deadline"
        body = (
            f"Change request #{request.pk} for {request.contract.name} (version {request.proposed_version}) passed its "
            f"deadline of {request.deadline_at:%Y-%m-%d %H:%M} UTC without every consumer team's acknowledgement.\n"
            f"Still waiting: {', '.join(still_waiting) or 'nobody'}.\n\n"
            f"A governance admin can approve it over teams that stayed silent, or reject it; the owner can withdraw it.\n"
            f"Review it here: {review_url(request)}\n"
        )
        for email in sorted(admins | set(owner_emails.get(request.pk, []))):
            rows.append(Notification(change_request=request, event=NotificationEvent.ESCALATED, channel=EMAIL,
                                     recipient=email, subject=subject, body=body))
        if request.owner_team_id:
            rows += _channel_rows(request, NotificationEvent.ESCALATED, request.owner_team,
                                  channels.get(request.owner_team_id, []), subject, body)
    _store(rows, [r.pk for r in waiting])


def queue_not_affected(request: ChangeRequest, teams: list[Team], why: dict[int, str]) -> None:
    """Consumer teams whose usage provably excludes every touched column are told, not asked."""
    if not teams:
        return
    rows: list[Notification] = []
    team_ids = [t.pk for t in teams]
    members, channels = _team_members(team_ids), _team_channels(team_ids)
    subject = f"[{settings.SITE_NAME}] {request.contract.name} {request.proposed_version}: a breaking change that does not affect your team"
    for team in teams:
        body = (
            f"{request.opened_by_label or 'The owner team'} proposes version {request.proposed_version} of contract "
            f"{request.contract.name}; the compatibility checker says it breaks consumers, but not your team: "
            f"{why.get(team.pk, 'none of the columns it touches is read by your jobs')}.\n\n"
            f"Nothing is needed from you. If your jobs do read these columns in a way lineage does not show, "
            f"declare them on the dataset page and the request will wait for you.\n\n"
            f"The request: {review_url(request)}\n"
        )
        rows += _rows_for_teams(request, NotificationEvent.NOT_AFFECTED, [team], subject, body, members, channels)
    _store(rows, [request.pk])


def queue_unregistered_readers(request: ChangeRequest, readers: list[dict]) -> None:
    """The owner team hears about jobs reading its data whose team never registered."""
    team = request.owner_team
    if team is None or not readers:
        return
    listed = "\n".join(
        f"- {r['job']} ({r['team'] or 'team unknown'}) reads {', '.join(r['reads']) if r['reads'] else 'all columns'} "
        f"of {r['dataset']}" for r in readers[:50])
    subject = f"[{settings.SITE_NAME}] {request.contract.name} {request.proposed_version}: jobs read your data without registering"
    body = (
        f"Change request #{request.pk} waits for the registered consumer teams. Lineage also shows jobs reading the "
        f"data whose team is not a registered consumer:\n{listed}\n\n"
        f"Ask their teams to register (one click on the dataset page) so they are asked too: {review_url(request)}\n"
    )
    _store(_rows_for_teams(request, NotificationEvent.UNREGISTERED_READERS, [team], subject, body,
                           _team_members([team.pk]), _team_channels([team.pk])), [request.pk])


def queue_approved(request: ChangeRequest) -> None:
    """The owner team hears that its request may now be published."""
    team = request.owner_team
    if team is None:
        return
    subject = f"[{settings.SITE_NAME}] Approved: {request.contract.name} {request.proposed_version} is ready to publish"
    body = (
        f"Every consumer team this change waited for has answered, so change request #{request.pk} for "
        f"{request.contract.name} (version {request.proposed_version}) is approved. A member of {team.name} "
        f"publishes it (or withdraws it) here: {review_url(request)}\n"
    )
    _store(_rows_for_teams(request, NotificationEvent.APPROVED, [team], subject, body, _team_members([team.pk]),
                           _team_channels([team.pk])), [request.pk])


def _governance_admin_emails() -> set[str]:
    return set(
        get_user_model().objects.filter(Q(is_staff=True) | Q(is_superuser=True), is_active=True)
        .exclude(email="").values_list("email", flat=True)
    )


def queue_blocked(request: ChangeRequest, team: Team, reason: str) -> None:
    """A block escalates at once: the governance admins hear who blocks and why (the owner team
    sees it on the request; at the deadline the escalation names it too)."""
    subject = f"[{settings.SITE_NAME}] Blocked: {team.name} blocks {request.contract.name} {request.proposed_version}"
    body = (
        f"{team.name} blocks change request #{request.pk} for {request.contract.name} (version "
        f"{request.proposed_version}):\n\n{reason}\n\nThe request cannot publish until {team.name} answers otherwise "
        f"or a governance admin overrides the block (the override and its reason are recorded and shown to "
        f"{team.name}).\nReview it here: {review_url(request)}\n"
    )
    rows = [Notification(change_request=request, event=NotificationEvent.BLOCKED, channel=EMAIL, recipient=email,
                         subject=subject, body=body) for email in sorted(_governance_admin_emails())]
    _store(rows, [request.pk])


def queue_block_overridden(request: ChangeRequest, team: Team, reason: str) -> None:
    """The blocking team hears that a governance admin overrode its block, and why."""
    subject = f"[{settings.SITE_NAME}] Your block on {request.contract.name} {request.proposed_version} was overridden"
    body = (
        f"A governance admin overrode {team.name}'s block on change request #{request.pk} for "
        f"{request.contract.name} (version {request.proposed_version}). The reason given:\n\n{reason}\n\n"
        f"The request: {review_url(request)}\n"
    )
    _store(_rows_for_teams(request, NotificationEvent.BLOCK_OVERRIDDEN, [team], subject, body,
                           _team_members([team.pk]), _team_channels([team.pk])), [request.pk])


# --- sending -------------------------------------------------------------------

def deliver(notification: Notification) -> bool:
    """Send one notification unless it was sent or is being sent; True once it is sent."""
    channel_settings = notification.team_channel.settings if notification.team_channel_id else {}
    done = send_once(Notification.objects.unsent(), notification.pk,
                     lambda: transport_for(notification.channel).send(notification, channel_settings),
                     what=f"Notification to {notification.recipient}")
    if done is None:
        return Notification.objects.filter(pk=notification.pk, sent_at__isnull=False).exists()
    return done


def deliver_pending(change_request_id: int | None = None, *, limit: int = 500,
                    only_lost: bool = False) -> tuple[int, int]:
    """Send the unsent notifications (of one request, or all; only the lost ones, if
    `only_lost`: see NotificationQuerySet.lost); returns (sent, failed)."""
    pending = Notification.objects.lost(timezone.now()) if only_lost else Notification.objects.unsent()
    pending = pending.select_related("team_channel").order_by("created_at", "id")
    if change_request_id is not None:
        pending = pending.filter(change_request_id=change_request_id)
    sent = failed = 0
    for notification in pending[:limit]:
        if deliver(notification):
            sent += 1
        else:
            failed += 1
    return sent, failed
