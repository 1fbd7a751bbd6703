"""The inbox's daily digest, through the channels change requests already send by.

Once a day (beat: `change_requests.inbox_digest` at INBOX_DIGEST_HOUR UTC), every
person in a team whose inbox (registry.inbox) holds something gets one e-mail
listing it, what is new since their last digest first; and every team channel (a
webhook, a list address) gets its team's inbox. As with notifications, no network
I/O happens in a transaction: the rows are written first (one per day, channel and
recipient: a second run the same day adds nothing), then sent, each claimed by a
conditional UPDATE so two workers never send one twice.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from change_requests.notifications import TeamChannel
from change_requests.transports import EMAIL, transport_for
from registry.hooks import InboxItem
from registry.inbox import Inbox, inbox_of_person, inbox_of_team, kind_label
from registry.models import Team
from registry.outbox import send_once

log = logging.getLogger(__name__)


class InboxDigest(models.Model):
    """One day's digest of one inbox to one recipient (a person's e-mail, or a team channel)."""

    day = models.DateField()
    channel = models.CharField(max_length=20, help_text="The transport that sends it (its kind).")
    recipient = models.CharField(max_length=500, help_text="An e-mail address, or the webhook URL.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    team_channel = models.ForeignKey(TeamChannel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    keys = models.JSONField(default=list, help_text="The items' keys: the next digest says which items are new.")
    subject = models.CharField(max_length=300)
    body = models.TextField()
    payload = models.JSONField(default=dict, help_text="The webhook body.")
    created_at = models.DateTimeField(default=timezone.now)
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    gave_up_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-day", "recipient"]
        constraints = [models.UniqueConstraint(fields=["day", "channel", "recipient"], name="inbox_digest_once_a_day",
                                               violation_error_message="This recipient already has today's digest.")]

    def __str__(self) -> str:
        return f"inbox digest {self.day} {self.channel} to {self.recipient}"


def _absolute(url: str) -> str:
    return settings.SITE_URL.rstrip("/") + url if url.startswith("/") else url


def _body(inbox: Inbox, whose: str, new: set[str]) -> str:
    lines = [f"{inbox.count} thing{'s' if inbox.count != 1 else ''} wait{'' if inbox.count != 1 else 's'} for {whose}."]
    fresh = [i for i in inbox.items if i.key in new]
    older = [i for i in inbox.items if i.key not in new]

    def line(item: InboxItem) -> str:
        due = f" (due {item.due:%Y-%m-%d %H:%M} UTC)" if isinstance(item.due, datetime) else ""
        return f"- [{kind_label(item.kind)}] {item.title}{due}\n  {_absolute(item.url)}"

    if fresh:
        lines += ["", "New since the last digest:", *map(line, fresh)]
    if older:
        lines += ["", "Still waiting:", *map(line, older)]
    lines += ["", f"Your inbox: {_absolute('/inbox/')}"]
    return "\n".join(lines) + "\n"


def _payload(inbox: Inbox, team: Team | None, new: set[str]) -> dict:
    return {"event": "inbox.digest", "team": team.slug if team else None, "count": inbox.count,
            "items": [{**inbox.to_dict(i), "url": _absolute(i.url), "new": i.key in new} for i in inbox.items]}


def _previous_keys(day: date) -> dict[tuple[str, str], set[str]]:
    """What each recipient's last digest before `day` listed (one query)."""
    last: dict[tuple[str, str], set[str]] = {}
    for channel, recipient, keys in (InboxDigest.objects.filter(day__lt=day, day__gte=day - timedelta(days=31))
                                     .order_by("day").values_list("channel", "recipient", "keys")):
        last[(channel, recipient)] = set(keys or [])
    return last


def queue_digests(now: datetime | None = None) -> int:
    """Write today's digests: one e-mail per team member with something in their inbox,
    one row per team channel whose team has something. Returns how many rows were new."""
    now = now or timezone.now()
    day = now.date()
    previous = _previous_keys(day)
    rows: list[InboxDigest] = []
    people = (get_user_model().objects.filter(is_active=True, memberships__isnull=False).exclude(email="")
              .distinct().order_by("username"))
    for person in people:
        inbox = inbox_of_person(person, per_kind=None)  # a digest says everything waiting
        if not inbox.count:
            continue
        keys = [i.key for i in inbox.items]
        new = set(keys) - previous.get((EMAIL, person.email), set())
        rows.append(InboxDigest(
            day=day, channel=EMAIL, recipient=person.email, user=person, keys=keys,
            subject=f"[{settings.SITE_NAME}] Your inbox: {inbox.count} waiting, {len(new)} new",
            body=_body(inbox, "you and your teams", new), payload=_payload(inbox, None, new)))
    channels = list(TeamChannel.objects.select_related("team").order_by("team__name", "id"))
    by_team: dict[int, Inbox] = {}
    for channel in channels:
        if channel.team_id not in by_team:
            by_team[channel.team_id] = inbox_of_team(channel.team, per_kind=None)
        inbox = by_team[channel.team_id]
        if not inbox.count:
            continue
        keys = [i.key for i in inbox.items]
        new = set(keys) - previous.get((channel.kind, channel.recipient), set())
        rows.append(InboxDigest(
            day=day, channel=channel.kind, recipient=channel.recipient, team=channel.team, team_channel=channel,
            keys=keys, subject=f"[{settings.SITE_NAME}] {channel.team.name}'s inbox: {inbox.count} waiting, {len(new)} new",
            body=_body(inbox, channel.team.name, new), payload=_payload(inbox, channel.team, new)))
    before = InboxDigest.objects.filter(day=day).count()
    InboxDigest.objects.bulk_create(rows, ignore_conflicts=True)
    return InboxDigest.objects.filter(day=day).count() - before


def _deliver(digest: InboxDigest) -> bool:
    channel_settings = digest.team_channel.settings if digest.team_channel_id else {}
    return bool(send_once(InboxDigest.objects.filter(sent_at__isnull=True, gave_up_at__isnull=True), digest.pk,
                          lambda: transport_for(digest.channel).send(digest, channel_settings),
                          what=f"Inbox digest to {digest.recipient}"))


def send_digests(limit: int = 5000) -> tuple[int, int]:
    """Send the unsent digests (today's, and earlier ones still failing); returns (sent, failed)."""
    sent = failed = 0
    pending = (InboxDigest.objects.filter(sent_at__isnull=True, gave_up_at__isnull=True)
               .select_related("team_channel").order_by("created_at", "id"))
    for digest in pending[:limit]:
        if _deliver(digest):
            sent += 1
        else:
            failed += 1
    return sent, failed


def run_digest(now: datetime | None = None) -> dict:
    queued = queue_digests(now)
    sent, failed = send_digests()
    return {"queued": queued, "sent": sent, "failed": failed}
