"""No input costs more than linear work. Hostile shapes (escaped quotes, deep
brackets, long keys, backslash runs, surrogate escapes, many gzip members, many
outputs) are sent at a size n and at 8n, and the operations the checks count
(bytes each pass reads, bytes zlib is handed and copies out, SQL statements)
may grow at most eightfold: no timing, so the answer is the same on any machine.
bench/hostile.py measures the time these shapes take."""

from __future__ import annotations

import gzip
import json

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lineage.api.views import IngestRefused, _gunzip
from lineage.models import RunEvent
from registry.jsonbody import JsonBodyError, Work, parse_json

from .conftest import post, run_event

# Linear with room for the steps that do not scale (a closing bracket, a last
# slice of a member); work that grew with the square of the size would be 64 times.
GROWTH = 8.4
SLACK = 64


def json_work(body: bytes) -> int:
    work = Work()
    try:
        parse_json(body, work=work)
    except JsonBodyError:
        pass
    return work.steps


def gzip_work(body: bytes) -> int:
    work = Work()
    with override_settings(LINEAGE_MAX_GZIP_MEMBERS=10**9, LINEAGE_MAX_BODY_BYTES=10**9):
        try:
            _gunzip(body, 10**9, work)
        except IngestRefused:
            pass
    return work.steps


def grows_linearly(work, shape) -> tuple[int, int]:
    small, large = work(shape(1)), work(shape(8))
    assert 0 < small and large <= GROWTH * small + SLACK, (small, large)
    return small, large


# Each shape: a body for a size factor k; k=1 is about 40 KB.
SHAPES = {
    "escaped quotes in an unterminated string": lambda k: b"[" * 101 + b'"' + b'\\"' * (20_000 * k),
    "deep brackets": lambda k: b"[" * (20_000 * k) + b"]" * (20_000 * k),
    "unclosed brackets": lambda k: b"[" * (40_000 * k),
    "long keys": lambda k: b"[" * 101 + b'{"' + b"k" * (40_000 * k) + b'": 1}' + b"]" * 101,
    "brackets inside strings": lambda k: b"[" + b",".join([b'"[[[{{{"'] * (5_000 * k)) + b"]",
    "backslash runs": lambda k: b'["' + b"\\" * (40_000 * k) + b'u0000"]',
    "lone surrogate escapes": lambda k: b'["' + b"\\ud800" * (7_000 * k) + b'"]',
    "surrogate pairs then a lone one": lambda k: b'["' + b"\\ud83d\\ude00" * (3_500 * k) + b'\\udc00"]',
}


@pytest.mark.parametrize("name", SHAPES)
def test_the_json_checks_count_linear_work_on_each_hostile_shape(name):
    grows_linearly(json_work, SHAPES[name])


PIECES = st.sampled_from(['"', "\\", '\\"', "\\\\", "[", "]", "{", "}", "\\u", "d8", "dc", "00", "a", ":", ",", "é"])


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.lists(PIECES, max_size=8).map("".join), unit=st.lists(PIECES, min_size=1, max_size=12).map("".join),
       nested=st.booleans())
@example(prefix='[' * 101 + '"', unit='\\"', nested=False)  # the body that stalled a server for a minute
def test_a_body_of_any_repeated_piece_costs_linear_work(prefix, unit, nested):
    """Whatever piece is repeated (past the bracket count that makes the checks
    look closer), eight times the repeats cost at most eight times the work."""
    def body(k: int) -> bytes:
        text = prefix + unit * (2_000 * k)
        return ("[" * 101 + text + "]" * 101 if nested else text).encode()
    grows_linearly(json_work, body)


def test_many_empty_gzip_members_cost_linear_work():
    empty, event = gzip.compress(b""), gzip.compress(json.dumps(run_event(outputs=["mart.a"])).encode())
    small, large = grows_linearly(gzip_work, lambda k: empty * (5_000 * k) + event)
    assert large >= 4 * small  # the count does follow the members


def test_one_large_gzip_member_costs_linear_work():
    grows_linearly(gzip_work, lambda k: gzip.compress(b" " * (1_000_000 * k)))


def test_gzip_members_of_every_size_cost_linear_work():
    members = b"".join(gzip.compress(b"x" * size) for size in (0, 1, 100, 10_000, 65_536))
    grows_linearly(gzip_work, lambda k: members * (20 * k))


@pytest.mark.django_db
@override_settings(LINEAGE_TOKEN_NEW_DATASET_BYTES=0)  # the datasets created are charged in test_token_rate.py
def test_a_batch_of_many_outputs_costs_statements_in_proportion_then_is_refused_whole(client, lineage_secret):
    def batch(events: int, tag: str) -> list:
        return [run_event(outputs=[f"mart.{tag}{e}_t{i}" for i in range(120)]) for e in range(events)]

    def statements(events: int, tag: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = post(client, batch(events, tag), lineage_secret, path="/api/v1/lineage/batch")
        assert response.status_code == 201, response.content[:300]
        return len(queries)

    with override_settings(LINEAGE_MAX_REQUEST_NEW_DATASETS=2000):
        small, large = statements(2, "a"), statements(16, "b")
    assert large <= GROWTH * small + SLACK, (small, large)
    stored = RunEvent.objects.count()
    with CaptureQueriesContext(connection) as queries:
        refused = post(client, batch(9, "c"), lineage_secret, path="/api/v1/lineage/batch")  # 1080 new datasets
    assert refused.status_code == 413 and refused.json()["limit"] == "LINEAGE_MAX_REQUEST_NEW_DATASETS"
    # The token's look-up and the datasets' (one namespace, 500 names a query); nothing stored.
    assert len(queries) <= 2 + 3 and RunEvent.objects.count() == stored
