"""Each API token has a budget of request bytes per server process
(registry.ratelimit): a bucket of LINEAGE_TOKEN_BURST_BYTES refilled at
LINEAGE_TOKEN_BYTES_PER_SECOND, charged with every body it sends, refused or
not. A spent budget is a 429 naming the setting, with Retry-After. The clock
is the test's: time passes when the test says so, never by waiting."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from django.test import override_settings

from lineage.models import RunEvent
from registry.models import ApiToken, hash_token
from registry.ratelimit import (
    BUCKETS,
    REFUSALS,
    SYNC_BYTES,
    SYNC_SECONDS,
    Limits,
    OverBudget,
    RefusalHold,
    TokenBuckets,
)

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
    """The buckets' clock, stopped; the buckets emptied before and after. The datasets an
    event creates cost nothing here unless a test says what they cost: bodies are the subject."""
    saved, stopped = BUCKETS.clock, Clock()
    BUCKETS.clock = stopped
    BUCKETS.clear()
    saved_sleep, stopped.held = REFUSALS.sleep, []
    REFUSALS.sleep = stopped.held.append
    with override_settings(LINEAGE_TOKEN_NEW_DATASET_BYTES=0):
        yield stopped
    BUCKETS.clock = saved
    REFUSALS.sleep = saved_sleep
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
def test_a_429_is_answered_late_by_a_second_or_its_retry_after_if_sooner(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    body = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    assert clock.held == [min(1.0, body["retry_after"])]
    with override_settings(LINEAGE_TOKEN_REFUSAL_HOLD_MS=250):
        rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    assert clock.held[-1] == 0.25
    with override_settings(LINEAGE_TOKEN_REFUSAL_HOLD_MS=0):
        rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    assert len(clock.held) == 2


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_the_apis_429_is_answered_late_too(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    response = client.post("/api/teams/", data={}, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {lineage_secret}")
    assert response.status_code == 429 and response.json()["code"] == "rate_limited"
    assert clock.held == [min(1.0, response.json()["retry_after"])]


@override_settings(LINEAGE_TOKEN_REFUSAL_HOLD_MS=1000, LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS=1)
def test_past_its_slots_a_process_answers_a_429_at_once():
    """Many connections of spent tokens cannot take every server thread: a refusal that finds
    the slots full is answered without waiting."""
    inner = []
    hold = RefusalHold(sleep=lambda seconds: inner.append(hold.hold(5)))
    assert hold.hold(5) == 1.0
    assert inner == [0.0]  # the second refusal came while the first waited
    assert hold.hold(5) == 1.0  # the slot is free again
    assert hold.held == 2
    with override_settings(LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS=0):
        assert hold.hold(5) == 0.0


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


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST,
                   LINEAGE_TOKEN_NEW_DATASET_BYTES=BURST)
def test_each_dataset_an_event_creates_is_charged_once_it_is_stored(client, lineage_secret, clock):
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201  # a small body
    rate_limited(post(client, run_event(outputs=["mart.orders"]), lineage_secret))
    assert RunEvent.objects.count() == 1


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST,
                   LINEAGE_TOKEN_NEW_DATASET_BYTES=BURST)
def test_datasets_a_batch_creates_are_charged_too_and_known_ones_are_not(client, lineage_secret, clock):
    assert post(client, [run_event(outputs=["mart.orders"])], lineage_secret, path=BATCH).status_code == 201
    body = rate_limited(post(client, run_event(outputs=["mart.orders"]), lineage_secret))
    clock.now += body["retry_after"] + BURST / RATE  # a full bucket again
    for _ in range(2):  # events of a dataset the registry knows: their bytes only
        assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201


# --- refused bodies, refusals that cost no query, connections ----------------------------

REFUSED_RATE, REFUSED_BURST = 100, 1000
ROOMY = {"LINEAGE_TOKEN_BYTES_PER_SECOND": 10**6, "LINEAGE_TOKEN_BURST_BYTES": 10**7,
         "LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND": REFUSED_RATE, "LINEAGE_TOKEN_REFUSED_BURST_BYTES": REFUSED_BURST}
UNREADABLE = b"[" * 101 + b'"' + b'\\"' * 1000  # 2 KB no JSON reader takes: a 400


@pytest.fixture
def token_checks():
    """This process's recent token checks, forgotten before and after."""
    from lineage.api.views import RECENT_TOKEN_CHECKS

    RECENT_TOKEN_CHECKS.clear()
    yield RECENT_TOKEN_CHECKS
    RECENT_TOKEN_CHECKS.clear()


