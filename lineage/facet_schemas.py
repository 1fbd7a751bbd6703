"""The standard facets' own schemas, checked with a compiled validator.

The core spec checks only each facet's base fields (`_producer`, `_schemaURL`);
each standard facet also has a schema of its own (`openlineage_spec/facets/`,
the official files, vendored with their licence). A facet sent under a standard
key — `schema`, `ownership`, `dataQualityAssertions`, … — is checked against
the file whose top-level `properties` name that key, as the spec's README
describes, so a producer's mistake is refused with the facet and the field
named (`outputs[0].facets.ownership.owners[0]: 'name' is a required property
(OwnershipDatasetFacet)`) instead of being stored and misread later.

- Where a key has several files (`ownership` of a dataset and of a job;
  `dataQualityMetrics` as a dataset and as an input facet; `tags`), the file
  made for the facet's place in the event is used; a key used somewhere no
  file is made for (dbt-ol also puts `dataQualityAssertions`, an input facet,
  among an input's dataset facets) is checked against every file of the key
  and passes if one accepts it.
- A facet marked `_deleted: true` only says "forget this facet": its fields
  are not checked.
- Facets under other keys (a producer's own, `dbt_node`, `spark_version`) are
  the producer's business; the core spec's base rules still apply to them.

`jsonschema-rs` compiles each file once (a few microseconds per facet, where
the pure-Python validator takes a millisecond per event), without the base
fields the core rules check already; the formats it checks (`uri`,
`date-time`, `uuid`) are the same functions the core rules use, so both halves
give the verdicts of the reference validator with format checks on
(`jsonschema[format-nongpl]`).
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, NamedTuple
from uuid import UUID

import jsonschema_rs
from rfc3339_validator import validate_rfc3339
from rfc3986_validator import validate_rfc3986

SPEC_DIR = Path(__file__).resolve().parent / "openlineage_spec"
CORE_ID = "https://openlineage.io/spec/2-0-2/OpenLineage.json"

# The places a facet can be, as the core spec names their facet kinds.
RUN, JOB, DATASET, INPUT, OUTPUT = "RunFacet", "JobFacet", "DatasetFacet", "InputDatasetFacet", "OutputDatasetFacet"
_PLACES = (RUN, JOB, DATASET, INPUT, OUTPUT)
_UUID_DASHES = (8, 13, 18, 23)


def is_uri(value: str) -> bool:
    # Producers send the same few URIs (`producer`, `_schemaURL`) in every
    # event: short ones are remembered (a long one would only fill memory).
    return _remembered_uri(value) if len(value) <= 256 else _uri(value)


def _uri(value: str) -> bool:
    return bool(validate_rfc3986(value, rule="URI"))


_remembered_uri = lru_cache(maxsize=2048)(_uri)


def is_date_time(value: str) -> bool:
    return bool(validate_rfc3339(value.upper()))


def is_uuid(value: str) -> bool:
    try:
        UUID(value)
    except ValueError:
        return False
    return all(len(value) > i and value[i] == "-" for i in _UUID_DASHES)


class FacetSchema:
    """One facet key's schema from one file, compiled."""

    __slots__ = ("key", "title", "file_id", "places", "validator")

    def __init__(self, key: str, title: str, file_id: str, places: frozenset[str], validator: Any) -> None:
        self.key, self.title, self.file_id, self.places, self.validator = key, title, file_id, places, validator


def _places_of(document: dict) -> frozenset[str]:
    """The core facet kinds a facet file builds on (its references into the core spec)."""
    text = json.dumps(document)
    return frozenset(place for place in _PLACES if f'{CORE_ID}#/$defs/{place}"' in text)


