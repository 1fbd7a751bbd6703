"""Marquez's own test events (tests/lineage/marquez_events): what Marquez
stores, the registry stores, less any facet that breaks its own schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage.models import DatasetFacet, Job, Run, RunEvent, StaticEvent
from registry.models import Dataset

from .conftest import post

EVENTS = Path(__file__).parent / "marquez_events"


def marquez_event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())


def test_an_event_whose_sloppy_facets_break_their_schemas_is_stored_without_them(client, lineage_secret):
    response = post(client, marquez_event("event_additional_facet.json"), lineage_secret)
    assert response.status_code == 201
    warnings = response.json()["warnings"]
    assert [(w["path"], w["code"]) for w in warnings] == [
        ("job.facets.sourceCodeLocation", "facet_invalid"),
        ("inputs[0].facets.dataSource", "facet_invalid"),
        ("outputs[0].facets.dataSource", "facet_invalid"),
    ]
    assert warnings[1]["reason"].startswith('inputs[0].facets.dataSource.uri: "string" is not a "uri" (DatasourceDatasetFacet).')
    # Kept raw for inspection, left out of the job, the run and the dataset's kept facets.
    raw = RunEvent.objects.get().payload
    assert raw["job"]["facets"]["sourceCodeLocation"]["url"] == "string"
    job = Job.objects.get()
    assert "sourceCodeLocation" not in job.facets and job.facets["sql"]["query"] == "SELECT * FROM foo"
    assert Run.objects.get().facets["nominalTime"]["nominalStartTime"] == "2020-12-17T03:00:00.001Z"
    assert set(DatasetFacet.objects.values_list("name", flat=True)) == {"documentation"}


@pytest.mark.parametrize("name", ["event_dataset_event.json", "event_job_event.json"])
def test_marquez_static_events_are_stored_as_sent(client, lineage_secret, name):
    response = post(client, marquez_event(name), lineage_secret)
    assert response.status_code == 201, response.content
    assert "warnings" not in response.json()
    assert StaticEvent.objects.count() == 1


@pytest.mark.parametrize("name", ["event_namespace_naming.json", "event_unicode.json"])
def test_marquez_run_events_with_sound_facets_are_stored_without_warnings(client, lineage_secret, name):
    response = post(client, marquez_event(name), lineage_secret)
    assert response.status_code == 201, response.content
    assert "warnings" not in response.json()
    assert Run.objects.get().job.name == marquez_event(name)["job"]["name"]


def test_an_event_without_the_schema_url_the_spec_requires_is_still_refused(client, lineage_secret):
    response = post(client, marquez_event("event_simple.json"), lineage_secret)
    assert response.status_code == 422
    assert response.json()["errors"] == [{"path": "", "message": "'schemaURL' is required"}]
    assert not RunEvent.objects.exists()


def test_a_facet_breaking_its_schema_on_an_output_of_another_team_still_refuses_the_event(
        client, lineage_secret, other_team):
    # The write-scope rules judge the event as before: a dropped facet changes no decision.
    theirs = Dataset.objects.create(namespace="postgres://warehouse:5432", name="finance.ledger", owner_team=other_team)
    event = marquez_event("event_additional_facet.json")
    event["outputs"][0].update(namespace=theirs.namespace, name=theirs.name)
    response = post(client, event, lineage_secret)
    assert response.status_code == 403
    assert response.json()["code"] == "dataset_not_writable"
    assert not RunEvent.objects.exists()


def test_the_job_page_notes_each_run_stored_without_a_facet(client, lineage_secret, owner):
    post(client, marquez_event("event_additional_facet.json"), lineage_secret)
    client.force_login(owner)
    page = client.get(Job.objects.get().get_absolute_url()).content.decode()
    assert "3 facets left out" in page
    assert "<code>outputs[0].facets.dataSource</code>" in page
    assert "is not a &quot;uri&quot; (DatasourceDatasetFacet)" in page


def test_a_batch_lists_each_events_dropped_facets_by_its_index(client, lineage_secret):
    batch = [marquez_event("event_dataset_event.json"), marquez_event("event_additional_facet.json")]
    response = post(client, batch, lineage_secret, path="/api/v1/lineage/batch/")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["stored"] == 2
    assert [w["path"] for w in body["warnings"]] == [
        "[1].job.facets.sourceCodeLocation", "[1].inputs[0].facets.dataSource", "[1].outputs[0].facets.dataSource"]
