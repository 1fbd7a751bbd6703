"""DatasetEvents and JobEvents: static metadata and declared lineage, outside any run."""

from __future__ import annotations

import pytest

from lineage.models import (
    DatasetAlias,
    DatasetFacet,
    DatasetSchema,
    DeclaredEdge,
    Job,
    JobDataset,
    QualityCheck,
    Run,
    RunDataset,
    RunEvent,
    StaticEvent,
)
from registry.models import AuditEvent, Dataset

from .conftest import FACET_BASE, PRODUCER, WAREHOUSE, dataset, post, run_event, schema_facet

pytestmark = pytest.mark.django_db

DATASET_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
JOB_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"


def facet(**fields) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SomeFacet.json", **fields}


def dataset_event(name: str = "stage.orders", *, event_time: str = "2026-11-30T02:00:00Z", **facets) -> dict:
    return {"eventTime": event_time, "producer": PRODUCER, "schemaURL": DATASET_EVENT_URL,
            "dataset": dataset(name, **facets)}


def job_event(name: str = "etl.declared", *, inputs=(), outputs=(), job_facets=None,
              event_time: str = "2026-11-30T02:00:00Z") -> dict:
    event = {"eventTime": event_time, "producer": PRODUCER, "schemaURL": JOB_EVENT_URL,
             "job": {"namespace": "airflow", "name": name},
             "inputs": [dataset(n) if isinstance(n, str) else n for n in inputs],
             "outputs": [dataset(n) if isinstance(n, str) else n for n in outputs]}
    if job_facets:
        event["job"]["facets"] = job_facets
    return event


OWNERSHIP = facet(owners=[{"name": "team:checkout", "type": "MAINTAINER"}])
DOCUMENTATION = facet(description="Orders as the shop placed them.")
SYMLINKS = facet(identifiers=[{"namespace": "hive://metastore", "name": "stage.orders", "type": "TABLE"}])


# --- DatasetEvent ----------------------------------------------------------------------

def test_a_dataset_event_is_stored_and_creates_the_dataset_unowned(client, lineage_secret):
    response = post(client, dataset_event(schema=schema_facet(("id", "bigint"), ("status", "text"))), lineage_secret)
    assert response.status_code == 201
    assert response.json() == {"status": "stored", "datasetsCreated": 1, "eventKind": "DatasetEvent"}
    orders = Dataset.objects.get(namespace=WAREHOUSE, name="stage.orders")
    assert orders.owner_team is None
    assert AuditEvent.objects.filter(action="dataset.first_seen", object_id=str(orders.pk)).exists()
    assert StaticEvent.objects.get().kind == "dataset"
    assert not RunEvent.objects.exists() and not Run.objects.exists()


def test_a_dataset_event_sets_the_current_schema_with_where_it_came_from(client, lineage_secret):
    fields = {**schema_facet(("id", "bigint")), "fields": [{"name": "id", "type": "bigint", "description": "The key."}]}
    post(client, dataset_event(schema=fields), lineage_secret)
    schema = DatasetSchema.objects.get(dataset__name="stage.orders")
    assert schema.fields == {"id": "bigint"} and schema.complete
    assert schema.columns == [{"name": "id", "type": "bigint", "description": "The key."}]
    assert schema.origin == "dataset" and schema.job is None and schema.event_time.isoformat() == "2026-11-30T02:00:00+00:00"


def test_a_retried_dataset_event_stores_nothing_new(client, lineage_secret):
    event = dataset_event(documentation=DOCUMENTATION)
    post(client, event, lineage_secret)
    response = post(client, event, lineage_secret)
    assert response.status_code == 201 and response.json()["status"] == "duplicate"
    assert StaticEvent.objects.count() == 1 and DatasetFacet.objects.count() == 1


def test_a_dataset_event_keeps_ownership_documentation_and_lifecycle_beside_the_registry_owner(
        client, lineage_secret, dataset, owner_team):
    event = dataset_event(dataset.name, ownership=OWNERSHIP, documentation=DOCUMENTATION,
                          lifecycleStateChange=facet(lifecycleStateChange="OVERWRITE"))
    event["dataset"]["namespace"] = dataset.namespace
    assert post(client, event, lineage_secret).status_code == 201
    kept = {f.name: f for f in DatasetFacet.objects.filter(dataset=dataset)}
    assert set(kept) == {"ownership", "documentation", "lifecycleStateChange"}
    assert kept["ownership"].facet["owners"] == [{"name": "team:checkout", "type": "MAINTAINER"}]
    assert kept["ownership"].origin == "dataset"
    dataset.refresh_from_db()
    assert dataset.owner_team == owner_team  # a producer's word never claims the dataset


