"""Our RunEvent rules agree with the official 2-0-2 schema, event by event.

The official side is the spec files in ../shared/openlineage/spec validated by
the pure-Python `jsonschema` (format checks on), exactly as that folder's
README describes. The corpus is OpenLineage's own integration events, plus
mutations of every valid one that break each rule the spec has.
"""

from __future__ import annotations

import copy
import csv
import json

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from lineage.models import RunEvent
from lineage.validation import run_event_problems

from .conftest import OPENLINEAGE_DIR, post

EVENTS_DIR = OPENLINEAGE_DIR / "events"


@pytest.fixture(scope="module")
def official():
    resources = []
    for path in (OPENLINEAGE_DIR / "spec").rglob("*.json"):
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document, default_specification=DRAFT202012)))
    return Draft202012Validator(
        {"$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"},
        registry=Registry().with_resources(resources),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def corpus() -> list[tuple[str, dict, bool]]:
    with open(EVENTS_DIR / "INDEX.tsv", newline="") as index:
        rows = list(csv.DictReader(index, delimiter="\t"))
    return [(row["file"], json.loads((EVENTS_DIR / row["file"]).read_text()), row["valid_against_2-0-2"] == "true")
            for row in rows]


CORPUS = corpus()


def test_the_corpus_has_both_valid_and_invalid_events():
    assert len(CORPUS) == 59
    assert sum(valid for _, _, valid in CORPUS) == 30


@pytest.mark.parametrize(("name", "event", "listed_valid"), CORPUS, ids=[c[0] for c in CORPUS])
def test_we_accept_exactly_the_corpus_events_the_official_spec_accepts(official, name, event, listed_valid):
    officially_valid = official.is_valid(event)
    assert officially_valid == listed_valid, "INDEX.tsv and the spec files disagree"
    problems = run_event_problems(event)
    assert (not problems) == officially_valid, f"{name}: ours {problems}, official {next(official.iter_errors(event), None)}"


def _set(path):
    def mutate(event, value):
        target = event
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path):
    def mutate(event, _value=None):
        target = event
        for key in path[:-1]:
            target = target[key]
        target.pop(path[-1], None)
    return mutate


def mutations(event: dict) -> list[tuple[str, dict]]:
    """Variants of a valid event, each touching one rule of the spec (most break it)."""
    cases: list[tuple[str, object, object]] = [
        ("no eventTime", _delete(["eventTime"]), None),
        ("eventTime without zone", _set(["eventTime"]), "2024-05-01T12:00:00"),
        ("eventTime date only", _set(["eventTime"]), "2024-05-01"),
        ("eventTime lower-case t and z", _set(["eventTime"]), "2024-05-01t12:00:00.123456789z"),
        ("eventTime offset", _set(["eventTime"]), "2024-05-01T12:00:00+05:30"),
        ("eventTime number", _set(["eventTime"]), 1714564800),
        ("eventTime leap second", _set(["eventTime"]), "2016-12-31T23:59:60Z"),
        ("no producer", _delete(["producer"]), None),
        ("producer relative", _set(["producer"]), "openlineage-dbt/0.0.1"),
        ("producer urn", _set(["producer"]), "urn:example:producer"),
        ("producer with space", _set(["producer"]), "https://example.com/a b"),
        ("no schemaURL", _delete(["schemaURL"]), None),
        ("schemaURL null", _set(["schemaURL"]), None),
        ("eventType unknown", _set(["eventType"]), "DONE"),
        ("eventType lower", _set(["eventType"]), "complete"),
        ("eventType null", _set(["eventType"]), None),
        ("no eventType", _delete(["eventType"]), None),
        ("no run", _delete(["run"]), None),
        ("run a string", _set(["run"]), "abc"),
        ("no runId", _delete(["run", "runId"]), None),
        ("runId not uuid", _set(["run", "runId"]), "fake_run_id"),
        ("runId without dashes", _set(["run", "runId"]), "0176a8c2fe01743987e656a1a1b4029f"),
        ("runId braces", _set(["run", "runId"]), "{0176a8c2-fe01-7439-87e6-56a1a1b4029f}"),
        ("runId upper", _set(["run", "runId"]), "0176A8C2-FE01-7439-87E6-56A1A1B4029F"),
        ("runId int", _set(["run", "runId"]), 5),
        ("run facets array", _set(["run", "facets"]), []),
        ("run facet not object", _set(["run", "facets"]), {"x": 1}),
        ("run facet without producer", _set(["run", "facets"]), {"x": {"_schemaURL": "https://x.example/s"}}),
        ("run facet bad schemaURL", _set(["run", "facets"]), {"x": {"_producer": "https://x.example/p", "_schemaURL": "nope"}}),
        ("run facet ok", _set(["run", "facets"]), {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "y": [1]}}),
        ("run facet _deleted string", _set(["run", "facets"]), {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "_deleted": "yes"}}),
        ("no job", _delete(["job"]), None),
        ("job list", _set(["job"]), []),
        ("no job name", _delete(["job", "name"]), None),
        ("job namespace number", _set(["job", "namespace"]), 3),
        ("job facet _deleted string", _set(["job", "facets"]), {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "_deleted": "yes"}}),
        ("job facet _deleted true", _set(["job", "facets"]), {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "_deleted": True}}),
        ("inputs object", _set(["inputs"]), {}),
        ("input not object", _set(["inputs"]), ["a"]),
        ("input without name", _set(["inputs"]), [{"namespace": "n"}]),
        ("input facet bad", _set(["inputs"]), [{"namespace": "n", "name": "a", "inputFacets": {"x": {}}}]),
        ("input with output facets (allowed)", _set(["inputs"]), [{"namespace": "n", "name": "a", "outputFacets": {"x": 1}}]),
        ("output facet bad", _set(["outputs"]), [{"namespace": "n", "name": "a", "outputFacets": {"x": {"_producer": 1, "_schemaURL": "https://x.example/s"}}}]),
        ("output dataset facet _deleted int", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"x": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "_deleted": 1}}}]),
        ("outputs null", _set(["outputs"]), None),
        ("extra top-level key", _set(["extra"]), {"anything": True}),
    ]
    variants = []
    for label, mutate, value in cases:
        mutated = copy.deepcopy(event)
        try:
            mutate(mutated, value)
        except (KeyError, TypeError):
            continue
        variants.append((label, mutated))
    return variants


VALID = [(name, event) for name, event, valid in CORPUS if valid]


@pytest.mark.parametrize(("name", "event"), VALID, ids=[v[0] for v in VALID])
def test_we_agree_with_the_official_spec_on_every_mutation_of_valid_events(official, name, event):
    disagreements = []
    for label, mutated in mutations(event):
        ours = not run_event_problems(mutated)
        theirs = official.is_valid(mutated)
        if ours != theirs:
            disagreements.append(f"{label}: ours={ours} official={theirs}")
    assert disagreements == []


def test_every_corpus_event_gets_the_status_the_spec_implies(client, lineage_secret):
    for name, event, valid in CORPUS:
        response = post(client, event, lineage_secret)
        assert response.status_code == (201 if valid else 422), (name, response.content)
    # Some corpus files are the same event from different commits.
    assert 0 < RunEvent.objects.count() <= 30


def test_an_error_message_names_the_field_and_the_rule(client, lineage_secret):
    event = dict(CORPUS[[n for n, _, _ in CORPUS].index("spark__sparksql-1__02b63d5.json")][1])
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert response.json()["errors"][0] == {"path": "run.runId", "message": "'fake_run_id' is not a UUID (8-4-4-4-12 hex digits)"}
