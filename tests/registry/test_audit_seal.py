"""Audit rows take their time from the database and carry the app's seal, so a row the
app did not write (with any actor, at any time) is found out: registry.auditseal and
`manage.py verify_audit_log`. Here on the test database; tests/registry/test_audit_roles.py
does it with the real non-owner serving role."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from registry.models import AuditEvent

pytestmark = pytest.mark.django_db

FORGED = ("INSERT INTO registry_auditevent (actor_id, actor_label, action, object_type, object_id, object_repr, at, seal)"
          " VALUES (%s, 'gina', 'dataset.owner_assigned', 'registry.dataset', '1', 'x', '2020-01-01T00:00:00Z', %s)"
          " RETURNING id")


def forge(actor_id=None, seal: str = "") -> AuditEvent:
    with connection.cursor() as cursor:
        cursor.execute(FORGED, [actor_id, seal])
        return AuditEvent.objects.get(pk=cursor.fetchone()[0])


def verify() -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("verify_audit_log", stdout=out)
        return 0, out.getvalue()
    except SystemExit as exc:
        return exc.code, out.getvalue()


def test_a_row_the_app_records_is_sealed_and_reads_back_sealed(dataset, owner):
    after = {"owner_team": "checkout", "ratio": 2.0, "big": 1e16, "text": "café ✓", "list": [1, 0.5, None, True]}
    recorded = AuditEvent.record(owner, "test.recorded", dataset, before=None, after=after)
    assert len(recorded.seal) == 64 and recorded.is_sealed
    assert AuditEvent.objects.get(pk=recorded.pk).is_sealed  # jsonb gives 1e16 back as an integer


def test_bulk_inserted_rows_are_sealed_too(dataset, owner):
    AuditEvent.objects.bulk_create([AuditEvent(**AuditEvent.fields_for(owner, "test.bulk", dataset, after={"n": n}))
                                    for n in range(3)])
    assert all(row.is_sealed for row in AuditEvent.objects.filter(action="test.bulk"))


def test_the_owner_role_keeps_the_time_it_gives_the_serving_role_cannot(db):
    # The owner role (migrations, the demo's dated timeline) could rewrite the table anyway;
    # the serving role's insert is stamped by the database (test_audit_roles).
    row = forge()
    assert row.at < datetime(2025, 1, 1, tzinfo=UTC)


def test_a_row_written_by_hand_fails_its_seal_whatever_actor_it_claims(dataset, owner, admin):
    genuine = AuditEvent.record(owner, "test.recorded", dataset)
    unsealed, copied = forge(admin.pk), forge(admin.pk, seal=genuine.seal)
    assert not unsealed.is_sealed and not copied.is_sealed  # a seal is worth nothing on other content
    code, out = verify()
    assert code == 1
    assert f"#{unsealed.pk} " in out and f"#{copied.pk} " in out and f"#{genuine.pk} " not in out
    assert "gina dataset.owner_assigned registry.dataset 1 (no seal)" in out
    assert "(seal does not match)" in out and "2 of 3 audit row(s) were not written by the app" in out


def test_verify_audit_log_passes_when_every_row_is_the_apps(dataset, owner):
    AuditEvent.record(owner, "test.recorded", dataset)
    assert verify() == (0, "Checking 1 audit rows.\nAll 1 sealed audit row(s) are the app's.\n")


def test_rows_sealed_under_a_retired_secret_key_still_verify(dataset, owner, settings):
    row = AuditEvent.record(owner, "test.recorded", dataset)
    settings.SECRET_KEY_FALLBACKS, settings.SECRET_KEY = [settings.SECRET_KEY], "a-new-secret-key-" + "x" * 40
    assert AuditEvent.objects.get(pk=row.pk).is_sealed
    settings.SECRET_KEY_FALLBACKS = []
    assert not AuditEvent.objects.get(pk=row.pk).is_sealed
