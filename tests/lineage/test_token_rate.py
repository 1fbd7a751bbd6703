"""Each API token has a budget of request bytes per server process
(registry.ratelimit): a bucket of LINEAGE_TOKEN_BURST_BYTES refilled at
LINEAGE_TOKEN_BYTES_PER_SECOND, charged with every body it sends, refused or
not. A spent budget is a 429 naming the setting, with Retry-After. The clock
is the test's: time passes when the test says so, never by waiting."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import override_settings

from lineage.models import RunEvent
from registry.models import ApiToken
from registry.ratelimit import BUCKETS

from .conftest import post, run_event

pytestmark = pytest.mark.django_db

BATCH = "/api/v1/lineage/batch"
RATE, BURST = 1000, 2000


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    """The buckets' clock, stopped; the buckets emptied before and after."""
    saved, stopped = BUCKETS.clock, Clock()
    BUCKETS.clock = stopped
    BUCKETS.clear()
    yield stopped
    BUCKETS.clock = saved
    BUCKETS.clear()


def big_event(**kwargs) -> dict:
    """An event of more than BURST bytes: one spends a fresh bucket."""
    event = run_event(outputs=["mart.orders"], **kwargs)
    event["run"]["facets"] = {"note": {"_producer": "https://example.com/p", "_schemaURL": "https://example.com/s",
                                       "text": "x" * BURST}}
    return event


def rate_limited(response) -> dict:
    assert response.status_code == 429, response.content[:300]
    body = response.json()
    assert body["code"] == "rate_limited" and body["limit"] == "LINEAGE_TOKEN_BYTES_PER_SECOND", body
    assert body["allowed"] == RATE and "LINEAGE_TOKEN_BYTES_PER_SECOND" in body["detail"], body
    assert int(response["Retry-After"]) == body["retry_after"] >= 1
    return body


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_token_past_its_budget_gets_429_with_retry_after_and_nothing_stored(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    body = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    # The bucket is about 1 KB below zero at 1000 bytes/s: a second or two until it is above.
    assert body["retry_after"] in (1, 2)
    assert RunEvent.objects.count() == 1


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_another_token_is_not_held_back_by_one_past_its_budget(client, lineage_secret, owner_team, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    other = ApiToken.issue("dbt", team=owner_team)[1]
    assert post(client, run_event(outputs=["mart.other"]), other).status_code == 201


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_the_budget_refills_as_time_passes(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    body = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    clock.now += body["retry_after"]
    assert post(client, run_event(outputs=["mart.late"]), lineage_secret).status_code == 201


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_request_sent_before_retry_after_is_charged_and_puts_the_wait_off(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    body = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    clock.now += body["retry_after"] - 0.5
    early = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))  # not yet, and charged
    clock.now += 0.5  # the first Retry-After has passed: the early request's bytes are owed as well
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    clock.now += early["retry_after"] + 1
    assert post(client, run_event(outputs=["mart.late"]), lineage_secret).status_code == 201


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_token_that_keeps_sending_stays_refused_and_owes_at_most_its_burst(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    for _ in range(20):  # 20 bodies over BURST bytes, none waiting for Retry-After
        body = rate_limited(post(client, big_event(), lineage_secret))
        clock.now += 0.5
    # The debt is floored at the burst: it stops, and waits (BURST + 1) / RATE seconds at most.
    assert body["retry_after"] <= (BURST + 1) // RATE + 1
    clock.now += body["retry_after"]
    assert post(client, run_event(outputs=["mart.late"]), lineage_secret).status_code == 201
    assert RunEvent.objects.count() == 2


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=0, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_rate_of_zero_turns_the_budget_off(client, lineage_secret, clock):
    for _ in range(5):
        assert post(client, big_event(), lineage_secret).status_code == 201


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_refused_bodies_are_charged_as_accepted_ones_are(client, lineage_secret, clock):
    unreadable = b"[" * 101 + b'"' + b'\\"' * BURST
    assert post(client, None, lineage_secret, raw=unreadable).status_code == 400
    rate_limited(post(client, run_event(outputs=["mart.orders"]), lineage_secret))
    assert RunEvent.objects.count() == 0


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST, LINEAGE_MAX_BODY_BYTES=1024)
def test_a_body_over_the_size_limit_is_charged_its_declared_length(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 413
    rate_limited(post(client, run_event(outputs=["mart.orders"]), lineage_secret))


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_gzip_body_is_charged_what_it_inflates_to(client, lineage_secret, clock):
    event = big_event()
    assert len(gzip.compress(json.dumps(event).encode())) < BURST / 2  # small on the wire, big once read
    assert post(client, event, lineage_secret, compress=True).status_code == 201
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret, compress=True))


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_the_batch_endpoint_spends_the_same_budget(client, lineage_secret, clock):
    assert post(client, [big_event()], lineage_secret, path=BATCH).status_code == 201
    rate_limited(post(client, [run_event(outputs=["mart.late"])], lineage_secret, path=BATCH))
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_the_apis_other_writes_spend_the_same_budget_and_reads_do_not(client, lineage_secret, clock):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {lineage_secret}"}
    refused = client.post("/api/teams/", {"name": "x" * BURST, "slug": "x"}, content_type="application/json", **auth)
    assert refused.status_code in (400, 403), refused.content[:300]  # refused, and charged all the same
    rate_limited(client.post("/api/teams/", {"name": "y", "slug": "y"}, content_type="application/json", **auth))
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    assert client.get("/api/datasets/", **auth).status_code == 200


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=10 * BURST)
def test_a_gzip_body_of_too_many_members_is_charged_its_bytes_not_the_size_limit(client, lineage_secret, clock):
    members = gzip.compress(b"") * 101 + gzip.compress(json.dumps(run_event(outputs=["mart.orders"])).encode())
    response = client.generic("POST", "/api/v1/lineage", members, content_type="application/json",
                              HTTP_CONTENT_ENCODING="gzip", HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert response.status_code == 413 and response.json()["code"] == "too_many_gzip_members"
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201