def test_a_deleted_facet_is_forgotten(client, lineage_secret):
    post(client, dataset_event(documentation=DOCUMENTATION), lineage_secret)
    gone = post(client, dataset_event(documentation=facet(_deleted=True), event_time="2026-11-30T03:00:00Z"), lineage_secret)
    assert gone.status_code == 201
    assert not DatasetFacet.objects.exists()


def test_symlinks_make_an_alias_resolve_to_the_same_dataset(client, lineage_secret):
    post(client, dataset_event(symlinks=SYMLINKS), lineage_secret)
    orders = Dataset.objects.get(name="stage.orders", namespace=WAREHOUSE)
    assert DatasetAlias.objects.get().dataset == orders
    # A run that names the table by its other name reads the one dataset.
    event = run_event("COMPLETE", inputs=[dataset("stage.orders", namespace="hive://metastore")], outputs=["mart.orders"])
    assert post(client, event, lineage_secret).status_code == 201
    assert not Dataset.objects.filter(namespace="hive://metastore").exists()
    assert JobDataset.objects.filter(dataset=orders, direction="in").exists()


def test_a_rename_keeps_the_previous_name_as_an_alias(client, lineage_secret):
    renamed = facet(lifecycleStateChange="RENAME", previousIdentifier={"namespace": WAREHOUSE, "name": "stage.orders_old"})
    post(client, dataset_event(lifecycleStateChange=renamed), lineage_secret)
    assert DatasetAlias.objects.get().kind == "RENAMED"


def test_quality_facets_of_a_dataset_event_become_a_check_without_a_run(client, lineage_secret):
    metrics = facet(rowCount=10, columnMetrics={"id": {"nullCount": 0, "distinctCount": 10}})
    assertions = facet(assertions=[{"assertion": "not_null", "column": "id", "success": True},
                                   {"assertion": "unique", "column": "id", "success": False}])
    post(client, dataset_event(dataQualityMetrics=metrics, dataQualityAssertions=assertions), lineage_secret)
    check = QualityCheck.objects.get()
    assert check.run_uuid is None and check.assertion_count == 2 and check.failed_count == 1
    assert check.metrics == {"rowCount": 10, "columnMetrics": {"id": {"nullCount": 0, "distinctCount": 10}}}


def test_a_dataset_facet_breaking_its_schema_is_dropped_naming_the_facet_and_field(client, lineage_secret):
    response = post(client, dataset_event(ownership=facet(owners=[{"type": "MAINTAINER"}])), lineage_secret)
    assert response.status_code == 201
    [warning] = response.json()["warnings"]
    assert warning["path"] == "dataset.facets.ownership" and warning["code"] == "facet_invalid"
    assert warning["reason"].startswith('dataset.facets.ownership.owners[0]: "name" is a required property '
                                        "(OwnershipDatasetFacet). The ownership facet breaks its own schema")
    # Stored raw, acted on without it: the dataset is seen, no ownership facet is kept.
    assert StaticEvent.objects.get().payload["dataset"]["facets"]["ownership"]["owners"] == [{"type": "MAINTAINER"}]
    assert Dataset.objects.exists() and not DatasetFacet.objects.filter(name="ownership").exists()


def test_a_dataset_event_without_a_dataset_says_what_is_missing(client, lineage_secret):
    event = dataset_event()
    del event["dataset"]
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert "'dataset'" in response.json()["detail"]


# --- JobEvent --------------------------------------------------------------------------

def test_a_job_event_records_the_job_and_its_declared_lineage_apart_from_runs(client, lineage_secret):
    event = job_event(inputs=["raw.orders"], outputs=["stage.orders"],
                      job_facets={"documentation": facet(description="Loads orders nightly.")})
    response = post(client, event, lineage_secret)
    assert response.status_code == 201
    assert response.json() == {"status": "stored", "datasetsCreated": 2, "eventKind": "JobEvent"}
    job = Job.objects.get(name="etl.declared")
    assert job.facets["documentation"]["description"] == "Loads orders nightly."
    assert set(DeclaredEdge.objects.values_list("dataset__name", "direction")) == {("raw.orders", "in"),
                                                                                  ("stage.orders", "out")}
    assert not JobDataset.objects.exists() and not RunDataset.objects.exists() and not Run.objects.exists()


