"""publish_contracts against a real S3 server (SeaweedFS)."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import call_command

from contracts_app.models import Contract, ContractVersion, IntegrationSpec
from contracts_app.publishing import (
    BREAKING,
    PUBLISHED,
    REFUSED,
    UNCHANGED,
    publish_document,
    upload_version,
)
from contracts_app.store import SCHEMA_INDEX_KEY, SPEC_INDEX_KEY
from tests.publish.conftest import (
    RecordingStore,
    cell_count,
    cell_count_spec,
    order_placed,
    refund_api,
    with_column,
    write_tree,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def run(root, *args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("publish_contracts", "--root", str(root), *args, stdout=out)
    except SystemExit as exc:
        return exc.code, out.getvalue()
    return 0, out.getvalue()


def index_rows(store, key=SCHEMA_INDEX_KEY) -> list[dict]:
    return list(csv.DictReader(io.StringIO(store.get(key).decode())))


def test_publish_writes_objects_and_the_index_to_s3(owner_team, tmp_path, s3_store, use_store):
    use_store(s3_store)
    root = write_tree(tmp_path, [cell_count(), order_placed(), refund_api()], [cell_count_spec()])
    status, out = run(root)
    assert status == 0, out
    assert "Published 3, unchanged 0, refused 0, breaking 0, upload failed 0; specs published 1" in out
    rows = index_rows(s3_store)
    assert [(r["name"], r["version"], r["schema_type"]) for r in rows] == [
        ("lab.analytics.cell_count", "1.0", "dataframe"),
        ("retail.checkout.order_placed", "1.0", "event"),
        ("retail.payments.refund_api", "1.0", "api"),
    ]
    assert rows[0]["key"] == "contracts/domains/lab/analytics/cell_count/v1_0/schema.yaml"
    for row in rows:
        assert s3_store.exists(row["key"])
    assert s3_store.get(rows[0]["key"]).decode() == (root / "domains/lab/analytics/cell_count/v1_0/schema.yaml").read_text()
    spec_rows = index_rows(s3_store, SPEC_INDEX_KEY)
    assert [(r["name"], r["key"], r["source_table"]) for r in spec_rows] == [
        ("lab.analytics.cell_count", "integrations/source_specs/lab/analytics/cell_count/v1_0/spec.yaml", "cell_counts")
    ]
    assert IntegrationSpec.objects.get().uploaded_at is not None


def test_republishing_the_same_tree_changes_nothing(owner_team, tmp_path, s3_store, use_store):
    use_store(s3_store)
    root = write_tree(tmp_path, [cell_count(), order_placed()], [cell_count_spec()])
    run(root)
    status, out = run(root)
    assert status == 0
    assert "Published 0, unchanged 2, refused 0, breaking 0" in out
    assert "specs published 0, unchanged 1" in out
    assert ContractVersion.objects.count() == 2


def test_changed_content_under_a_published_version_is_refused_with_exit_status_1(owner_team, tmp_path, s3_store, use_store):
    use_store(s3_store)
    run(write_tree(tmp_path, [cell_count()]))
    changed = with_column(cell_count(), {"name": "vcd", "dtype": "float64", "nullable": True})
    status, out = run(write_tree(tmp_path, [changed]))
    assert status == 1
    assert "refused" in out and "already published with different content" in out
    assert index_rows(s3_store)[0]["version"] == "1.0"
    assert ContractVersion.objects.get().document == cell_count()


def test_a_breaking_change_stops_with_a_clear_message_and_exit_status_2(owner_team, tmp_path, s3_store, use_store):
    use_store(s3_store)
    run(write_tree(tmp_path, [cell_count()]))
    # New contracts start in FULL; this one is set to BACKWARD, and the new column still breaks it.
    Contract.objects.filter(name="lab.analytics.cell_count").update(compatibility_mode="BACKWARD")
    v2 = with_column(cell_count("2.0"), {"name": "vcd", "dtype": "float64", "nullable": True})
    status, out = run(write_tree(tmp_path, [cell_count(), v2]))
    assert status == 2, out
    assert "breaking" in out and "lab.analytics.cell_count 2.0 breaks BACKWARD compatibility" in out
    # The gate opened a change request instead of publishing (tests/change_requests covers the rest).
    assert "Change request #" in out
    assert [r["version"] for r in index_rows(s3_store)] == ["1.0"]
    assert not ContractVersion.objects.filter(version="2.0").exists()


def test_dry_run_records_and_uploads_nothing(owner_team, tmp_path, s3_store, use_store):
    use_store(s3_store)
    status, out = run(write_tree(tmp_path, [cell_count(), order_placed()]), "--dry-run")
    assert status == 0
    assert "would publish" in out and "Dry run: would publish 2" in out
    assert not ContractVersion.objects.exists()
    assert not s3_store.exists(SCHEMA_INDEX_KEY)


def test_a_document_whose_path_disagrees_with_its_name_is_refused(tmp_path, s3_store, use_store):
    use_store(s3_store)
    root = write_tree(tmp_path, [cell_count()])
    moved = root / "domains/lab/analytics/cell_count/v2_0"
    (root / "domains/lab/analytics/cell_count/v1_0").rename(moved)
    status, out = run(root)
    assert status == 1
    assert "schema.version: '1.0' does not match its folder 'v2_0'" in out


def test_objects_are_written_before_the_index(owner_team, s3_store, owner):
    recording = RecordingStore(s3_store)
    outcome = publish_document(cell_count(), by=owner, store=recording)
    assert outcome.status == PUBLISHED
    assert recording.writes == ["contracts/domains/lab/analytics/cell_count/v1_0/schema.yaml", SCHEMA_INDEX_KEY]
    publish_document(order_placed(), by=owner, store=recording)
    assert recording.writes[2:] == ["contracts/domains/retail/checkout/order_placed/v1_0/schema.yaml", SCHEMA_INDEX_KEY]
    assert [r["name"] for r in index_rows(s3_store)] == ["lab.analytics.cell_count", "retail.checkout.order_placed"]


def test_a_failed_upload_is_retried_and_reported_and_leaves_nothing_half_published(owner_team, s3_store, owner, settings):
    import contracts_app.publishing as publishing

    publishing.UPLOAD_BACKOFF_S = 0.01
    try:
        # The object goes up, but every attempt at the index fails: the index keeps no entry.
        failing = RecordingStore(s3_store, fail_keys={"schema_index.csv"})
        outcome = publish_document(cell_count(), by=owner, store=failing)
        assert outcome.status == PUBLISHED and "simulated outage" in outcome.upload_error
        assert failing.attempts.count(SCHEMA_INDEX_KEY) == publishing.UPLOAD_ATTEMPTS
        assert not s3_store.exists(SCHEMA_INDEX_KEY)
        cv = ContractVersion.objects.get()
        assert not cv.is_in_store and "simulated outage" in cv.upload_error

        # A later publish of the same content retries the upload and completes it.
        flaky = RecordingStore(s3_store, fail_keys={"schema.yaml"}, fail_times=1)
        again = publish_document(cell_count(), by=owner, store=flaky)
        assert again.status == UNCHANGED and again.upload_error == ""
        assert [r["version"] for r in index_rows(s3_store)] == ["1.0"]
    finally:
        publishing.UPLOAD_BACKOFF_S = 0.5


def test_an_unreachable_store_is_reported(owner_team, owner):
    import contracts_app.publishing as publishing
    from contracts_app.store import S3Store

    publishing.UPLOAD_BACKOFF_S = 0.01
    try:
        dead = S3Store(bucket="nowhere", endpoint_url="http://127.0.0.1:9", access_key_id="x", secret_access_key="y")
        outcome = publish_document(order_placed(), by=owner, store=dead)
    finally:
        publishing.UPLOAD_BACKOFF_S = 0.5
    assert outcome.status == PUBLISHED and "could not write" in outcome.upload_error
    assert not ContractVersion.objects.get().is_in_store
    assert upload_version(ContractVersion.objects.get().pk, store=dead) is False


def test_the_outcome_carries_the_checkers_report(owner_team, owner, local_store):
    first = publish_document(cell_count(), by=owner, store=local_store)
    assert first.report is not None and first.report.compatible
    v2 = with_column(cell_count("2.0"), {"name": "vcd", "dtype": "float64", "nullable": True})
    outcome = publish_document(v2, by=owner, store=local_store)
    assert outcome.status == BREAKING and outcome.report.changes
    assert outcome.to_dict()["report"]["compatible"] is False
    bad = cell_count("3.0")
    bad["schema"]["schema_type"] = "spreadsheet"
    assert publish_document(bad, by=owner, store=local_store).status == REFUSED
