"""Celery entry points of lanes."""

from __future__ import annotations

from lanes import reminders
from registry.celery import app


@app.task(name="lanes.sunset_reminders")
def sunset_reminders() -> dict:
    """Queue the due 30/7/1-day sunset reminders and send what is unsent (beat: LANE_REMINDER_INTERVAL)."""
    return reminders.sunset_pass()


@app.task(name=reminders.DELIVER_TASK)
def deliver_lane_notices() -> dict:
    sent, failed = reminders.deliver_notices()
    return {"sent": sent, "failed": failed}