def test_a_later_job_event_replaces_the_declaration(client, lineage_secret):
    post(client, job_event(inputs=["raw.orders"], outputs=["stage.orders"]), lineage_secret)
    post(client, job_event(inputs=["raw.orders"], outputs=["stage.orders_v2"], event_time="2026-11-30T03:00:00Z"),
         lineage_secret)
    assert set(DeclaredEdge.objects.values_list("dataset__name", "direction")) == {("raw.orders", "in"),
                                                                                  ("stage.orders_v2", "out")}


def test_a_job_event_without_inputs_or_outputs_keeps_the_declaration(client, lineage_secret):
    post(client, job_event(inputs=["raw.orders"]), lineage_secret)
    event = job_event(job_facets={"documentation": facet(description="v2")}, event_time="2026-11-30T03:00:00Z")
    del event["inputs"], event["outputs"]
    post(client, event, lineage_secret)
    assert DeclaredEdge.objects.count() == 1


def test_the_graph_shows_declared_lineage_as_declared(client, lineage_secret, owner):
    post(client, job_event(inputs=["raw.orders"], outputs=["stage.orders"]), lineage_secret)
    post(client, run_event("COMPLETE", job="etl.declared", inputs=["raw.orders"]), lineage_secret)
    client.force_login(owner)
    graph = client.get("/api/v1/lineage", {"nodeId": "job:airflow:etl.declared", "depth": 1}).json()["graph"]
    job = next(n for n in graph if n["id"] == "job:airflow:etl.declared")
    assert job["inEdges"] == [{"origin": f"dataset:{WAREHOUSE}:raw.orders", "destination": "job:airflow:etl.declared"}]
    assert job["outEdges"] == [{"origin": "job:airflow:etl.declared", "destination": f"dataset:{WAREHOUSE}:stage.orders",
                                "declared": True}]
    page = client.get(Job.objects.get().get_absolute_url())
    assert b"edge declared" in page.content


def test_a_job_event_with_a_run_is_a_run_event_and_needs_its_rules(client, lineage_secret):
    event = job_event(outputs=["stage.orders"])
    event["run"] = {"runId": "not-a-uuid"}
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "run.runId"


def test_an_event_that_is_both_a_job_event_and_a_dataset_event_is_refused(client, lineage_secret):
    event = job_event()
    event["dataset"] = dataset("stage.orders")
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert "exactly one kind" in response.json()["detail"]


def test_a_batch_mixes_every_kind_in_order(client, lineage_secret):
    events = [dataset_event(schema=schema_facet(("id", "bigint"))), job_event(outputs=["stage.orders"]),
              run_event("COMPLETE", outputs=["stage.orders"])]
    response = post(client, events, lineage_secret, path="/api/v1/lineage/batch")
    assert response.status_code == 201 and response.json() == {"received": 3, "stored": 3, "duplicates": 0}
    assert StaticEvent.objects.count() == 2 and RunEvent.objects.count() == 1
    assert Dataset.objects.count() == 1


def test_the_facet_base_alone_is_enough_for_a_producers_own_facet(client, lineage_secret):
    response = post(client, dataset_event(shop_tier={**FACET_BASE, "tier": [1, 2]}), lineage_secret)
    assert response.status_code == 201


def test_pruning_deletes_old_static_events_and_keeps_what_they_set(client, lineage_secret):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    post(client, job_event(inputs=["raw.orders"]), lineage_secret)
    StaticEvent.objects.update(received_at=timezone.now() - timedelta(days=40))
    call_command("prune_lineage_events", "--older-than", "30d", stdout=open("/dev/null", "w"))
    assert not StaticEvent.objects.exists()
    assert DeclaredEdge.objects.count() == 1 and Job.objects.count() == 1


def test_a_partial_schema_never_resolves_select_star(client, lineage_secret):
    from registry.usage import ColumnRead

    from .conftest import sql_facet

    untyped = {**schema_facet(("id", "bigint")), "fields": [{"name": "id"}]}  # dbt without a catalog
    post(client, dataset_event("raw.orders", schema=untyped), lineage_secret)
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"],
                      job_facets={"sql": sql_facet("select * from raw.orders")})
    post(client, event, lineage_secret)
    # The star may read columns the facet does not list: all/unknown, never just "id".
    assert set(ColumnRead.objects.filter(dataset__name="raw.orders").values_list("column", flat=True)) == {""}
