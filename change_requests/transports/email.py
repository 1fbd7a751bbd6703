"""E-mail: to a person (a team member, an admin) or to a team's list address."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.core.validators import validate_email

LABEL = "E-mail"


def recipient(settings: dict) -> str:
    return str(settings.get("address", ""))


def settings_problems(settings: dict) -> list[str]:
    try:
        validate_email(settings.get("address", ""))
    except ValidationError:
        return ['An e-mail channel needs "address": a valid e-mail address.']
    return []


def send(notification, settings: dict) -> None:
    EmailMessage(notification.subject, notification.body, to=[notification.recipient]).send(fail_silently=False)
