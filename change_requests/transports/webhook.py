"""Signed webhooks: the notification's JSON payload POSTed to the channel's URL.

The body is signed with HMAC-SHA256 under the channel's `secret`: header
`X-Registry-Signature: sha256=<hex>`. `X-Registry-Delivery` carries the
notification id, so a receiver can drop a redelivery after a crash between
sending and marking.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.request

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

LABEL = "Signed webhook"
TIMEOUT_SECONDS = 10


def recipient(settings: dict) -> str:
    return str(settings.get("url", ""))


def settings_problems(settings: dict) -> list[str]:
    problems = []
    try:
        URLValidator(schemes=["http", "https"])(settings.get("url", ""))
    except ValidationError:
        problems.append('A webhook channel needs "url": an http(s) URL.')
    if not isinstance(settings.get("secret", ""), str):
        problems.append('A webhook\'s "secret" is a string (it signs each body).')
    return problems


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def send(notification, settings: dict) -> None:
    payload = {**notification.payload, "delivery": notification.pk}
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "dataset-registry-webhook/1",
        "X-Registry-Event": payload.get("event", ""),
        "X-Registry-Delivery": str(notification.pk),
    }
    secret = settings.get("secret") or ""
    if secret:
        headers["X-Registry-Signature"] = sign(secret, body)
    req = urllib.request.Request(notification.recipient, data=body, headers=headers, method="POST")  # noqa: S310 - admin-set URL
    with urllib.request.urlopen(req, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
        if not 200 <= response.status < 300:
            raise OSError(f"webhook answered HTTP {response.status}")
