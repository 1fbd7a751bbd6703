"""Bounded work per request: datasets per event, events per batch, and gzip and
chunked bodies read as HTTP says."""

from __future__ import annotations

import gzip
import json
import socket
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from lineage.models import RunEvent
from registry.models import Dataset

from .conftest import column_lineage_facet, dataset, input_field, post, run_event

pytestmark = pytest.mark.django_db


def test_an_event_with_more_datasets_than_the_limit_is_refused_before_any_is_created(client, lineage_secret):
    event = run_event(inputs=[f"raw.t{i}" for i in range(400)], outputs=[f"mart.t{i}" for i in range(10_000)])
    response = post(client, event, lineage_secret)
    assert response.status_code == 422, response.content[:300]
    body = response.json()
    assert body["code"] == "too_many_datasets" and body["limit"] == "LINEAGE_MAX_DATASETS_PER_EVENT"
    assert body["allowed"] == 1000 and body["found"] == 10400
    assert "names 10400 datasets" in body["detail"] and "LINEAGE_MAX_DATASETS_PER_EVENT" in body["detail"]
    assert Dataset.objects.count() == 0 and RunEvent.objects.count() == 0


@override_settings(LINEAGE_MAX_DATASETS_PER_EVENT=3)
def test_the_dataset_limit_is_a_setting_and_counts_inputs_and_outputs(client, lineage_secret):
    assert post(client, run_event(inputs=["a", "b"], outputs=["c"]), lineage_secret).status_code == 201
    assert post(client, run_event(inputs=["a", "b"], outputs=["c", "d"]), lineage_secret).status_code == 422
    batch = post(client, [run_event(), run_event(inputs=["a", "b"], outputs=["c", "d"])], lineage_secret,
                 path="/api/v1/lineage/batch")
    assert batch.status_code == 422 and batch.json()["detail"].startswith("Event [1] of the batch names 4")
    assert RunEvent.objects.count() == 1


@override_settings(LINEAGE_MAX_DATASETS_PER_EVENT=50)
def test_datasets_named_only_by_column_lineage_count_towards_the_limit(client, lineage_secret):
    sources = [input_field(f"raw.t{i}", "id") for i in range(60)]
    out = dataset("mart.wide", columnLineage=column_lineage_facet({"id": sources}))
    response = post(client, run_event(outputs=[out]), lineage_secret)
    assert response.status_code == 422, response.content[:300]
    assert response.json()["code"] == "too_many_datasets" and "names 61 datasets" in response.json()["detail"]
    assert Dataset.objects.count() == 0
    few = dataset("mart.narrow", columnLineage=column_lineage_facet({"id": sources[:10]}))
    assert post(client, run_event(outputs=[few]), lineage_secret).status_code == 201


def test_column_lineage_of_the_wrong_shape_is_judged_by_the_spec_checks_not_a_500(client, lineage_secret):
    facet = column_lineage_facet({"id": [{"namespace": ["x"], "name": {"y": 1}, "field": "id"}, 7]},
                                 dataset_level=[{"namespace": [], "name": "a"}])
    response = post(client, run_event(outputs=[dataset("mart.odd", columnLineage=facet), {"namespace": [], "name": 1}]),
                    lineage_secret)
    assert response.status_code == 422, response.content[:300]
    assert response.json()["code"] == "invalid_event"


def test_a_batch_of_more_events_than_the_limit_is_a_413_and_nothing_is_stored(client, lineage_secret):
    events = [run_event(outputs=["mart.orders"]) for _ in range(1001)]
    response = post(client, events, lineage_secret, path="/api/v1/lineage/batch")
    assert response.status_code == 413, response.content[:300]
    assert response.json()["code"] == "too_many_events" and "LINEAGE_MAX_BATCH_EVENTS" in response.json()["detail"]
    assert RunEvent.objects.count() == 0
    with override_settings(LINEAGE_MAX_BATCH_EVENTS=2000):
        assert post(client, events, lineage_secret, path="/api/v1/lineage/batch").status_code == 201


def test_a_limit_refusal_still_checks_the_token_first(client):
    event = run_event(outputs=[f"mart.t{i}" for i in range(2000)])
    assert post(client, event, "x").status_code == 401


def gzipped(client, raw: bytes, secret: str, path: str = "/api/v1/lineage"):
    return client.generic("POST", path, raw, content_type="application/json",
                          HTTP_CONTENT_ENCODING="gzip", HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_a_gzip_body_of_several_members_is_read_whole(client, lineage_secret):
    text = json.dumps([run_event(outputs=["mart.a"]), run_event(outputs=["mart.b"])]).encode()
    half = len(text) // 2
    response = gzipped(client, gzip.compress(text[:half]) + gzip.compress(text[half:]), lineage_secret,
                       path="/api/v1/lineage/batch")
    assert response.status_code == 201, response.content
    assert response.json()["stored"] == 2


def test_gzip_with_trailing_garbage_or_no_crc_is_a_400_that_says_so(client, lineage_secret):
    packed = gzip.compress(json.dumps(run_event(outputs=["mart.a"])).encode())
    trailing = gzipped(client, packed + b"garbage", lineage_secret)
    assert trailing.status_code == 400 and trailing.json()["code"] == "bad_gzip"
    assert "7 bytes after gzip member 1 are not gzip" in trailing.json()["detail"]
    no_crc = gzipped(client, packed[:-8], lineage_secret)
    assert no_crc.status_code == 400 and "CRC and length are missing" in no_crc.json()["detail"]
    bad_crc = gzipped(client, packed[:-8] + bytes(8), lineage_secret)
    assert bad_crc.status_code == 400 and bad_crc.json()["code"] == "bad_gzip"
    assert RunEvent.objects.count() == 0


@override_settings(LINEAGE_MAX_BODY_BYTES=2048)
def test_several_gzip_members_together_stay_within_the_body_limit(client, lineage_secret):
    member = gzip.compress(b" " * 1500)
    response = gzipped(client, member + member, lineage_secret)
    assert response.status_code == 413


def test_a_chunked_body_is_read_when_the_server_decoded_it(client, lineage_secret):
    from io import BytesIO

    data = json.dumps(run_event(outputs=["mart.orders"])).encode()
    response = client.generic("POST", "/api/v1/lineage", b"", content_type="application/json",
                              HTTP_AUTHORIZATION=f"Bearer {lineage_secret}", HTTP_TRANSFER_ENCODING="chunked",
                              CONTENT_TYPE="application/json", **{"wsgi.input": BytesIO(data), "wsgi.input_terminated": True})
    assert response.status_code == 201, response.content
    assert RunEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_the_server_cannot_read_is_a_411_not_an_empty_body(live_server, lineage_secret):
    data = json.dumps(run_event(outputs=["mart.orders"])).encode()
    host = urlsplit(live_server.url)
    request = (f"POST /api/v1/lineage HTTP/1.1\r\nHost: {host.hostname}\r\nContent-Type: application/json\r\n"
               f"Authorization: Bearer {lineage_secret}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               f"{len(data):x}\r\n").encode() + data + b"\r\n0\r\n\r\n"
    with socket.create_connection((host.hostname, host.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[1] == b"411", answer[:300]
    assert json.loads(body)["code"] == "length_required"
