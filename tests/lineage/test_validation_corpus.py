"""Our event rules agree with the official 2-0-2 schemas, event by event.

The official side is the spec files in ../shared/openlineage/spec validated by
the pure-Python `jsonschema` (format checks on), exactly as that folder's
README describes: the event against the core schema's top level (`oneOf`
RunEvent, DatasetEvent, JobEvent), then each standard facet, `{key: facet}`,
against its facet file. The corpus is OpenLineage's own integration events,
plus mutations of every valid one that break each rule the spec has.
"""

from __future__ import annotations

import copy
import csv
import json

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from lineage.facet_schemas import SPEC_DIR
from lineage.models import RunEvent
from lineage.validation import run_event_problems

from .conftest import OPENLINEAGE_DIR, post

EVENTS_DIR = OPENLINEAGE_DIR / "events"
CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
PLACES = ("RunFacet", "JobFacet", "DatasetFacet", "InputDatasetFacet", "OutputDatasetFacet")


class Official:
    """The reference verdict: the core schema's top level, then every standard
    facet against the facet file(s) made for its key and place (README's method)."""

    def __init__(self) -> None:
        resources, self.facets = [], {}
        for path in (OPENLINEAGE_DIR / "spec").rglob("*.json"):
            document = json.loads(path.read_text())
            resources.append((document["$id"], Resource.from_contents(document, default_specification=DRAFT202012)))
            if document["$id"] == CORE:
                continue
            text = json.dumps(document)
            places = {p for p in PLACES if f'{CORE}#/$defs/{p}"' in text}
            for key in document["properties"]:
                self.facets.setdefault(key, []).append((document["$id"], places))
        self.registry = Registry().with_resources(resources)
        self.core = self.validator(CORE)
        self.kinds = {kind: self.validator(f"{CORE}#/$defs/{kind}") for kind in ("RunEvent", "JobEvent", "DatasetEvent")}

    def validator(self, ref: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": ref}, registry=self.registry,
                                    format_checker=Draft202012Validator.FORMAT_CHECKER)

    def facet_ok(self, key, facet, place) -> bool:
        files = self.facets.get(key)
        if not files or (isinstance(facet, dict) and facet.get("_deleted") is True):
            return True
        chosen = [f for f, places in files if place in places] or [f for f, _ in files]
        return any(self.validator(f).is_valid({key: facet}) for f in chosen)

    def is_valid(self, event) -> bool:
        if not self.core.is_valid(event):
            return False
        # oneOf: exactly one kind fits, and its definition says where its facets are.
        kind = next(k for k, validator in self.kinds.items() if validator.is_valid(event))
        places = []
        if kind == "RunEvent":
            places.append((event["run"].get("facets"), "RunFacet"))
        if kind in ("RunEvent", "JobEvent"):
            places.append((event["job"].get("facets"), "JobFacet"))
            for side, own, place in (("inputs", "inputFacets", "InputDatasetFacet"),
                                     ("outputs", "outputFacets", "OutputDatasetFacet")):
                for dataset in event.get(side) or []:
                    places += [(dataset.get("facets"), "DatasetFacet"), (dataset.get(own), place)]
        else:
            places.append((event["dataset"].get("facets"), "DatasetFacet"))
        return all(self.facet_ok(key, facet, place)
                   for facets, place in places for key, facet in (facets or {}).items())

    def iter_errors(self, event):
        return self.core.iter_errors(event)


@pytest.fixture(scope="module")
def official():
    return Official()


def test_the_vendored_spec_is_the_official_one():
    shared = {p.relative_to(OPENLINEAGE_DIR / "spec"): p.read_bytes() for p in (OPENLINEAGE_DIR / "spec").rglob("*") if p.is_file()}
    ours = {p.relative_to(SPEC_DIR): p.read_bytes() for p in SPEC_DIR.rglob("*") if p.is_file()}
    assert ours == shared


def corpus() -> list[tuple[str, dict, bool]]:
    with open(EVENTS_DIR / "INDEX.tsv", newline="") as index:
        rows = list(csv.DictReader(index, delimiter="\t"))
    return [(row["file"], json.loads((EVENTS_DIR / row["file"]).read_text()), row["valid_against_2-0-2"] == "true")
            for row in rows]


CORPUS = corpus()


def test_the_corpus_has_both_valid_and_invalid_events():
    assert len(CORPUS) == 59
    assert sum(valid for _, _, valid in CORPUS) == 30


# README.md of the corpus: valid RunEvents whose facets their own schemas refuse.
FACET_INVALID = {
    "fluentd__event_invalid_dataset_facet__a9a33f3.json", "fluentd__event_invalid_job_facet__8d4977f.json",
    "fluentd__event_invalid_input_dataset_facet__a922b31.json", "fluentd__event_invalid_input_dataset_facet__b216f97.json",
    "fluentd__event_invalid_output_dataset_facet__1519010.json", "fluentd__event_invalid_run_facet__ef2bb51.json",
    "fluentd__event_full__1af3a6b.json", "fluentd__event_full__d0f1966.json",
}


@pytest.mark.parametrize(("name", "event", "listed_valid"), CORPUS, ids=[c[0] for c in CORPUS])
def test_we_accept_exactly_the_corpus_events_the_official_spec_accepts(official, name, event, listed_valid):
    officially_valid = official.is_valid(event)
    assert officially_valid == (listed_valid and name not in FACET_INVALID), "INDEX.tsv, README.md and the spec files disagree"
    problems = run_event_problems(event)
    assert (not problems) == officially_valid, f"{name}: ours {problems}, official {next(official.iter_errors(event), None)}"


