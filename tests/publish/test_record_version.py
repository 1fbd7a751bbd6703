"""Published versions are immutable; the upload waits for the commit."""

from __future__ import annotations

import pytest

from contracts_app.models import (
    AuditAction,
    ContentChanged,
    Contract,
    ContractVersion,
    VersionInUse,
)
from contracts_app.publishing import InvalidDocument, record_version
from registry.models import AuditEvent
from tests.publish.conftest import RecordingStore, cell_count, with_column

pytestmark = pytest.mark.django_db


def test_recording_a_version_creates_the_contract_and_audits_it(owner, owner_team, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        cv = record_version(cell_count(), by=owner, store=local_store)
    contract = Contract.objects.get(name="lab.analytics.cell_count")
    assert (contract.owner_team, contract.schema_type, contract.meta["tier"]) == (owner_team, "dataframe", "bronze")
    assert cv.store_key == "contracts/domains/lab/analytics/cell_count/v1_0/schema.yaml"
    assert AuditEvent.objects.filter(action=AuditAction.VERSION_PUBLISHED, object_id=str(cv.pk)).exists()
    cv.refresh_from_db()
    assert cv.is_in_store and local_store.exists(cv.store_key)


def test_the_upload_waits_for_the_callers_transaction_to_commit(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    recording = RecordingStore(local_store)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        record_version(cell_count(), by=owner, store=recording)
        assert recording.writes == []  # nothing leaves the process inside the transaction
    assert len(callbacks) == 1
    callbacks[0]()
    assert recording.writes == ["contracts/domains/lab/analytics/cell_count/v1_0/schema.yaml", "contracts/index/schema_index.csv"]


def test_the_same_content_again_is_a_no_op(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = record_version(cell_count(), by=owner, store=local_store)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = record_version(cell_count(), by=owner, store=local_store)
    assert again.pk == first.pk and ContractVersion.objects.count() == 1
    assert callbacks == []  # already in the store: no second upload


def test_key_order_does_not_make_identical_content_look_different(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    document = cell_count()
    reordered = {key: document[key] for key in reversed(list(document))}
    with django_capture_on_commit_callbacks(execute=True):
        first = record_version(document, by=owner, store=local_store)
        assert record_version(reordered, by=owner, store=local_store).pk == first.pk


def test_different_content_under_a_published_version_is_refused(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        record_version(cell_count(), by=owner, store=local_store)
    changed = with_column(cell_count(), {"name": "vcd", "dtype": "float64", "nullable": True})
    with pytest.raises(ContentChanged, match=r"already published with different content.*1\.1"):
        record_version(changed, by=owner, store=local_store)
    assert ContractVersion.objects.get().checksum != ""


def test_a_document_failing_the_gates_records_nothing(owner, local_store):
    bad = cell_count()
    bad["columns"][1]["dtype"] = "double"
    with pytest.raises(InvalidDocument, match="not canonical.*float64.*re-export"):
        record_version(bad, by=owner, store=local_store)
    assert not Contract.objects.exists()


def test_unknown_and_non_canonical_dtypes_are_refused_with_different_messages(owner, local_store):
    from contracts_app.publishing import gate_errors

    doc = cell_count()
    doc["columns"][0]["dtype"] = "decimal128"
    doc["columns"][1]["dtype"] = "float"
    unknown, non_canonical = gate_errors(doc)
    assert unknown.startswith("column 'run_row_id': unknown dtype 'decimal128'")
    assert non_canonical.startswith("column 'viability': dtype 'float' is not canonical")
    assert "re-export" in non_canonical and "re-export" not in unknown


def test_a_missing_schema_type_is_a_hard_failure():
    from contracts_app.publishing import gate_errors

    doc = cell_count()
    del doc["schema"]["schema_type"]
    assert gate_errors(doc)[0].startswith("schema.schema_type: is missing")


def test_a_version_that_consumers_depend_on_cannot_be_deleted(owner, owner_team, dataset, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        cv = record_version(cell_count(), by=owner, store=local_store)
    cv.contract.bind(dataset, by=owner)
    with pytest.raises(VersionInUse, match="have consumers"):
        cv.delete_unused(by=owner)
    with pytest.raises(VersionInUse):
        cv.delete()
    assert ContractVersion.objects.filter(pk=cv.pk).exists()


def test_a_version_nobody_depends_on_can_be_deleted_and_is_audited(owner, owner_team, unowned_dataset, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        cv = record_version(cell_count(), by=owner, store=local_store)
    cv.contract.bind(unowned_dataset, by=owner)  # bound, but no consumers
    cv.delete_unused(by=owner)
    assert not ContractVersion.objects.exists()
    assert AuditEvent.objects.filter(action=AuditAction.VERSION_DELETED).exists()
