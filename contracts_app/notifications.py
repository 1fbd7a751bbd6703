"""Telling people about change requests: e-mail and signed team webhooks.

Two steps, so that no network I/O happens inside a transaction and nothing is
sent twice:

1. `queue_*` writes one Notification row per (request, event, channel, recipient)
   inside the transaction that makes the event happen. A unique constraint makes
   a second queueing of the same event a no-op (`ignore_conflicts`).
2. After commit, the `deliver_change_request_notifications` task sends every
   unsent row of that request. Each row is claimed by a conditional UPDATE
   (`sent_at IS NULL AND claim expired`), sent, then marked sent; a failure frees
   the claim and the task retries with backoff, skipping rows already sent. The
   beat clock also picks up rows whose task was lost (a worker died).

Webhook bodies are JSON, signed with HMAC-SHA256 of the raw body under the
team's `webhook_secret`: header `X-Registry-Signature: sha256=<hex>`. The
`X-Registry-Delivery` header carries the notification id, so a receiver can
drop a redelivery after a crash between sending and marking.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import urllib.request
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from contracts_app.models.change_requests import (
    ChangeRequest,
    Channel,
    Notification,
    NotificationEvent,
)
from registry.models import Team

log = logging.getLogger(__name__)

CLAIM_FOR = timedelta(minutes=5)
LOST_AFTER = timedelta(minutes=15)  # well past the task's first retries
MAX_ATTEMPTS = 8
WEBHOOK_TIMEOUT_SECONDS = 10


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


def _rows_for_teams(request: ChangeRequest, event: str, teams: list[Team], subject: str, body: str,
                    members: dict[int, list[str]]) -> list[Notification]:
    rows = []
    for team in teams:
        for email in members.get(team.pk, []):
            rows.append(Notification(change_request=request, event=event, channel=Channel.EMAIL, recipient=email,
                                     team=team, subject=subject, body=body))
        if team.webhook_url:
            rows.append(Notification(change_request=request, event=event, channel=Channel.WEBHOOK,
                                     recipient=team.webhook_url, team=team, subject=subject, body=body,
                                     payload=_payload(request, event, team)))
    return rows


def _store(rows: list[Notification], request_ids: list[int]) -> None:
    """Insert the rows (a repeat of an event is ignored) and send them after commit."""
    if not rows:
        return
    Notification.objects.bulk_create(rows, ignore_conflicts=True)

    def enqueue() -> None:
        from contracts_app.tasks import deliver_change_request_notifications

        if settings.CELERY_TASK_ALWAYS_EAGER:
            # In-process (the embedded demo): a failure must not fail the user's request;
            # the clock's next pass sends what is still unsent.
            for request_id in request_ids:
                deliver_pending(request_id)
            return
        try:
            for request_id in request_ids:
                deliver_change_request_notifications.delay(request_id)
        except Exception:  # the broker is down: the rows are stored, the clock sends them later
            log.exception("Could not enqueue notifications of change requests %s; the clock will send them", request_ids)

    transaction.on_commit(enqueue)


def queue_opened(request: ChangeRequest, teams: list[Team]) -> None:
    """Every member of each required team hears that the request waits for them."""
    subject = f"[{settings.SITE_NAME}] Breaking change to {request.contract.name}: your team's acknowledgement is needed"
    body = (
        f"{request.opened_by_label or 'The owner team'} proposes version {request.proposed_version} of contract "
        f"{request.contract.name}, and the compatibility checker says it breaks consumers under "
        f"{request.report.get('mode', 'its mode')}.\n\n"
        f"Your team consumes a dataset bound to this contract. Please review the change and acknowledge it, "
        f"or object with a comment, before {request.deadline_at:%Y-%m-%d %H:%M} UTC.\n\n"
        f"Review it here: {review_url(request)}\n"
    )
    _store(_rows_for_teams(request, NotificationEvent.OPENED, teams, subject, body, _team_members([t.pk for t in teams])),
           [request.pk])


def queue_reminders(waiting: dict[ChangeRequest, list[Team]]) -> None:
    """Members of the teams that have not acknowledged yet are reminded before the deadline
    (a batch of requests: one query for the members, one insert)."""
    members = _team_members(sorted({t.pk for teams in waiting.values() for t in teams}))
    rows: list[Notification] = []
    for request, teams in waiting.items():
        subject = f"[{settings.SITE_NAME}] Reminder: {request.contract.name} {request.proposed_version} waits for your team"
        body = (
            f"The breaking change to {request.contract.name} (version {request.proposed_version}) still waits for your "
            f"team's answer. Its deadline is {request.deadline_at:%Y-%m-%d %H:%M} UTC; after it, the request is "
            f"escalated to the governance admins.\n\nReview it here: {review_url(request)}\n"
        )
        rows += _rows_for_teams(request, NotificationEvent.REMINDER, teams, subject, body, members)
    _store(rows, [r.pk for r in waiting])


def queue_escalations(waiting: dict[ChangeRequest, list[str]], owner_emails: dict[int, list[str]]) -> None:
    """The governance admins and the owner hear that the deadline passed with teams still
    waiting (`waiting`: request -> "team (status)" labels; a batch: one query, one insert)."""
    admins = set(
        get_user_model().objects.filter(Q(is_staff=True) | Q(is_superuser=True), is_active=True)
        .exclude(email="").values_list("email", flat=True)
    )
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
            rows.append(Notification(change_request=request, event=NotificationEvent.ESCALATED, channel=Channel.EMAIL,
                                     recipient=email, subject=subject, body=body))
        owner_team = request.owner_team
        if owner_team is not None and owner_team.webhook_url:
            rows.append(Notification(change_request=request, event=NotificationEvent.ESCALATED, channel=Channel.WEBHOOK,
                                     recipient=owner_team.webhook_url, team=owner_team, subject=subject, body=body,
                                     payload=_payload(request, NotificationEvent.ESCALATED, owner_team)))
    _store(rows, [r.pk for r in waiting])


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
    _store(_rows_for_teams(request, NotificationEvent.APPROVED, [team], subject, body, _team_members([team.pk])),
           [request.pk])


# --- sending -------------------------------------------------------------------

def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _send_email(notification: Notification) -> None:
    EmailMessage(notification.subject, notification.body, to=[notification.recipient]).send(fail_silently=False)


def _send_webhook(notification: Notification) -> None:
    payload = {**notification.payload, "delivery": notification.pk}
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "dataset-registry-webhook/1",
        "X-Registry-Event": payload.get("event", ""),
        "X-Registry-Delivery": str(notification.pk),
    }
    secret = notification.team.webhook_secret if notification.team_id else ""
    if secret:
        headers["X-Registry-Signature"] = sign(secret, body)
    req = urllib.request.Request(notification.recipient, data=body, headers=headers, method="POST")  # noqa: S310 - admin-set URL
    with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_SECONDS) as response:  # noqa: S310
        if not 200 <= response.status < 300:
            raise OSError(f"webhook answered HTTP {response.status}")


def _claim(notification: Notification) -> bool:
    now = timezone.now()
    claimed = (
        Notification.objects.unsent().filter(pk=notification.pk)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=now + CLAIM_FOR, attempts=F("attempts") + 1)
    )
    return claimed == 1


def deliver(notification: Notification) -> bool:
    """Send one notification unless it was sent or is being sent; True once it is sent."""
    if not _claim(notification):
        return Notification.objects.filter(pk=notification.pk, sent_at__isnull=False).exists()
    try:
        if notification.channel == Channel.EMAIL:
            _send_email(notification)
        else:
            _send_webhook(notification)
    except Exception as exc:  # any failure of the far side means "try again later"
        attempts = Notification.objects.values_list("attempts", flat=True).get(pk=notification.pk)
        gave_up = timezone.now() if attempts >= MAX_ATTEMPTS else None
        Notification.objects.filter(pk=notification.pk).update(
            claimed_until=None, last_error=f"{type(exc).__name__}: {exc}"[:2000], gave_up_at=gave_up)
        log.warning("Notification %s to %s failed (attempt %s): %s", notification.pk, notification.recipient, attempts, exc)
        return False
    Notification.objects.filter(pk=notification.pk).update(sent_at=timezone.now(), claimed_until=None, last_error="")
    return True


def deliver_pending(change_request_id: int | None = None, *, limit: int = 500,
                    older_than: timedelta | None = None) -> tuple[int, int]:
    """Send the unsent notifications (of one request, or all; only those queued more than
    `older_than` ago, if given); returns (sent, failed)."""
    pending = Notification.objects.unsent().select_related("team").order_by("created_at", "id")
    if change_request_id is not None:
        pending = pending.filter(change_request_id=change_request_id)
    if older_than is not None:
        pending = pending.filter(created_at__lt=timezone.now() - older_than)
    sent = failed = 0
    for notification in pending[:limit]:
        if deliver(notification):
            sent += 1
        else:
            failed += 1
    return sent, failed
