"""A lineage request's total work is bounded: past any of its limits the answer
is a 413 whose JSON names the setting (`limit`), its value (`allowed`) and, where
counted, what the request had (`found`), and nothing is stored."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import override_settings

from lineage.models import RunEvent
from registry.models import Dataset

from .conftest import dataset, post, run_event, schema_facet

pytestmark = pytest.mark.django_db

BATCH = "/api/v1/lineage/batch"


def refused_for(response, setting: str, allowed: int) -> dict:
    assert response.status_code == 413, response.content[:300]
    body = response.json()
    assert body["limit"] == setting and body["allowed"] == allowed, body
    assert setting in body["detail"], body
    return body


def nothing_stored() -> bool:
    return RunEvent.objects.count() == 0 and Dataset.objects.count() == 0


def test_eight_events_of_a_thousand_new_outputs_each_are_refused_as_a_whole(client, lineage_secret):
    events = [run_event(outputs=[f"mart.e{e}_t{i}" for i in range(1000)]) for e in range(8)]
    body = refused_for(post(client, events, lineage_secret, path=BATCH), "LINEAGE_MAX_REQUEST_NEW_DATASETS", 1000)
    # Counted until the answer is known: 500 names a query.
    assert body["code"] == "too_many_new_datasets" and body["found"] == 1500
    assert "names at least 1500 datasets the registry has not seen" in body["detail"]
    assert nothing_stored()


@override_settings(LINEAGE_MAX_REQUEST_NEW_DATASETS=10)
def test_the_dataset_budget_counts_each_new_dataset_once_however_often_the_batch_names_it(client, lineage_secret):
    same = [run_event(inputs=["raw.orders", "raw.customers"], outputs=["mart.orders"]) for _ in range(20)]
    assert post(client, same, lineage_secret, path=BATCH).status_code == 201
    several = [run_event(outputs=[f"mart.t{e}_{i}" for i in range(3)]) for e in range(4)]
    refused_for(post(client, several, lineage_secret, path=BATCH), "LINEAGE_MAX_REQUEST_NEW_DATASETS", 10)
    assert Dataset.objects.filter(name__startswith="mart.t").count() == 0


@override_settings(LINEAGE_MAX_REQUEST_NEW_DATASETS=10)
def test_datasets_the_registry_knows_do_not_count_against_the_budget(client, lineage_secret):
    known = [run_event(outputs=[f"mart.t{e}_{i}" for i in range(3)]) for e in range(3)]
    assert post(client, known, lineage_secret, path=BATCH).status_code == 201
    again = [*known, run_event(outputs=["mart.new_a", "mart.new_b"])]  # 11 named, 2 of them new
    assert post(client, again, lineage_secret, path=BATCH).status_code == 201
    assert Dataset.objects.filter(name__startswith="mart.").count() == 11


@override_settings(LINEAGE_MAX_REQUEST_FACETS=5)
def test_facets_past_the_budget_are_a_413_on_either_endpoint(client, lineage_secret):
    wide = dataset("mart.orders", schema=schema_facet(("id", "int")), **{f"custom{i}": {"_producer": "p", "_schemaURL": "s"}
                                                                           for i in range(5)})
    single = refused_for(post(client, run_event(outputs=[wide]), lineage_secret), "LINEAGE_MAX_REQUEST_FACETS", 5)
    assert single["code"] == "too_many_facets" and single["found"] == 6
    three = [run_event(outputs=[dataset("mart.orders", schema=schema_facet(("id", "int")))]) for _ in range(3)]
    assert post(client, three[:2], lineage_secret, path=BATCH).status_code == 201
    with override_settings(LINEAGE_MAX_REQUEST_FACETS=2):
        assert refused_for(post(client, three, lineage_secret, path=BATCH), "LINEAGE_MAX_REQUEST_FACETS", 2)["found"] == 3


@override_settings(LINEAGE_MAX_REQUEST_COLUMNS=100)
def test_schema_fields_nested_ones_too_count_towards_the_column_budget(client, lineage_secret):
    facet = schema_facet(*[(f"c{i}", "int") for i in range(60)])
    facet["fields"].append({"name": "address", "type": "struct", "fields": [{"name": f"a{i}", "type": "text"}
                                                                           for i in range(50)]})
    body = refused_for(post(client, run_event(outputs=[dataset("mart.wide", schema=facet)]), lineage_secret),
                       "LINEAGE_MAX_REQUEST_COLUMNS", 100)
    assert body["code"] == "too_many_columns" and body["found"] == 111
    assert nothing_stored()


@override_settings(LINEAGE_MAX_GZIP_MEMBERS=3)
def test_more_gzip_members_than_the_limit_are_a_413(client, lineage_secret):
    text = json.dumps(run_event(outputs=["mart.orders"])).encode()
    empty = gzip.compress(b"")
    headers = {"HTTP_CONTENT_ENCODING": "gzip", "HTTP_AUTHORIZATION": f"Bearer {lineage_secret}"}
    four = client.generic("POST", "/api/v1/lineage", empty * 3 + gzip.compress(text), content_type="application/json",
                          **headers)
    assert refused_for(four, "LINEAGE_MAX_GZIP_MEMBERS", 3)["code"] == "too_many_gzip_members"
    assert nothing_stored()
    three = client.generic("POST", "/api/v1/lineage", empty * 2 + gzip.compress(text), content_type="application/json",
                           **headers)
    assert three.status_code == 201, three.content


def test_a_hundred_thousand_empty_gzip_members_are_refused(client, lineage_secret):
    body = gzip.compress(b"") * 120_000 + gzip.compress(json.dumps(run_event(outputs=["mart.orders"])).encode())
    response = client.generic("POST", "/api/v1/lineage", body, content_type="application/json",
                              HTTP_CONTENT_ENCODING="gzip", HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert refused_for(response, "LINEAGE_MAX_GZIP_MEMBERS", 100)["code"] == "too_many_gzip_members"
    assert nothing_stored()


@override_settings(LINEAGE_MAX_BODY_BYTES=2048)
def test_a_body_over_the_byte_limit_before_or_after_gzip_is_a_413_naming_it(client, lineage_secret):
    sent = post(client, None, lineage_secret, raw=b" " * 3000)
    assert refused_for(sent, "LINEAGE_MAX_BODY_BYTES", 2048)["found"] == 3000
    inflated = post(client, None, lineage_secret, raw=b" " * 3000, compress=True)
    assert refused_for(inflated, "LINEAGE_MAX_BODY_BYTES", 2048)["code"] == "too_large"


@override_settings(LINEAGE_MAX_BATCH_EVENTS=3)
def test_more_events_than_the_batch_limit_is_a_413_naming_it(client, lineage_secret):
    response = post(client, [run_event() for _ in range(4)], lineage_secret, path=BATCH)
    body = refused_for(response, "LINEAGE_MAX_BATCH_EVENTS", 3)
    assert body["code"] == "too_many_events" and body["found"] == 4
    assert nothing_stored()


def test_the_body_that_stalled_the_server_is_a_prompt_400_at_the_ingest_and_the_api(client, lineage_secret, admin, dataset):
    hostile = ("[" * 101 + '"' + '\\"' * 50_000).encode()
    assert post(client, None, lineage_secret, raw=hostile).json()["code"] == "too_deep"
    client.force_login(admin)
    answer = client.post(f"/api/datasets/{dataset.pk}/consumers/", hostile, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["code"] == "too_deep"
