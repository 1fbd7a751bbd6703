"""Celery entry points of lanes."""

from __future__ import annotations

from celery import shared_task

from lanes import reminders


@shared_task(name="lanes.sunset_reminders")
def sunset_reminders() -> dict:
    """Queue the due 30/7/1-day sunset reminders and send what is unsent (beat: LANE_REMINDER_INTERVAL)."""
    return reminders.sunset_pass()


@shared_task(name=reminders.DELIVER_TASK)
def deliver_lane_notices() -> dict:
    sent, failed = reminders.deliver_notices()
    return {"sent": sent, "failed": failed}