_FACET = {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s"}


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
        # the other kinds of event
        ("no run: a JobEvent", _delete(["run"]), None),
        ("a dataset beside run and job", _set(["dataset"]), {"namespace": "n", "name": "a"}),
        ("run is null beside a dataset", _set(["run"]), None),
        # the facets' own schemas
        ("schema fields a string", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"schema": {**_FACET, "fields": "id"}}}]),
        ("schema field without name", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"schema": {**_FACET, "fields": [{"type": "int"}]}}}]),
        ("schema field without type", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"schema": {**_FACET, "fields": [{"name": "id"}]}}}]),
        ("owner without name", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"ownership": {**_FACET, "owners": [{"type": "MAINTAINER"}]}}}]),
        ("job owner without name", _set(["job", "facets"]), {"ownership": {**_FACET, "owners": [{}]}}),
        ("documentation deleted", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"documentation": {**_FACET, "_deleted": True}}}]),
        ("documentation without description", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"documentation": {**_FACET}}}]),
        ("symlink without type", _set(["inputs"]), [{"namespace": "n", "name": "a", "facets": {"symlinks": {**_FACET, "identifiers": [{"namespace": "m", "name": "b"}]}}}]),
        ("assertion success a string", _set(["inputs"]), [{"namespace": "n", "name": "a", "inputFacets": {"dataQualityAssertions": {**_FACET, "assertions": [{"assertion": "x", "success": "yes"}]}}}]),
        ("assertions among dataset facets", _set(["inputs"]), [{"namespace": "n", "name": "a", "facets": {"dataQualityAssertions": {**_FACET, "assertions": [{"assertion": "x", "success": True}]}}}]),
        ("metrics without columnMetrics", _set(["inputs"]), [{"namespace": "n", "name": "a", "inputFacets": {"dataQualityMetrics": {**_FACET, "rowCount": 3}}}]),
        ("rowCount a string", _set(["outputs"]), [{"namespace": "n", "name": "a", "outputFacets": {"outputStatistics": {**_FACET, "rowCount": "3"}}}]),
        ("parent runId not a uuid", _set(["run", "facets"]), {"parent": {**_FACET, "run": {"runId": "x"}, "job": {"namespace": "a", "name": "b"}}}),
        ("lifecycle unknown", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"lifecycleStateChange": {**_FACET, "lifecycleStateChange": "MOVE"}}}]),
        ("a producer's own facet", _set(["outputs"]), [{"namespace": "n", "name": "a", "facets": {"dbt_model": {**_FACET, "anything": [1]}}}]),
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


VALID = [(name, event) for name, event, valid in CORPUS if valid and name not in FACET_INVALID]


def as_dataset_event(event: dict) -> dict:
    """A DatasetEvent made of a valid RunEvent's first dataset."""
    first = (event.get("outputs") or event.get("inputs") or [{"namespace": "n", "name": "a"}])[0]
    return {"eventTime": event["eventTime"], "producer": event["producer"], "schemaURL": event["schemaURL"],
            "dataset": {k: v for k, v in first.items() if k in ("namespace", "name", "facets")}}


def dataset_event_mutations(event: dict) -> list[tuple[str, dict]]:
    cases = [
        ("no dataset", _delete(["dataset"]), None),
        ("dataset a list", _set(["dataset"]), []),
        ("dataset without namespace", _delete(["dataset", "namespace"]), None),
        ("dataset facets a list", _set(["dataset", "facets"]), []),
        ("dataset facet without producer", _set(["dataset", "facets"]), {"x": {"_schemaURL": "https://x.example/s"}}),
        ("with a job", _set(["job"]), {"namespace": "a", "name": "b"}),
        ("with a run", _set(["run"]), {"runId": "not checked here"}),
        ("with a bad job", _set(["job"]), 5),
        ("owner without name", _set(["dataset", "facets"]), {"ownership": {**_FACET, "owners": [{"type": "x"}]}}),
        ("symlinks", _set(["dataset", "facets"]), {"symlinks": {**_FACET, "identifiers": [{"namespace": "m", "name": "b", "type": "TABLE"}]}}),
        ("no producer", _delete(["producer"]), None),
    ]
    variants = [("as is", copy.deepcopy(event))]
    for label, mutate, value in cases:
        mutated = copy.deepcopy(event)
        mutate(mutated, value)
        variants.append((label, mutated))
    both = copy.deepcopy(event)
    both.update({"job": {"namespace": "a", "name": "b"}, "run": {"runId": "0176a8c2-fe01-7439-87e6-56a1a1b4029f"}})
    variants.append(("with a job and a run", both))
    return variants


@pytest.mark.parametrize(("name", "event"), VALID, ids=[v[0] for v in VALID])
def test_we_agree_with_the_official_spec_on_dataset_events(official, name, event):
    disagreements = []
    for label, mutated in dataset_event_mutations(as_dataset_event(event)):
        ours = not run_event_problems(mutated)
        theirs = official.is_valid(mutated)
        if ours != theirs:
            disagreements.append(f"{label}: ours={ours} official={theirs}")
    assert disagreements == []


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
        # A facet that breaks its own schema is left out, with a warning; the event is stored.
        codes = {w["code"] for w in response.json().get("warnings", [])} if valid else set()
        assert codes == ({"facet_invalid"} if name in FACET_INVALID else set()), (name, response.content)
    # Some corpus files are the same event from different commits.
    assert 0 < RunEvent.objects.count() <= 30


def test_an_error_message_names_the_field_and_the_rule(client, lineage_secret):
    event = dict(CORPUS[[n for n, _, _ in CORPUS].index("spark__sparksql-1__02b63d5.json")][1])
    response = post(client, event, lineage_secret)
    assert response.status_code == 422
    assert response.json()["errors"][0] == {"path": "run.runId", "message": "'fake_run_id' is not a UUID (8-4-4-4-12 hex digits)"}
