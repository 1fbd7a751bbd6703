"""POST /api/v1/lineage and /api/v1/lineage/batch."""

from __future__ import annotations

import json

import pytest

from lineage.models import Job, JobDataset, Run, RunDataset, RunEvent
from registry.models import ApiToken, AuditEvent, Dataset

from .conftest import WAREHOUSE, post, run_event

pytestmark = pytest.mark.django_db


def counts() -> dict[str, int]:
    return {m.__name__: m.objects.count() for m in (RunEvent, Job, Run, Dataset, JobDataset, RunDataset)}


def test_a_start_event_stores_the_event_job_run_datasets_and_edges(client, lineage_secret):
    event = run_event("START", inputs=["raw.orders", "raw.customers"], outputs=["mart.orders"])
    response = post(client, event, lineage_secret)
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "stored"
    run = Run.objects.get()
    assert str(run.run_uuid) == event["run"]["runId"]
    assert run.state == "START" and run.started_at is not None and run.ended_at is None
    assert run.job.name == "etl.load_orders"
    edges = set(JobDataset.objects.values_list("dataset__name", "direction"))
    assert edges == {("raw.orders", "in"), ("raw.customers", "in"), ("mart.orders", "out")}
    assert RunDataset.objects.filter(run=run).count() == 3
    assert RunEvent.objects.get().payload == event


def test_datasets_first_seen_are_created_unowned_and_audited(client, lineage_secret):
    post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    created = Dataset.objects.get(name="mart.orders")
    assert created.namespace == WAREHOUSE and created.owner_team is None
    audit = AuditEvent.objects.get(action="dataset.first_seen")
    assert audit.object_id == str(created.pk) and audit.actor_label == "token:airflow@checkout"


def test_known_datasets_keep_their_owner(client, lineage_secret, dataset):
    post(client, run_event(outputs=[{"namespace": dataset.namespace, "name": dataset.name}]), lineage_secret)
    dataset.refresh_from_db()
    assert dataset.owner_team is not None
    assert not AuditEvent.objects.filter(action="dataset.first_seen").exists()


def test_run_state_follows_the_event_type_and_a_late_start_does_not_undo_complete(client, lineage_secret):
    run_id = "0176a8c2-fe01-7439-87e6-56a1a1b4029f"
    post(client, run_event("START", run_id=run_id, event_time="2026-11-30T01:00:00Z"), lineage_secret)
    post(client, run_event("RUNNING", run_id=run_id, event_time="2026-11-30T01:01:00Z"), lineage_secret)
    assert Run.objects.get().state == "RUNNING"
    post(client, run_event("COMPLETE", run_id=run_id, event_time="2026-11-30T01:05:00Z"), lineage_secret)
    post(client, run_event("START", run_id=run_id, event_time="2026-11-30T00:59:00Z", job="etl.load_orders"), lineage_secret)
    run = Run.objects.get()
    assert run.state == "COMPLETE"
    assert run.ended_at.isoformat() == "2026-11-30T01:05:00+00:00"
    assert run.started_at.isoformat() == "2026-11-30T00:59:00+00:00"


def test_lineage_appears_at_start_before_the_run_completes(client, lineage_secret):
    post(client, run_event("START", inputs=["raw.orders"], outputs=["mart.orders"]), lineage_secret)
    graph = client.get("/api/v1/lineage", {"nodeId": f"dataset:{WAREHOUSE}:raw.orders", "depth": 1},
                       HTTP_AUTHORIZATION=f"Bearer {lineage_secret}").json()["graph"]
    assert {n["id"] for n in graph} == {f"dataset:{WAREHOUSE}:raw.orders", "job:airflow:etl.load_orders",
                                        f"dataset:{WAREHOUSE}:mart.orders"}


def test_a_retried_identical_event_stores_nothing_new(client, lineage_secret):
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"])
    assert post(client, event, lineage_secret).status_code == 201
    before = counts()
    audits = AuditEvent.objects.count()
    response = post(client, event, lineage_secret)
    assert response.status_code == 201 and response.json()["status"] == "duplicate"
    assert counts() == before
    assert AuditEvent.objects.count() == audits


