"""Seals on audit rows: what the serving database role cannot forge.

The serving role may INSERT into the audit log (the app records what people do),
so on its own the table cannot tell the app's rows from rows someone with that
role's password wrote by hand. Two things can:

1. **The time is the database's.** On PostgreSQL a trigger (migration
   `0010_audit_rows_sealed`) sets `at` to the transaction's `now()` on every
   insert, whatever the statement says: no row can be back-dated.
2. **The rest is sealed by the app.** `seal(fields)` is an HMAC-SHA256, keyed by
   the app's SECRET_KEY (never in the database), over the actor, the action, the
   object and `before`/`after`; every insert path (`AuditEvent.save`,
   `AuditEvent.fields_for` for bulk inserts) stores it in `seal`. A row written by
   anything that lacks the key, with any actor, fails `is_sealed`, and
   `manage.py verify_audit_log` lists it.

A session setting naming the actor (`SET LOCAL registry.actor = …`) would not do:
any role may set it. What a seal cannot stop is a copy of a genuine row's
content, stamped with the time it was copied; verify_audit_log shows both.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from django.conf import settings
from django.utils.crypto import salted_hmac

SALT = "registry.audit-log"
SEALED_FIELDS = ("actor_id", "actor_label", "action", "object_type", "object_id", "object_repr", "before", "after")


def _plain(value: Any) -> Any:
    # jsonb keeps numbers as numerics: 1e16 comes back as 10000000000000000, 2.0 as 2.0.
    # Whole floats are sealed as integers so a row reads back as it was sealed.
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _message(fields: dict) -> str:
    return json.dumps([_plain(fields.get(name)) for name in SEALED_FIELDS], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def seal(fields: dict, *, secret: str | None = None) -> str:
    """The seal of one row's column values (`actor_id`, not `actor`)."""
    return salted_hmac(SALT, _message(fields), secret=secret or settings.SECRET_KEY, algorithm="sha256").hexdigest()


def is_sealed(fields: dict, stored: str) -> bool:
    """Whether `stored` is the seal of `fields` under SECRET_KEY or one of SECRET_KEY_FALLBACKS."""
    if not stored:
        return False
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return any(hmac.compare_digest(seal(fields, secret=secret), stored) for secret in secrets)
