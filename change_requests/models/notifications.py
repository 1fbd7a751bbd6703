"""The notifications outbox: one row per message, written in the transaction that
makes its event happen and sent after commit (see change_requests.notifications)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from change_requests.transports import TRANSPORTS, WEBHOOK, transport_for
from registry.models import Team


class NotificationEvent(models.TextChoices):
    OPENED = "opened", "Request opened"
    REMINDER = "reminder", "Deadline reminder"
    ESCALATED = "escalated", "Escalated after the deadline"
    APPROVED = "approved", "Approved: ready to publish"


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
                                    name="notification_once_per_event_and_recipient"),
        ]
        indexes = [models.Index(fields=["created_at"], condition=Q(sent_at__isnull=True, gave_up_at__isnull=True),
                                name="notification_unsent")]

    def __str__(self) -> str:
        return f"{self.event} {self.channel} to {self.recipient} (#{self.change_request_id})"