def test_gzip_bodies_are_accepted(client, lineage_secret):
    response = post(client, run_event(outputs=["mart.orders"]), lineage_secret, compress=True)
    assert response.status_code == 201, response.content
    assert Dataset.objects.filter(name="mart.orders").exists()


def test_an_encoding_other_than_gzip_is_a_415_naming_what_to_send(client, lineage_secret):
    response = client.generic("POST", "/api/v1/lineage", json.dumps(run_event()).encode(), content_type="application/json",
                              HTTP_AUTHORIZATION=f"Bearer {lineage_secret}", HTTP_CONTENT_ENCODING="br")
    assert response.status_code == 415 and response.json()["code"] == "unsupported_encoding"
    assert "gzip" in response.json()["detail"]
    assert not RunEvent.objects.exists()


def test_a_body_that_claims_gzip_but_is_not_is_a_400(client, lineage_secret):
    response = client.generic("POST", "/api/v1/lineage", b"{}", content_type="application/json",
                              HTTP_AUTHORIZATION=f"Bearer {lineage_secret}", HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400 and response.json()["code"] == "bad_gzip"


def test_a_batch_stores_every_event_and_counts_duplicates(client, lineage_secret):
    first = run_event("START", outputs=["mart.orders"])
    events = [first, run_event("COMPLETE", run_id=first["run"]["runId"], outputs=["mart.orders"]), first]
    response = post(client, events, lineage_secret, path="/api/v1/lineage/batch", compress=True)
    assert response.status_code == 201, response.content
    assert response.json() == {"received": 3, "stored": 2, "duplicates": 1}
    assert RunEvent.objects.count() == 2 and Run.objects.get().state == "COMPLETE"


def test_a_batch_with_one_invalid_event_stores_nothing_and_names_its_index(client, lineage_secret):
    bad = run_event()
    bad["run"]["runId"] = "not-a-uuid"
    response = post(client, [run_event(outputs=["mart.orders"]), bad], lineage_secret, path="/api/v1/lineage/batch")
    assert response.status_code == 422
    assert response.json()["errors"] == [{"path": "[1].run.runId", "message": "'not-a-uuid' is not a UUID (8-4-4-4-12 hex digits)"}]
    assert counts() == dict.fromkeys(counts(), 0)


def test_an_array_sent_to_the_single_endpoint_is_a_400(client, lineage_secret):
    response = post(client, [run_event()], lineage_secret)
    assert response.status_code == 400 and "batch" in response.json()["detail"]


def test_an_object_sent_to_the_batch_endpoint_is_a_400(client, lineage_secret):
    response = post(client, run_event(), lineage_secret, path="/api/v1/lineage/batch")
    assert response.status_code == 400 and response.json()["code"] == "expected_array"


def test_invalid_json_is_a_400_saying_where(client, lineage_secret):
    response = post(client, None, lineage_secret, raw=b'{"eventType": "START",')
    assert response.status_code == 400
    assert "line 1" in response.json()["detail"]


def test_an_event_breaking_the_spec_is_a_422_pointing_at_the_fields(client, lineage_secret):
    event = run_event(outputs=["mart.orders"])
    event["eventTime"] = "2026-11-30T01:00:00"  # no time zone
    event["outputs"][0]["facets"] = {"schema": {"fields": []}}  # no _producer / _schemaURL
    del event["producer"]
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "invalid_event"
    paths = [e["path"] for e in body["errors"]]
    assert paths == ["eventTime", "", "outputs[0].facets.schema", "outputs[0].facets.schema"]
    assert "'producer' is required" in [e["message"] for e in body["errors"]]
    assert body["detail"].startswith("The event does not follow the OpenLineage 2-0-2 spec: eventTime:")
    assert counts() == dict.fromkeys(counts(), 0)


def test_no_token_is_a_401_saying_it_is_missing(client):
    response = post(client, run_event(), None)
    assert response.status_code == 401
    assert response.json()["code"] == "token_missing"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_malformed_bearer_header_is_a_401_saying_so(client, db):
    for header in ("Bearer ", "Bearer two words"):
        response = client.generic("POST", "/api/v1/lineage", json.dumps(run_event()), content_type="application/json",
                                  HTTP_AUTHORIZATION=header)
        assert response.status_code == 401 and response.json()["code"] == "token_malformed"


def test_an_unknown_token_is_a_401_saying_it_is_invalid(client, db):
    response = post(client, run_event(), "dr_nonsense")
    assert response.status_code == 401 and response.json()["code"] == "token_invalid"


def test_a_revoked_token_is_a_401_saying_it_was_revoked(client, owner_team):
    token, secret = ApiToken.issue("old", team=owner_team)
    token.revoke()
    response = post(client, run_event(), secret)
    assert response.status_code == 401 and response.json()["code"] == "token_revoked"
    assert "revoked" in response.json()["detail"]


def test_a_refused_token_stores_nothing_though_its_check_travels_with_the_first_insert(client, owner, owner_team, owner_token):
    token, revoked = ApiToken.issue("old", team=owner_team)
    token.revoke()
    assert post(client, run_event(outputs=["mart.orders"]), revoked).status_code == 401
    owner.is_active = False
    owner.save()
    assert post(client, run_event(outputs=["mart.orders"]), owner_token[1]).status_code == 401
    assert counts() == dict.fromkeys(counts(), 0)
    assert not AuditEvent.objects.filter(action="dataset.first_seen").exists()


def test_a_bad_token_is_reported_before_a_bad_body(client, owner_team, read_only_secret):
    token, revoked = ApiToken.issue("old", team=owner_team)
    token.revoke()
    invalid = {"eventType": "START"}
    assert post(client, invalid, "dr_nonsense").json()["code"] == "token_invalid"
    assert post(client, invalid, revoked).json()["code"] == "token_revoked"
    assert post(client, invalid, read_only_secret).status_code == 403


def test_a_token_that_may_not_write_lineage_is_a_403(client, read_only_secret):
    response = post(client, run_event(outputs=["mart.orders"]), read_only_secret)
    assert response.status_code == 403 and response.json()["code"] == "token_cannot_write_lineage"
    assert not Dataset.objects.exists()


def test_a_person_token_may_write_lineage_too(client, owner_token):
    response = post(client, run_event(outputs=["mart.orders"]), owner_token[1])
    assert response.status_code == 201


def test_a_body_over_the_limit_is_a_413(client, lineage_secret, settings):
    settings.LINEAGE_MAX_BODY_BYTES = 2048
    event = run_event(outputs=[f"mart.table_{i}" for i in range(100)])
    response = post(client, event, lineage_secret)
    assert response.status_code == 413 and response.json()["code"] == "too_large"


def test_a_gzip_body_inflating_over_the_limit_is_a_413(client, lineage_secret, settings):
    settings.LINEAGE_MAX_BODY_BYTES = 2048
    event = run_event(outputs=["mart.orders"])
    event["padding"] = "x" * 100_000  # compresses to a few hundred bytes
    response = post(client, event, lineage_secret, compress=True)
    assert response.status_code == 413
    assert not RunEvent.objects.exists()


def test_a_facet_breaking_its_own_schema_is_dropped_with_a_warning_and_the_event_stored(client, lineage_secret):
    from lineage.facets import FACETS_INVALID
    from lineage.signals import dataset_written

    from .conftest import schema_facet

    event = run_event("COMPLETE", outputs=["mart.orders"], row_count=5)
    event["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] = "5"
    event["outputs"][0]["facets"] = {"schema": schema_facet(("id", "BIGINT"))}
    producer = event["producer"]
    before = FACETS_INVALID.labels(producer=producer, facet="outputStatistics")._value.get()
    seen = []

    def listener(**kwargs):
        seen.append(kwargs)

    dataset_written.connect(listener)
    try:
        response = post(client, event, lineage_secret)
    finally:
        dataset_written.disconnect(listener)
    assert response.status_code == 201
    assert response.json()["warnings"] == [{
        "path": "outputs[0].outputFacets.outputStatistics", "code": "facet_invalid",
        "reason": 'outputs[0].outputFacets.outputStatistics.rowCount: "5" is not of type "integer" '
                  "(OutputStatisticsOutputDatasetFacet). The outputStatistics facet breaks its own schema: it is kept "
                  "in the raw event but left out of what the registry acts on; the rest of the event is stored."}]
    # Kept raw for inspection; left out of what listeners (freshness, drift) are told.
    assert RunEvent.objects.get().payload["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == "5"
    assert seen[0]["output_facets"] == {} and seen[0]["schema_facet"]["fields"] == [{"name": "id", "type": "BIGINT"}]
    assert FACETS_INVALID.labels(producer=producer, facet="outputStatistics")._value.get() == before + 1


def test_dataset_written_is_sent_once_per_output_with_its_facets(client, lineage_secret):
    from lineage.signals import dataset_written

    from .conftest import schema_facet

    seen = []

    def listener(**kwargs):
        seen.append(kwargs)

    dataset_written.connect(listener)
    try:
        event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders", "mart.totals"], row_count=42)
        event["outputs"][0]["facets"] = {"schema": schema_facet(("id", "int64")), "acme_partition": {**ACME, "date": "2026-11-29"}}
        event["outputs"][0]["outputFacets"]["acme_writeMode"] = {**ACME, "mode": "append"}
        post(client, event, lineage_secret)
        post(client, event, lineage_secret)  # a retry announces nothing
    finally:
        dataset_written.disconnect(listener)
    assert [s["dataset"].name for s in seen] == ["mart.orders", "mart.totals"]
    first = seen[0]
    assert first["succeeded"] is True and first["event_type"] == "COMPLETE" and first["row_count"] == 42
    assert first["schema_facet"]["fields"] == [{"name": "id", "type": "int64"}]
    assert first["run"].state == "COMPLETE" and first["job"].name == "etl.load_orders"
    assert first["event_time"].isoformat() == "2026-11-30T01:00:00+00:00"
    assert seen[1]["schema_facet"] is None
    # Every facet comes raw, as sent, so that a listener needing another one changes only itself.
    sent = event["outputs"]
    assert first["facets"] == sent[0]["facets"] and first["facets"]["acme_partition"]["date"] == "2026-11-29"
    assert first["output_facets"] == sent[0]["outputFacets"]
    assert first["output_facets"]["acme_writeMode"]["mode"] == "append"
    assert first["output_facets"]["outputStatistics"]["rowCount"] == 42
    assert seen[1]["facets"] == {} and seen[1]["output_facets"] == sent[1]["outputFacets"]


# A producer's own facets: no listener knows them, lineage passes them on all the same.
ACME = {"_producer": "https://acme.example/pipelines", "_schemaURL": "https://acme.example/facets/1-0-0/AcmeFacet.json"}


def test_get_on_the_batch_url_is_a_405(client, lineage_secret):
    assert client.get("/api/v1/lineage/batch").status_code == 405


def test_the_stored_payload_is_the_event_as_sent(client, lineage_secret):
    event = run_event(outputs=["mart.orders"])
    event["run"]["facets"] = {"nominalTime": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s",
                                              "nominalStartTime": "2026-11-30T00:00:00Z"}}
    post(client, event, lineage_secret)
    assert json.dumps(RunEvent.objects.get().payload, sort_keys=True) == json.dumps(event, sort_keys=True)
    assert Run.objects.get().facets["nominalTime"]["nominalStartTime"] == "2026-11-30T00:00:00Z"


def test_names_longer_than_the_registry_stores_are_a_422_naming_the_field(client, lineage_secret):
    event = run_event(outputs=["x" * 501])
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert response.json()["errors"] == [{"path": "outputs[0].name", "message": "is 501 characters; the registry stores at most 500"}]


def test_a_nul_character_is_a_422_not_a_server_error(client, lineage_secret):
    event = run_event(outputs=["mart.orders"])
    event["run"]["facets"] = {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "note": "a\u0000b"}}
    response = post(client, event, lineage_secret)
    assert response.status_code == 422 and "NUL" in response.json()["detail"]
    assert not RunEvent.objects.exists()


def test_a_token_of_an_inactive_user_is_a_401(client, owner, owner_token):
    owner.is_active = False
    owner.save()
    response = post(client, run_event(), owner_token[1])
    assert response.status_code == 401 and "inactive" in response.json()["detail"]


def test_a_token_records_its_last_use(client, owner_team):
    token, secret = ApiToken.issue("fresh", team=owner_team)
    assert token.last_used_at is None
    post(client, run_event(), secret)
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_person_token_is_the_actor_of_the_audit_rows(client, owner_token):
    post(client, run_event(outputs=["mart.fresh"]), owner_token[1])
    audit = AuditEvent.objects.get(action="dataset.first_seen")
    assert audit.actor_label == "alice" and audit.actor.username == "alice"


def test_the_statements_per_event_do_not_grow_with_its_datasets(django_assert_num_queries, db):
    from lineage.ingest import store_event

    small = run_event("START", inputs=["raw.a"], outputs=["mart.a"])
    big = run_event("START", inputs=[f"raw.t{i}" for i in range(10)], outputs=[f"mart.t{i}" for i in range(5)])
    store_event(dict(small, run={"runId": "5f0c7a0e-8a4e-4a11-9f55-000000000001"}))  # the datasets exist now
    store_event(dict(big, run={"runId": "5f0c7a0e-8a4e-4a11-9f55-000000000002"}))
    # 1: savepoint (the test's transaction around atomic), 2: raw event + existing datasets,
    # 3: job + run + both edge sets, 4: release savepoint.
    with django_assert_num_queries(4):
        store_event(small)
    with django_assert_num_queries(4):
        store_event(big)


def test_posted_events_skip_the_page_middleware_while_reading_the_graph_does_not(client, lineage_secret, owner):
    from prometheus_client import REGISTRY

    def requests_seen() -> float:
        return REGISTRY.get_sample_value("django_http_requests_before_middlewares_total") or 0.0

    before = requests_seen()
    for path in ("/api/v1/lineage", "/api/v1/lineage/batch"):
        event = run_event(outputs=["mart.orders"])
        response = post(client, [event] if path.endswith("batch") else event, lineage_secret, path=path)
        assert response.status_code == 201
        assert "X-Frame-Options" not in response and response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Length"] == str(len(response.content))
        assert response.resolver_match.url_name in ("api-lineage", "api-lineage-batch")
    assert requests_seen() == before + 2  # still counted by Prometheus
    client.force_login(owner)
    graph = client.get("/api/v1/lineage", {"nodeId": f"dataset:{WAREHOUSE}:mart.orders"})
    assert graph.status_code == 200 and graph["X-Frame-Options"] == "DENY"


def test_without_prepared_statements_the_ingest_stores_the_same_rows(client, lineage_secret, settings):
    settings.LINEAGE_PREPARED_STATEMENTS = False  # behind a transaction-pooling PgBouncer
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"], row_count=3)
    assert post(client, event, lineage_secret).status_code == 201
    assert post(client, event, lineage_secret).json()["status"] == "duplicate"
    assert post(client, run_event(outputs=["mart.orders"]), "dr_nonsense").status_code == 401
    assert counts() == {"RunEvent": 1, "Job": 1, "Run": 1, "Dataset": 2, "JobDataset": 2, "RunDataset": 2}


def test_large_raw_events_are_compressed_with_lz4(client, lineage_secret):
    from django.db import connection

    # Over PostgreSQL's 2 KB threshold, as events with columnLineage or SQL are.
    event = run_event("COMPLETE", inputs=[f"raw.table_with_a_long_name_{i:03d}" for i in range(40)], outputs=["mart.orders"])
    assert post(client, event, lineage_secret).status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_column_compression(payload) FROM lineage_runevent")
        assert cursor.fetchone()[0] == "lz4"
