"""Deleting versions and specs in the admin keeps the store's index true (issue 15, point 10).

The store here is a real S3 server (SeaweedFS, tests.servers); the thin client
reads the index the deletes rewrite."""

from __future__ import annotations

import csv
import io

import pytest

from contracts_app.models import AuditAction, ContractVersion, IntegrationSpec
from contracts_app.publishing import delete_version, record_version, upload_version
from contracts_app.specs import record_spec
from contracts_app.store import SCHEMA_INDEX_KEY, SPEC_INDEX_KEY
from registry.models import AuditEvent
from tests.publish.conftest import RecordingStore, cell_count, cell_count_spec
from tests.publish.test_client_backends import s3_registry

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def indexed(store, key=SCHEMA_INDEX_KEY) -> list[tuple[str, str]]:
    return [(row["name"], row["version"]) for row in csv.DictReader(io.StringIO(store.get(key).decode()))]


@pytest.fixture
def published(owner, owner_team, s3_store, use_store, django_capture_on_commit_callbacks):
    """cell_count 1.0 and 1.1, in the S3 store and its index; the store is CONTRACT_STORE."""
    use_store(s3_store)
    with django_capture_on_commit_callbacks(execute=True):
        versions = [record_version(cell_count(v), by=owner) for v in ("1.0", "1.1")]
    assert indexed(s3_store) == [("lab.analytics.cell_count", "1.0"), ("lab.analytics.cell_count", "1.1")]
    return versions


def test_a_version_deleted_in_the_admin_leaves_the_s3_index(client, admin, published, s3_store,
                                                            django_capture_on_commit_callbacks):
    _, newest = published
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/contracts_app/contractversion/{newest.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not ContractVersion.objects.filter(pk=newest.pk).exists()
    assert indexed(s3_store) == [("lab.analytics.cell_count", "1.0")]
    assert s3_registry(s3_store).versions("lab.analytics.cell_count") == ["1.0"]
    deleted = AuditEvent.objects.get(action=AuditAction.VERSION_DELETED)
    assert deleted.actor == admin and deleted.before["version"] == "1.1" and deleted.before["in_store"] is True


def test_deleting_selected_versions_rewrites_the_index_once_they_are_gone(client, admin, published, s3_store,
                                                                          django_capture_on_commit_callbacks):
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/contracts_app/contractversion/", {
            "action": "delete_selected", "_selected_action": [v.pk for v in published], "post": "yes"})

    assert response.status_code == 302
    assert indexed(s3_store) == []
    assert AuditEvent.objects.filter(action=AuditAction.VERSION_DELETED, actor=admin).count() == 2


def test_a_version_consumers_depend_on_is_refused_on_the_confirmation_page(client, admin, published, dataset, owner):
    published[0].contract.bind(dataset, by=owner)
    client.force_login(admin)
    page = client.get(f"/admin/contracts_app/contractversion/{published[1].pk}/delete/").content.decode()
    assert "have consumers that depend on its published versions" in page
    assert "Yes, I’m sure" not in page  # Django offers no confirmation for a protected row
    client.post(f"/admin/contracts_app/contractversion/{published[1].pk}/delete/", {"post": "yes"})
    assert ContractVersion.objects.count() == 2
    assert not AuditEvent.objects.filter(action=AuditAction.VERSION_DELETED).exists()


def test_a_spec_deleted_in_the_admin_leaves_the_spec_index(client, admin, published, s3_store,
                                                           django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        spec, _ = record_spec(cell_count_spec("1.0"), by=admin)
    assert indexed(s3_store, SPEC_INDEX_KEY) == [("lab.analytics.cell_count", "1.0")]
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/admin/contracts_app/integrationspec/{spec.pk}/delete/", {"post": "yes"}).status_code == 302

    assert not IntegrationSpec.objects.exists()
    assert indexed(s3_store, SPEC_INDEX_KEY) == []
    assert AuditEvent.objects.get(action=AuditAction.SPEC_DELETED).before["contract"] == "lab.analytics.cell_count"


def test_an_index_the_store_refused_to_rewrite_is_true_again_after_the_next_publish(
        owner, admin, published, s3_store, django_capture_on_commit_callbacks):
    outage = RecordingStore(s3_store, fail_keys={SCHEMA_INDEX_KEY})
    with django_capture_on_commit_callbacks(execute=True):
        delete_version(published[1], by=admin, store=outage)  # deleted; its index rewrite failed (logged)
    assert indexed(s3_store) == [("lab.analytics.cell_count", "1.0"), ("lab.analytics.cell_count", "1.1")]

    with django_capture_on_commit_callbacks(execute=True):
        record_version(cell_count("1.2"), by=owner)
    assert indexed(s3_store) == [("lab.analytics.cell_count", "1.0"), ("lab.analytics.cell_count", "1.2")]
    assert upload_version(ContractVersion.objects.get(version="1.2").pk)  # and stays so
