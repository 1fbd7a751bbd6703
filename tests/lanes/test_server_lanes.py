"""Lanes on the service: per-lane compatibility, selectors on the API, dates in the index,
setting and extending dates (audited), and the document's own lane dates."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from contracts_app.publishing import (
    BREAKING,
    PUBLISHED,
    REFUSED,
    publish_document,
    published_below,
    upload_version,
)
from contracts_app.store import SCHEMA_INDEX_KEY
from lanes.models import Lane, LaneAction, LaneError
from registry.models import AuditEvent
from tests.conftest import bearer

from .conftest import optional_column, version, without_viability


def today():
    return timezone.localdate()


def test_a_version_in_an_old_lane_is_checked_against_its_own_lane(two_lanes):
    assert [v.version for v in published_below(two_lanes, "2.2")] == ["2.0", "2.1"]
    assert [v.version for v in published_below(two_lanes, "3.1")] == ["2.0", "2.1", "3.0"]


def test_an_old_lane_keeps_receiving_minor_versions_after_a_newer_major(two_lanes, owner):
    outcome = publish_document(version("2.2", extra=optional_column("operator"), description="2.x lives on"), by=owner)
    assert outcome.status == PUBLISHED, outcome.message
    assert two_lanes.latest_version().version == "3.0"  # latest stays in the newest lane


def test_a_breaking_change_inside_an_old_lane_is_breaking_against_that_lane(two_lanes, owner):
    outcome = publish_document(version("2.2", without="run_date"), by=owner, dry_run=True)
    assert outcome.status in (BREAKING, REFUSED)
    assert "run_date" in str(outcome.report.to_dict())


def test_without_a_newer_major_a_transitive_mode_checks_every_version_below(dataset, owner):
    from contracts_app.publishing import record_version

    record_version(version("1.0"), by=owner)
    contract = record_version(without_viability("2.0"), by=owner).contract
    contract.set_mode("BACKWARD_TRANSITIVE", by=owner)
    assert [v.version for v in published_below(contract, "2.1")] == ["1.0", "2.0"]
    record_version(without_viability("3.0"), by=owner)
    assert [v.version for v in published_below(contract, "2.1")] == ["2.0"]


def test_the_api_resolves_lane_selectors_and_latest(two_lanes, client, owner):
    client.force_login(owner)
    base = "/api/contracts/lab.analytics.cell_count/versions"
    assert client.get(f"{base}/2.x/").json()["version"] == "2.1"
    assert client.get(f"{base}/2/").json()["version"] == "2.1"
    assert client.get(f"{base}/latest/").json()["version"] == "3.0"
    assert client.get(f"{base}/2.0/").json()["version"] == "2.0"
    assert client.get(f"{base}/7.x/").status_code == 404


def test_a_deprecated_lane_answers_with_a_warning_and_a_sunset_one_with_410(two_lanes, client, owner):
    client.force_login(owner)
    lane = Lane.of(two_lanes, 2)
    lane.set_dates(deprecation_date=today() - timedelta(days=1), sunset_date=today() + timedelta(days=30), by=owner)
    response = client.get("/api/contracts/lab.analytics.cell_count/versions/2.x/document/")
    assert response.status_code == 200
    assert "deprecated since" in response["Warning"] and str(today() + timedelta(days=30)) in response["Warning"]
    lane.set_dates(deprecation_date=today() - timedelta(days=10), sunset_date=today(), by=owner)
    gone = client.get("/api/contracts/lab.analytics.cell_count/versions/2.x/document/")
    assert gone.status_code == 410 and gone.json()["code"] == "lane_sunset"
    explicit = client.get("/api/contracts/lab.analytics.cell_count/versions/2.1/document/")
    assert explicit.status_code == 200 and "reached its sunset" in explicit["Warning"]
    assert client.get("/api/contracts/lab.analytics.cell_count/versions/latest/").json()["version"] == "3.0"


def test_the_index_carries_each_lane_s_dates(two_lanes, owner, contract_store, django_capture_on_commit_callbacks):
    for published in two_lanes.versions.all():
        upload_version(published.pk)
    with django_capture_on_commit_callbacks(execute=True):
        Lane.of(two_lanes, 2).set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=60), by=owner)
    rows = list(csv.DictReader(io.StringIO((contract_store / SCHEMA_INDEX_KEY).read_text())))
    by_version = {r["version"]: r for r in rows}
    assert by_version["2.1"]["sunset_date"] == str(today() + timedelta(days=60))
    assert by_version["3.0"]["sunset_date"] == ""


def test_setting_dates_is_audited_and_only_for_the_owner_team(two_lanes, owner, consumer):
    lane = Lane.of(two_lanes, 2)
    with pytest.raises(PermissionDenied):
        lane.set_dates(deprecation_date=today(), sunset_date=None, by=consumer)
    lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=90), by=owner)
    event = AuditEvent.objects.get(action=LaneAction.DATES_SET)
    assert event.after["sunset_date"] == str(today() + timedelta(days=90)) and event.actor_label == "alice"


def test_a_sunset_before_deprecation_is_refused(two_lanes, owner):
    with pytest.raises(LaneError, match="cannot come before"):
        Lane.of(two_lanes, 2).set_dates(deprecation_date=today(), sunset_date=today() - timedelta(days=1), by=owner)


def test_only_a_governance_admin_extends_a_sunset_and_it_is_audited(two_lanes, owner, admin):
    lane = Lane.of(two_lanes, 2)
    lane.set_dates(deprecation_date=today() - timedelta(days=5), sunset_date=today(), by=owner)
    with pytest.raises(PermissionDenied):
        lane.extend(until=today() + timedelta(days=14), by=owner, reason="please")
    lane.extend(until=today() + timedelta(days=14), by=admin, reason="Analytics' quarter close")
    assert not lane.is_past_sunset(today())
    event = AuditEvent.objects.get(action=LaneAction.EXTENDED)
    assert event.after["reason"] == "Analytics' quarter close" and event.after["extended_until"]


def test_a_document_field_sets_its_lane_s_dates(two_lanes, owner):
    document = version("2.2", extra=optional_column("operator"), description="with dates")
    document["schema"]["deprecation_date"] = str(today())
    document["schema"]["sunset_date"] = str(today() + timedelta(days=45))
    outcome = publish_document(document, by=owner)
    assert outcome.status == PUBLISHED, outcome.message
    lane = Lane.objects.get(contract=two_lanes, major=2)
    assert lane.sunset_date == today() + timedelta(days=45)
    assert AuditEvent.objects.get(action=LaneAction.DATES_SET).after["from"] == "the contract document"


def test_the_lanes_api_sets_dates_and_refuses_others(two_lanes, client, owner, consumer, owner_token):
    _, secret = owner_token
    url = "/api/contracts/lab.analytics.cell_count/lanes/2/"
    sunset = str(today() + timedelta(days=40))
    response = client.patch(url, {"deprecation_date": str(today()), "sunset_date": sunset},
                            content_type="application/json", **bearer(secret))
    assert response.status_code == 200, response.content
    assert response.json()["sunset_date"] == sunset and response.json()["deprecated"] is True
    client.force_login(consumer)
    assert client.patch(url, {"sunset_date": sunset}, content_type="application/json").status_code == 403
    listed = client.get("/api/contracts/lab.analytics.cell_count/lanes/").json()
    assert [lane["label"] for lane in listed] == ["3.x", "2.x"]
    assert client.get("/api/contracts/lab.analytics.cell_count/lanes/9/").status_code == 404
