"""Celery entry points of change requests.

The task names keep their first app's prefix: tasks already queued in the broker,
and beat entries, name them."""

from __future__ import annotations

from django.conf import settings

from change_requests import digest, notifications
from change_requests.workflows import run_clock
from registry.celery import app
from registry.outbox import MAX_ATTEMPTS


class DeliveryIncomplete(Exception):
    """Some notifications of a request could not be sent yet; the task retries."""


@app.task(
    bind=True, name=notifications.DELIVER_TASK,
    autoretry_for=(DeliveryIncomplete,), retry_backoff=max(1, int(settings.CHANGE_REQUEST_RETRY_BACKOFF.total_seconds())),
    retry_backoff_max=1800, retry_jitter=True, max_retries=MAX_ATTEMPTS,
)
def deliver_change_request_notifications(self, change_request_id: int) -> dict:
    """Send the unsent notifications of one request (rows already sent are skipped)."""
    sent, failed = notifications.deliver_pending(change_request_id)
    if failed:
        raise DeliveryIncomplete(f"{failed} notification(s) of change request #{change_request_id} not sent yet")
    return {"sent": sent}


@app.task(name="contracts_app.change_request_clock")
def change_request_clock() -> dict:
    """Reminders, escalations and lost deliveries (beat: CHANGE_REQUEST_CLOCK_INTERVAL)."""
    return run_clock().as_dict()


@app.task(name="change_requests.inbox_digest")
def inbox_digest() -> dict:
    """Each person's and team channel's inbox, once a day (beat: INBOX_DIGEST_HOUR UTC)."""
    return digest.run_digest()
