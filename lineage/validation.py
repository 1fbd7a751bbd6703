"""OpenLineage 2-0-2 RunEvent validation, written from the spec.

The rules below are those of `https://openlineage.io/spec/2-0-2/OpenLineage.json`
`#/$defs/RunEvent` with format checks on (what `jsonschema[format-nongpl]`
checks), plus the base structure of every facet (`_producer`, `_schemaURL`).
tests/lineage/test_validation_corpus.py holds them to the official schema on
OpenLineage's own events and on mutations of them.

Hand-written rather than a generic JSON Schema engine: an event costs a few
microseconds, and each error names the field in plain words
(`run.runId: 'fake' is not a UUID`), which a pipeline's log can act on.
Facets' own fields (beyond the base) are not part of the RunEvent check, as in
the official schema; the few we read (schema, outputStatistics) are read
defensively.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from rfc3339_validator import validate_rfc3339
from rfc3986_validator import validate_rfc3986

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")
_UUID_DASHES = (8, 13, 18, 23)


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    # -- scalar rules -------------------------------------------------------
    def string(self, obj: dict, key: str, path: str, *, required: bool, fmt: str | None = None) -> None:
        where = f"{path}.{key}" if path else key
        if key not in obj:
            if required:
                self.fail(path, f"'{key}' is required")
            return
        value = obj[key]
        if not isinstance(value, str):
            self.fail(where, f"must be a string, got {_kind(value)}")
            return
        if fmt == "uri" and not validate_rfc3986(value, rule="URI"):
            self.fail(where, f"{_short(value)} is not a URI (an absolute URI with a scheme, e.g. https://…)")
        elif fmt == "date-time" and not validate_rfc3339(value.upper()):
            self.fail(where, f"{_short(value)} is not an RFC 3339 date-time with a time zone (e.g. 2024-05-01T12:00:00Z)")
        elif fmt == "uuid" and not _is_uuid(value):
            self.fail(where, f"{_short(value)} is not a UUID (8-4-4-4-12 hex digits)")

    # -- structures -----------------------------------------------------------
    def facets(self, obj: dict, key: str, path: str, *, deletable: bool) -> None:
        if key not in obj:
            return
        where = f"{path}.{key}"
        facets = obj[key]
        if not isinstance(facets, dict):
            self.fail(where, f"must be an object of facets, got {_kind(facets)}")
            return
        for name, facet in facets.items():
            self.facet(facet, f"{where}.{name}", deletable=deletable)

    def facet(self, facet: Any, path: str, *, deletable: bool) -> None:
        if not isinstance(facet, dict):
            self.fail(path, f"a facet must be an object, got {_kind(facet)}")
            return
        self.string(facet, "_producer", path, required=True, fmt="uri")
        self.string(facet, "_schemaURL", path, required=True, fmt="uri")
        if deletable and "_deleted" in facet and not isinstance(facet["_deleted"], bool):
            self.fail(f"{path}._deleted", f"must be true or false, got {_kind(facet['_deleted'])}")

    def named(self, obj: dict, path: str) -> None:
        self.string(obj, "namespace", path, required=True)
        self.string(obj, "name", path, required=True)

    def datasets(self, event: dict, key: str, io_facets: str) -> None:
        if key not in event:
            return
        items = event[key]
        if not isinstance(items, list):
            self.fail(key, f"must be an array of datasets, got {_kind(items)}")
            return
        for i, dataset in enumerate(items):
            path = f"{key}[{i}]"
            if not isinstance(dataset, dict):
                self.fail(path, f"a dataset must be an object, got {_kind(dataset)}")
                continue
            self.named(dataset, path)
            self.facets(dataset, "facets", path, deletable=True)
            self.facets(dataset, io_facets, path, deletable=False)

    def run_event(self, event: Any) -> None:
        if not isinstance(event, dict):
            self.fail("", f"a RunEvent must be a JSON object, got {_kind(event)}")
            return
        self.string(event, "eventTime", "", required=True, fmt="date-time")
        self.string(event, "producer", "", required=True, fmt="uri")
        self.string(event, "schemaURL", "", required=True, fmt="uri")
        if "eventType" in event and event["eventType"] not in EVENT_TYPES:
            self.fail("eventType", f"{_short(event['eventType'])} is not one of {', '.join(EVENT_TYPES)}")
        run = event.get("run")
        if "run" not in event:
            self.fail("", "'run' is required")
        elif not isinstance(run, dict):
            self.fail("run", f"must be an object, got {_kind(run)}")
        else:
            self.string(run, "runId", "run", required=True, fmt="uuid")
            self.facets(run, "facets", "run", deletable=False)
        job = event.get("job")
        if "job" not in event:
            self.fail("", "'job' is required")
        elif not isinstance(job, dict):
            self.fail("job", f"must be an object, got {_kind(job)}")
        else:
            self.named(job, "job")
            self.facets(job, "facets", "job", deletable=True)
        self.datasets(event, "inputs", "inputFacets")
        self.datasets(event, "outputs", "outputFacets")


def run_event_problems(event: Any) -> list[Problem]:
    """Every way `event` breaks the 2-0-2 RunEvent spec (empty when it is valid)."""
    checker = _Checker()
    checker.run_event(event)
    return checker.problems


NAME_LIMIT = 500  # the namespace/name columns of jobs and datasets


def storage_problems(event: dict, *, canonical: str | None = None) -> list[Problem]:
    """What a spec-valid event cannot be stored as: over-long names, and NUL
    characters, which PostgreSQL text and jsonb cannot hold. `canonical`: the
    event as JSON text (ensure_ascii=False) if the caller has it already."""
    problems = []
    named = [("job", event["job"])]
    for key in ("inputs", "outputs"):
        named += [(f"{key}[{i}]", d) for i, d in enumerate(event.get(key) or [])]
    for path, obj in named:
        for field in ("namespace", "name"):
            if len(obj[field]) > NAME_LIMIT:
                problems.append(Problem(f"{path}.{field}", f"is {len(obj[field])} characters; the registry stores at most {NAME_LIMIT}"))
    if canonical is None:
        canonical = json.dumps(event, ensure_ascii=False)
    if _ESCAPED_NUL.search(canonical):
        problems.append(Problem("", "contains a NUL character (\\u0000), which the database cannot store"))
    return problems


# In JSON text a NUL is always written \u0000; a backslash before it that is
# itself escaped (an even run of them) does not make it a literal "\u0000".
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def _is_uuid(value: str) -> bool:
    try:
        UUID(value)
    except ValueError:
        return False
    return all(len(value) > i and value[i] == "-" for i in _UUID_DASHES)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…'"