@override_settings(**ROOMY)
def test_unreadable_bodies_past_the_refused_budget_hold_the_token_back_whatever_it_sends(
        client, lineage_secret, owner_team, clock):
    assert post(client, None, lineage_secret, raw=UNREADABLE).status_code == 400
    refused = post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    assert refused.status_code == 429
    body = refused.json()
    assert body["limit"] == "LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND" and body["allowed"] == REFUSED_RATE, body
    assert "refused as unreadable or too large" in body["detail"]
    # The token's bytes budget is far from spent; another token is not held back.
    other = ApiToken.issue("dbt", team=owner_team)[1]
    assert post(client, run_event(outputs=["mart.other"]), other).status_code == 201
    clock.now += body["retry_after"]
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201


@override_settings(**ROOMY)
def test_events_the_spec_refuses_do_not_spend_the_refused_budget(client, lineage_secret, clock):
    invalid = run_event(outputs=["mart.orders"])
    invalid["run"]["facets"] = {"note": {"text": "x" * REFUSED_BURST}}  # a facet without _producer
    del invalid["eventTime"]
    for _ in range(3):
        assert post(client, invalid, lineage_secret).status_code == 422
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201


@override_settings(**ROOMY, LINEAGE_MAX_BODY_BYTES=1024)
def test_a_body_refused_for_its_declared_length_is_not_read_and_spends_no_refused_budget(client, lineage_secret, clock):
    for _ in range(3):
        assert post(client, big_event(), lineage_secret).status_code == 413
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_429_costs_no_query_for_a_token_this_process_checked_lately(
        client, lineage_secret, clock, token_checks, django_assert_num_queries):
    assert post(client, big_event(), lineage_secret).status_code == 201
    with django_assert_num_queries(0):
        rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
        rate_limited(post(client, [run_event(outputs=["mart.late"])], lineage_secret, path=BATCH))


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_an_unknown_token_past_its_budget_is_still_told_it_is_unknown(client, clock, token_checks,
                                                                      django_assert_num_queries):
    assert post(client, big_event(), "no-such-token").status_code == 401
    with django_assert_num_queries(0):  # its refusal is remembered: no query for the next ones
        for _ in range(3):
            response = post(client, big_event(), "no-such-token")
            assert response.status_code == 401 and response.json()["code"] == "token_invalid"


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_token_not_checked_lately_is_checked_before_its_429(client, lineage_secret, clock, token_checks,
                                                               django_assert_num_queries):
    assert post(client, big_event(), lineage_secret).status_code == 201
    token_checks.clear()  # as in a process that has not seen the token (or saw it over 10 s ago)
    ApiToken.objects.get(key_hash=hash_token(lineage_secret)).revoke()
    response = post(client, run_event(outputs=["mart.late"]), lineage_secret)
    assert response.status_code == 401 and response.json()["code"] == "token_revoked"


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST)
def test_a_429_leaves_a_large_body_unread_and_closes_the_connection_and_reads_a_small_one(client, lineage_secret, clock):
    assert post(client, big_event(), lineage_secret).status_code == 201
    small = rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    assert small is not None
    kept = post(client, run_event(outputs=["mart.late"]), lineage_secret)
    assert kept.status_code == 429 and "Connection" not in kept  # read to its end: the connection takes the next
    large = run_event(outputs=["mart.late"])
    large["run"]["facets"] = {"note": {"_producer": "https://example.com/p", "_schemaURL": "https://example.com/s",
                                       "text": "x" * 100_000}}
    closed = post(client, large, lineage_secret)
    assert closed.status_code == 429 and closed["Connection"] == "close"


# --- one budget for every server process ------------------------------------------------

REDIS_URL = os.environ.get("TEST_TOKEN_BUDGET_REDIS_URL", "redis://127.0.0.1:6379/12")
SHARED = Limits(rate=100_000, burst=200_000, refused_rate=10_000, refused_burst=100_000)


