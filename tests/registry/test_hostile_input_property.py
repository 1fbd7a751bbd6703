"""Generated hostile input at the ingest, the API and the web forms: whatever strings
(NUL, lone surrogates, control characters), numbers (huge, tiny, non-finite as
text) and nesting arrive, the answer is never a 5xx. The fixed cases beside this
(test_hostile_input.py) say what each refusal reads; this finds the ones nobody
thought of."""

from __future__ import annotations

import json
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.models import ApiToken

pytestmark = pytest.mark.django_db

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(["\x00", "\ud800", "\udfff", "\u202e", "\ufeff", "\n", "%00", "'", '"', "\\", "a"]),
             max_size=12).map("".join),
    st.sampled_from(["", " ", "a" * 600, "9" * 5000, "1e400", "-0", "NaN", "Infinity", "99999999999999999d"]),
)
HOSTILE_NUMBER = st.one_of(st.integers(min_value=-(10**40), max_value=10**40),
                           st.floats(allow_nan=False, allow_infinity=False), st.just(10**400))
LEAF = st.one_of(HOSTILE_TEXT, HOSTILE_NUMBER, st.booleans(), st.none())
JSON_VALUE = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(HOSTILE_TEXT, inner, max_size=4)),
                          max_leaves=20)
QUICK = settings(max_examples=40, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def encoded(value) -> str:
    # Lone surrogates survive as \\u escapes, as a hostile client sends them.
    return json.dumps(value, ensure_ascii=True)


def form(**fields: str) -> str:
    """A urlencoded body or query string, as a client sends any bytes: lone surrogates
    become the invalid UTF-8 they would be on the wire."""
    return "&".join(f"{name}={quote_from_bytes(value.encode('utf-8', 'surrogatepass'))}"
                    for name, value in fields.items())


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def run_event_like(namespace, name, event_time, extra) -> dict:
    return {"eventType": "COMPLETE", "eventTime": event_time, "producer": "https://example.com/p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": "3f5e1a2b-0c4d-4e6f-8a9b-0c1d2e3f4a5b", "facets": extra},
            "job": {"namespace": namespace, "name": name},
            "outputs": [{"namespace": namespace, "name": name, "facets": extra}]}


@QUICK
@given(namespace=HOSTILE_TEXT, name=HOSTILE_TEXT, event_time=HOSTILE_TEXT, extra=JSON_VALUE)
def test_the_ingest_answers_any_event_it_is_sent_without_a_server_error(client, owner_team, namespace, name,
                                                                      event_time, extra):
    secret = ApiToken.issue("fuzz", team=owner_team)[1]
    body = encoded(run_event_like(namespace, name, event_time, extra))
    response = client.post("/api/v1/lineage", body, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code < 500, (response.status_code, body[:300], response.content[:300])


@QUICK
@given(body=JSON_VALUE, depth=st.sampled_from([1, 50, 5000, 100_000]))
def test_the_batch_ingest_and_the_api_answer_any_body_without_a_server_error(client, admin, dataset, body, depth):
    client.force_login(admin)
    for method, path in (("post", "/api/v1/lineage/batch"), ("post", f"/api/datasets/{dataset.pk}/claim/"),
                         ("post", f"/api/datasets/{dataset.pk}/consumers/"),
                         ("put", f"/api/datasets/{dataset.pk}/freshness/")):
        for payload in (encoded(body), nested(depth)):
            response = getattr(client, method)(path, payload, content_type="application/json")
            assert response.status_code < 500, (method, path, payload[:200], response.content[:300])


@QUICK
@given(team=HOSTILE_TEXT, someone=HOSTILE_TEXT, max_age=HOSTILE_TEXT, warn_after=HOSTILE_TEXT, q=HOSTILE_TEXT)
def test_the_web_forms_and_searches_answer_anything_without_a_server_error(client, owner, owner_team, unowned_dataset,
                                                                           dataset, team, someone, max_age, warn_after,
                                                                           q):
    client.force_login(owner)
    urlencoded = "application/x-www-form-urlencoded"
    answers = [
        client.post(f"/datasets/{unowned_dataset.pk}/claim/", form(team=team, owner=someone), content_type=urlencoded),
        client.post(f"/datasets/{dataset.pk}/freshness/", form(max_age=max_age, warn_after=warn_after),
                    content_type=urlencoded),
        client.get(f"/?{form(q=q, team=team)}"),
        client.get(f"/api/datasets/?{form(search=q)}"),
        client.get(f"/api/v1/lineage?{form(nodeId=f'dataset:{q}:{team}')}"),
    ]
    for response in answers:
        assert response.status_code < 500, (response.status_code, response.content[:300])
