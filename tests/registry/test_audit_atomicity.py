"""An audit row is written in the same transaction as the change it records:
if the audit insert fails, the change is rolled back too, and vice versa."""

import pytest
from django.db import DatabaseError, connection

from registry.models import AuditEvent, Consumer


def test_a_failed_audit_insert_rolls_back_the_claim(unowned_dataset, owner_team, owner, monkeypatch):
    def broken_record(*args, **kwargs):
        raise DatabaseError("audit insert failed")

    monkeypatch.setattr(AuditEvent, "record", broken_record)
    with pytest.raises(DatabaseError):
        unowned_dataset.claim(owner_team, owner=owner, by=owner)

    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team is None


def test_a_failed_audit_insert_rolls_back_the_consumer_registration(dataset, other_team, outsider, monkeypatch):
    monkeypatch.setattr(AuditEvent, "record", lambda *a, **k: (_ for _ in ()).throw(DatabaseError("boom")))
    with pytest.raises(DatabaseError):
        dataset.register_consumer(other_team, by=outsider)
    assert not Consumer.objects.filter(team=other_team).exists()


@pytest.mark.django_db(transaction=True)
def test_claim_and_its_audit_row_commit_together(unowned_dataset, owner_team, owner):
    unowned_dataset.claim(owner_team, owner=owner, by=owner)

    # Read back through a fresh connection-level query: both are committed.
    with connection.cursor() as cursor:
        cursor.execute("SELECT owner_team_id FROM registry_dataset WHERE id = %s", [unowned_dataset.pk])
        assert cursor.fetchone()[0] == owner_team.pk
        cursor.execute("SELECT count(*) FROM registry_auditevent WHERE object_id = %s", [str(unowned_dataset.pk)])
        assert cursor.fetchone()[0] == 1
