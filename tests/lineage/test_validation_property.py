"""Random values at every place the spec has a rule: our verdict is the
official schema's, and the API never answers 500."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lineage.validation import run_event_problems

from .conftest import post, run_event
from .test_validation_corpus import official  # noqa: F401  (the fixture)

STRINGS = st.one_of(
    st.text(max_size=12),
    st.sampled_from([
        "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.5+02:00", "2024-05-01 12:00:00Z", "2024-05-01T25:00:00Z",
        "2024-02-30T00:00:00Z", "0176a8c2-fe01-7439-87e6-56a1a1b4029f", "0176a8c2fe01743987e656a1a1b4029f",
        "urn:uuid:0176a8c2-fe01-7439-87e6-56a1a1b4029f", "https://example.com/a?b#c", "mailto:a@b.c", "a:b",
        "//example.com", "/relative", "http://[::1]:80/", "https://exa mple.com", "START", "COMPLETE", "",
    ]),
)
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), STRINGS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(STRINGS, inner, max_size=3)),
    max_leaves=6,
)
FACET = {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s"}
PATHS = [
    ("eventTime",), ("producer",), ("schemaURL",), ("eventType",), ("run",), ("run", "runId"), ("run", "facets"),
    ("run", "facets", "f"), ("run", "facets", "f", "_producer"), ("run", "facets", "f", "_deleted"),
    ("job",), ("job", "namespace"), ("job", "name"), ("job", "facets"), ("job", "facets", "f", "_deleted"),
    ("job", "facets", "f", "_schemaURL"), ("inputs",), ("inputs", 0), ("inputs", 0, "name"),
    ("inputs", 0, "facets", "f"), ("inputs", 0, "inputFacets", "f", "_producer"), ("outputs",), ("outputs", 0),
    ("outputs", 0, "namespace"), ("outputs", 0, "facets", "schema", "_deleted"),
    ("outputs", 0, "outputFacets", "f"), ("outputs", 0, "outputFacets", "f", "_schemaURL"),
    # the other kinds of event, and the facets' own schemas
    ("dataset",), ("dataset", "name"), ("dataset", "facets"), ("dataset", "facets", "schema", "fields"),
    ("dataset", "facets", "ownership", "owners"), ("dataset", "facets", "symlinks", "identifiers", 0, "type"),
    ("outputs", 0, "facets", "schema", "fields"), ("outputs", 0, "facets", "schema", "fields", 0, "type"),
    ("outputs", 0, "outputFacets", "outputStatistics", "rowCount"),
    ("inputs", 0, "inputFacets", "dataQualityAssertions", "assertions", 0, "success"),
    ("job", "facets", "ownership", "owners", 0),
]
KINDS = ("run", "job", "dataset")


def base_event(kind: str = "run") -> dict:
    event = run_event("START", inputs=["raw.a"], outputs=["mart.a"])
    event["run"]["facets"] = {"f": dict(FACET)}
    event["job"]["facets"] = {"f": dict(FACET), "ownership": dict(FACET, owners=[{"name": "team:a"}])}
    event["inputs"][0]["facets"] = {"f": dict(FACET)}
    event["inputs"][0]["inputFacets"] = {"f": dict(FACET), "dataQualityAssertions": dict(
        FACET, assertions=[{"assertion": "not_null", "success": True}])}
    event["outputs"][0]["facets"] = {"schema": dict(FACET, fields=[{"name": "id", "type": "int"}])}
    event["outputs"][0]["outputFacets"] = {"f": dict(FACET), "outputStatistics": dict(FACET, rowCount=1)}
    if kind == "job":
        del event["run"]
    elif kind == "dataset":
        event = {k: event[k] for k in ("eventTime", "producer", "schemaURL")}
        event["dataset"] = {"namespace": "n", "name": "a", "facets": {
            "schema": dict(FACET, fields=[]), "ownership": dict(FACET, owners=[]),
            "symlinks": dict(FACET, identifiers=[{"namespace": "m", "name": "b", "type": "TABLE"}])}}
    return event


def put(event: dict, path: tuple, value) -> dict | None:
    """The event with `value` at `path`; None when the event has no such place."""
    event = copy.deepcopy(event)
    target = event
    try:
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return None
    return event


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), path=st.sampled_from(PATHS), value=VALUES)
def test_any_value_anywhere_gets_the_official_verdict(official, kind, path, value):  # noqa: F811
    event = put(base_event(kind), path, value)
    assume(event is not None)
    assert (not run_event_problems(event)) == official.is_valid(event), (path, value, run_event_problems(event))


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), path=st.sampled_from(PATHS), value=VALUES)
def test_the_api_never_answers_500(client, lineage_secret, kind, path, value):
    event = put(base_event(kind), path, value)
    assume(event is not None)
    response = post(client, event, lineage_secret)
    assert response.status_code in (201, 400, 422), response.content