@pytest.fixture
def two_processes(clock):
    """Two processes' buckets (TokenBuckets each), on the same stopped clock, sharing Redis; emptied."""
    with override_settings(LINEAGE_TOKEN_BUDGET_REDIS_URL=REDIS_URL):
        first, second = TokenBuckets(clock=clock), TokenBuckets(clock=clock)
        first.clear()
        yield first, second
        first.clear()


def test_a_token_spent_in_one_process_is_refused_by_another(two_processes, clock):
    first, second = two_processes
    first.charge("pipeline", SHARED.burst + 50_000, limits=SHARED)  # a large body: pushed at once
    with pytest.raises(OverBudget) as over:
        second.charge("pipeline", SYNC_BYTES, limits=SHARED)
    assert over.value.limit == "LINEAGE_TOKEN_BYTES_PER_SECOND"
    second.charge("another token", SYNC_BYTES, limits=SHARED)


def test_small_bodies_are_pushed_in_batches_and_seen_by_the_other_process(two_processes, clock):
    first, second = two_processes
    slow = Limits(rate=1000, burst=100_000, refused_rate=1000, refused_burst=100_000)
    for _ in range(60):  # small events: kept in the process, pushed every SYNC_SECONDS
        first.charge("pipeline", 1000, limits=slow)
        clock.now += SYNC_SECONDS / 10
    # The second process asks Redis at the token's first request: some 40 KB are left of 100 KB.
    second.charge("pipeline", 50_000, limits=slow)
    with pytest.raises(OverBudget):
        second.charge("pipeline", 1000, limits=slow)
    clock.now += SYNC_SECONDS
    with pytest.raises(OverBudget):  # the first learns what the second spent at its next push
        first.charge("pipeline", 1000, limits=slow)


def test_refused_bodies_read_in_one_process_hold_the_token_back_in_another(two_processes, clock):
    first, second = two_processes
    first.charge_refused("pipeline", SHARED.refused_burst + SYNC_BYTES, limits=SHARED)
    with pytest.raises(OverBudget) as over:
        second.charge("pipeline", SYNC_BYTES, limits=SHARED)
    assert over.value.limit == "LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND"


def test_without_redis_each_process_keeps_its_own_budget(clock):
    first, second = TokenBuckets(clock=clock), TokenBuckets(clock=clock)
    first.charge("pipeline", SHARED.burst + 50_000, limits=SHARED)
    with pytest.raises(OverBudget):
        first.charge("pipeline", SYNC_BYTES, limits=SHARED)
    second.charge("pipeline", SYNC_BYTES, limits=SHARED)


def test_with_redis_out_of_reach_the_budget_holds_per_process(clock):
    with override_settings(LINEAGE_TOKEN_BUDGET_REDIS_URL="redis://127.0.0.1:1/0"):
        buckets = TokenBuckets(clock=clock)
        buckets.charge("pipeline", SHARED.burst + 50_000, limits=SHARED)
        with pytest.raises(OverBudget):
            buckets.charge("pipeline", SYNC_BYTES, limits=SHARED)


@override_settings(LINEAGE_TOKEN_BYTES_PER_SECOND=RATE, LINEAGE_TOKEN_BURST_BYTES=BURST,
                   LINEAGE_TOKEN_BUDGET_REDIS_URL=REDIS_URL)
def test_the_ingest_spends_the_shared_budget(client, lineage_secret, clock):
    BUCKETS.clear()
    assert post(client, big_event(), lineage_secret).status_code == 201
    rate_limited(post(client, run_event(outputs=["mart.late"]), lineage_secret))
    another_process = TokenBuckets(clock=clock)
    with pytest.raises(OverBudget):
        another_process.charge(hash_token(lineage_secret), 100)
    BUCKETS.clear()


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "per process"])
def test_work_done_is_charged_without_refusing_the_request_that_did_it(clock, shared):
    with override_settings(LINEAGE_TOKEN_BUDGET_REDIS_URL=REDIS_URL if shared else ""):
        buckets = TokenBuckets(clock=clock)
        buckets.clear()
        buckets.charge("pipeline", SHARED.burst + SYNC_BYTES, limits=SHARED)
        buckets.charge("pipeline", SHARED.burst, limits=SHARED, refuse=False)  # spent, and no refusal
        with pytest.raises(OverBudget):
            buckets.charge("pipeline", 100, limits=SHARED)
        buckets.clear()
