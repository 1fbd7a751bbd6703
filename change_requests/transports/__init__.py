"""How a notification travels: one module per kind of channel, and this table.

A transport module has:
- `LABEL`: what people call it;
- `recipient(settings) -> str`: where a team channel of this kind sends (stored on the row);
- `settings_problems(settings) -> list[str]`: what is wrong with a channel's settings;
- `send(notification, settings) -> None`: send one row; raise on any failure (it is retried).

Adding a kind (a chat room, say) is one module here plus one line in TRANSPORTS.
"""

from __future__ import annotations

from types import ModuleType

from change_requests.transports import email, webhook

TRANSPORTS: dict[str, ModuleType] = {
    "email": email,
    "webhook": webhook,
}

EMAIL = "email"
WEBHOOK = "webhook"


def transport_for(kind: str) -> ModuleType:
    try:
        return TRANSPORTS[kind]
    except KeyError:
        raise LookupError(f"No transport for channel kind {kind!r}; known: {', '.join(TRANSPORTS)}.") from None