def _without_base(node: Any) -> Any:
    """A facet file with its references to the core's facet bases taken out of
    its `allOf`s: the core rules (lineage.validation) have checked those
    (`_producer`, `_schemaURL`, `_deleted`) where the facet is, so the compiled
    validator checks only the facet's own fields — half the work, and none of
    it a format callback into Python."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "allOf" and isinstance(value, list):
                value = [part for part in value
                         if not (isinstance(part, dict) and str(part.get("$ref", "")).startswith(f"{CORE_ID}#/$defs/")
                                 and part["$ref"].rsplit("/", 1)[-1] in _PLACES)]
                if not value:
                    continue
            out[key] = _without_base(value)
        return out
    if isinstance(node, list):
        return [_without_base(item) for item in node]
    return node


@cache
def facet_schemas() -> dict[str, list[FacetSchema]]:
    """{facet key: its schemas}, compiled once per process."""
    documents = [json.loads(path.read_text()) for path in sorted(SPEC_DIR.rglob("*.json"))]
    registry = jsonschema_rs.Registry([(doc["$id"], doc if doc["$id"] == CORE_ID else _without_base(doc))
                                       for doc in documents])
    formats = {"uri": is_uri, "date-time": is_date_time, "uuid": is_uuid}
    found: dict[str, list[FacetSchema]] = {}
    for doc in documents:
        if doc["$id"] == CORE_ID:
            continue
        title = doc["$id"].rstrip("/").split("/")[-1].removesuffix(".json")
        places = _places_of(doc)
        for key in doc.get("properties", {}):
            validator = jsonschema_rs.validator_for(
                {"$schema": "https://json-schema.org/draft/2020-12/schema",
                 "$ref": f"{doc['$id']}#/properties/{key}"},
                registry=registry, validate_formats=True, formats=formats)
            found.setdefault(key, []).append(FacetSchema(key, title, doc["$id"], places, validator))
    return found


@lru_cache(maxsize=1024)
def schemas_for(key: str, place: str) -> tuple[FacetSchema, ...]:
    """The schemas a facet under `key` at `place` must meet one of (none: not a standard key)."""
    candidates = facet_schemas().get(key)
    if not candidates:
        return ()
    made_for_place = tuple(s for s in candidates if place in s.places)
    return made_for_place or tuple(candidates)


def _where(base: str, instance_path: list) -> str:
    return base + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in instance_path)


class InvalidFacet(NamedTuple):
    """A standard facet its own schema refuses: where it is in the event
    (`container`: the keys down to its facets object), its key, and why."""

    container: tuple[str | int, ...]  # ("outputs", 0, "facets")
    key: str  # "dataSource"
    problems: tuple[tuple[str, str], ...]  # (path of the field, message)

    @property
    def path(self) -> str:
        return _where("", list(self.container)).lstrip(".") + f".{self.key}"


def check_facets(facets: Any, container: tuple[str | int, ...], place: str) -> list[InvalidFacet]:
    """Each standard facet of `facets` (the event's object at `container`)
    its schema refuses: one validation per facet, its errors spelled out only
    when it fails."""
    if not isinstance(facets, dict):
        return []
    invalid = []
    for key, facet in facets.items():
        schemas = schemas_for(key, place)
        if not schemas or (isinstance(facet, dict) and facet.get("_deleted") is True):
            continue
        if any(schema.validator.is_valid(facet) for schema in schemas):
            continue
        schema = schemas[0]  # the errors of the file made for this place
        where = _where("", [*container, key]).lstrip(".")
        invalid.append(InvalidFacet(container, key, tuple(
            (_where(where, list(error.instance_path)), f"{error.message} ({schema.title})")
            for error in schema.validator.iter_errors(facet))))
    return invalid


def invalid_facets(event: dict, kind: str) -> list[InvalidFacet]:
    """The standard facets of a structurally valid event of `kind`
    ("RunEvent", "JobEvent" or "DatasetEvent") that break their own schemas."""
    if kind == "DatasetEvent":
        return check_facets(event["dataset"].get("facets"), ("dataset", "facets"), DATASET)
    invalid: list[InvalidFacet] = []
    if kind == "RunEvent":
        invalid += check_facets(event["run"].get("facets"), ("run", "facets"), RUN)
    invalid += check_facets(event["job"].get("facets"), ("job", "facets"), JOB)
    for side, own_place, own_key in (("inputs", INPUT, "inputFacets"), ("outputs", OUTPUT, "outputFacets")):
        for i, dataset in enumerate(event.get(side) or []):
            invalid += check_facets(dataset.get("facets"), (side, i, "facets"), DATASET)
            invalid += check_facets(dataset.get(own_key), (side, i, own_key), own_place)
    return invalid


def event_facet_problems(event: dict, kind: str) -> list[tuple[str, str]]:
    """Facet-schema problems of a structurally valid event of `kind`, field by field."""
    return [problem for facet in invalid_facets(event, kind) for problem in facet.problems]


def without_facets(event: dict, invalid: list[InvalidFacet]) -> dict:
    """`event` with the `invalid` facets taken out: a copy of each object on
    the way down to them, the event itself left as it was sent."""
    if not invalid:
        return event
    copy = dict(event)
    copied: set[tuple] = {()}
    for facet in invalid:
        node = copy
        for depth, step in enumerate(facet.container):
            prefix = facet.container[: depth + 1]
            if prefix not in copied:
                node[step] = list(node[step]) if isinstance(node[step], list) else dict(node[step])
                copied.add(prefix)
            node = node[step]
        node.pop(facet.key, None)
    return copy
