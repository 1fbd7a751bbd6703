"""OpenLineage 2-0-2 event validation, written from the spec.

The rules below are those of `https://openlineage.io/spec/2-0-2/OpenLineage.json`
with format checks on (what `jsonschema[format-nongpl]` checks): its top level
is `oneOf [RunEvent, DatasetEvent, JobEvent]`, so an event is valid when exactly
one kind fits, and the base structure of every facet (`_producer`,
`_schemaURL`) is checked where the spec puts facets. Then every standard facet
is checked against its own schema (lineage.facet_schemas, a compiled
validator over the official facet files).
tests/lineage/test_validation_corpus.py and test_validation_property.py hold
both halves to the official schemas, validated by the reference `jsonschema`,
on OpenLineage's own events, on mutations of them and on random values.

The core rules are hand-written rather than a generic engine: the errors name
the field and the rule in plain words (`run.runId: 'fake' is not a UUID`)
where a generic validator of the top-level `oneOf` can only say "not valid
under any of the given schemas"; and they cost about as much as the compiled
validator (a few tens of microseconds per event, most of it the format checks).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings

from lineage.facet_schemas import InvalidFacet, invalid_facets, is_date_time, is_uri, is_uuid
from registry.identifiers import identifier_problem

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    # -- scalar rules -------------------------------------------------------
    def string(self, obj: dict, key: str, path: str, *, required: bool, fmt: str | None = None) -> None:
        if key not in obj:
            if required:
                self.fail(path, f"'{key}' is required")
            return
        value = obj[key]
        # Every event passes through here a few dozen times: the path of a
        # problem is only spelled out when there is one.
        if not isinstance(value, str):
            self.fail(_at(path, key), f"must be a string, got {_kind(value)}")
        elif fmt is None:
            return
        elif fmt == "uri" and not is_uri(value):
            self.fail(_at(path, key), f"{_short(value)} is not a URI (an absolute URI with a scheme, e.g. https://…)")
        elif fmt == "date-time" and not is_date_time(value):
            self.fail(_at(path, key), f"{_short(value)} is not an RFC 3339 date-time with a time zone (e.g. 2024-05-01T12:00:00Z)")
        elif fmt == "uuid" and not is_uuid(value):
            self.fail(_at(path, key), f"{_short(value)} is not a UUID (8-4-4-4-12 hex digits)")

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

    def base(self, event: dict) -> None:
        """BaseEvent: what every kind of event carries."""
        self.string(event, "eventTime", "", required=True, fmt="date-time")
        self.string(event, "producer", "", required=True, fmt="uri")
        self.string(event, "schemaURL", "", required=True, fmt="uri")

    def job(self, event: dict) -> None:
        job = event.get("job")
        if "job" not in event:
            self.fail("", "'job' is required")
        elif not isinstance(job, dict):
            self.fail("job", f"must be an object, got {_kind(job)}")
        else:
            self.named(job, "job")
            self.facets(job, "facets", "job", deletable=True)

    def run_event(self, event: dict) -> None:
        """RunEvent's own rules (BaseEvent's apart)."""
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
        self.job(event)
        self.datasets(event, "inputs", "inputFacets")
        self.datasets(event, "outputs", "outputFacets")

    def job_event(self, event: dict) -> None:
        """JobEvent's own rules: a job, maybe its static inputs and outputs, no run."""
        self.job(event)
        self.datasets(event, "inputs", "inputFacets")
        self.datasets(event, "outputs", "outputFacets")
        if "run" in event:
            self.fail("", "a JobEvent has no 'run' (an event with 'run' and 'job' is a RunEvent)")

    def dataset_event(self, event: dict) -> None:
        """DatasetEvent's own rules: a dataset, and not both a job and a run."""
        dataset = event.get("dataset")
        if "dataset" not in event:
            self.fail("", "'dataset' is required")
        elif not isinstance(dataset, dict):
            self.fail("dataset", f"must be an object, got {_kind(dataset)}")
        else:
            self.named(dataset, "dataset")
            self.facets(dataset, "facets", "dataset", deletable=True)
        if "job" in event and "run" in event:
            self.fail("", "a DatasetEvent has not both 'job' and 'run' (that is a RunEvent)")


class EventKind:
    RUN = "RunEvent"
    JOB = "JobEvent"
    DATASET = "DatasetEvent"


_KIND_RULES = {EventKind.RUN: _Checker.run_event, EventKind.JOB: _Checker.job_event,
               EventKind.DATASET: _Checker.dataset_event}


def _intended_kind(event: dict) -> str:
    """The kind whose problems to report when no kind fits: what the event's keys suggest."""
    if "run" in event and "job" in event:
        return EventKind.RUN
    if "dataset" in event:
        return EventKind.DATASET
    if "job" in event:
        return EventKind.JOB
    return EventKind.RUN


@dataclass(frozen=True)
class Checked:
    """The verdict on one event: its kind (None when it is none), its problems
    (any refuses it), and the standard facets that break their own schemas
    (each is dropped, not the event: lineage.facet_schemas.without_facets)."""

    kind: str | None
    problems: list[Problem]
    invalid_facets: list[InvalidFacet] = dataclass_field(default_factory=list)


def check_event(event: Any, *, facets: bool = True) -> Checked:
    """The 2-0-2 verdict on `event`: the spec's top level is `oneOf [RunEvent,
    DatasetEvent, JobEvent]`, so an event is valid when exactly one kind fits.
    With `facets`, every known facet of a valid event is also checked against
    its own facet schema (lineage.facet_schemas): one that fails is listed in
    `invalid_facets`, not among the problems, since a producer's sloppy facet
    must not cost the run."""
    if not isinstance(event, dict):
        return Checked(None, [Problem("", f"an event must be a JSON object, got {_kind(event)}")])
    if not ("run" in event or "job" in event or "dataset" in event):
        base = _Checker()
        base.base(event)
        return Checked(None, [*base.problems, Problem(
            "", "'run' and 'job' are required (a RunEvent), or 'job' (a JobEvent), or 'dataset' (a DatasetEvent)")])
    base = _Checker()
    base.base(event)
    # Which kinds can fit at all, by the keys each requires and forbids: most
    # events can be only one, so only its rules run.
    has_run, has_job = "run" in event, "job" in event
    possible = [kind for kind, fits in ((EventKind.RUN, has_run and has_job), (EventKind.JOB, has_job and not has_run),
                                        (EventKind.DATASET, "dataset" in event and not (has_run and has_job))) if fits]
    own: dict[str, list[Problem]] = {}
    for kind in possible or [_intended_kind(event)]:
        checker = _Checker()
        _KIND_RULES[kind](checker, event)
        own[kind] = checker.problems
    fitting = [kind for kind in possible if not own[kind]]
    if base.problems or not fitting:
        intended = _intended_kind(event)
        if intended not in own:
            checker = _Checker()
            _KIND_RULES[intended](checker, event)
            own[intended] = checker.problems
        return Checked(None, base.problems + own[intended])
    if len(fitting) > 1:
        # Only a JobEvent and a DatasetEvent can both fit (neither allows a run with a job).
        return Checked(None, [Problem("", "is both a valid JobEvent and a valid DatasetEvent (it has 'job' and "
                                          "'dataset'); the spec accepts exactly one kind: send one of them")])
    kind = fitting[0]
    if not facets:
        return Checked(kind, [])
    return Checked(kind, [], invalid_facets(event, kind))


def run_event_problems(event: Any) -> list[Problem]:
    """Every way `event` breaks the 2-0-2 spec, its facets' schemas included (empty when it is valid)."""
    checked = check_event(event)
    return checked.problems + [Problem(path, message) for facet in checked.invalid_facets
                               for path, message in facet.problems]


NAME_LIMIT = 500  # the namespace/name columns of jobs and datasets


def storage_problems(event: dict, *, kind: str = EventKind.RUN, canonical: str | None = None) -> list[Problem]:
    """What a spec-valid event cannot be stored as: an eventTime out of range
    (event_time_problem), over-long names, names holding a bidirectional control or a
    combining mark (registry.identifiers: they would pass for other names), and NUL
    characters, which PostgreSQL text and jsonb cannot hold. `canonical`: the
    event as JSON text (ensure_ascii=False) if the caller has it already."""
    problems = []
    time_problem = event_time_problem(event["eventTime"], run_state=kind == EventKind.RUN)
    if time_problem is not None:
        problems.append(time_problem)
    if kind == EventKind.DATASET:
        named = [("dataset", event["dataset"])]
    else:
        named = [("job", event["job"])]
        for key in ("inputs", "outputs"):
            named += [(f"{key}[{i}]", d) for i, d in enumerate(event.get(key) or [])]
    for path, obj in named:
        for field in ("namespace", "name"):
            if len(obj[field]) > NAME_LIMIT:
                problems.append(Problem(f"{path}.{field}", f"is {len(obj[field])} characters; the registry stores at most {NAME_LIMIT}"))
            elif unsafe := identifier_problem(obj[field]):
                problems.append(Problem(f"{path}.{field}", unsafe))
    if canonical is None:
        canonical = json.dumps(event, ensure_ascii=False)
    # The substring test first: the regex costs a quarter of a millisecond on an ordinary event.
    if "\\u0000" in canonical and _ESCAPED_NUL.search(canonical):
        problems.append(Problem("", "contains a NUL character (\\u0000), which the database cannot store"))
    return problems


def event_time_problem(value: str, *, run_state: bool, now: datetime | None = None) -> Problem | None:
    """Why a spec-valid eventTime cannot be stored: outside years 1–9999 once in
    UTC (PostgreSQL holds it, Python cannot read it back: every page showing the
    row failed), or, for a RunEvent, further ahead than LINEAGE_MAX_FUTURE_SKEW
    (a run's state only moves forward in time: an event from next year would
    pin it until then)."""
    text = value.upper()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        # RFC 3339 allows a leap second, which datetime cannot hold.
        moment = datetime.fromisoformat(text.replace(":60", ":59", 1))
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        return Problem("eventTime", f"{_short(value)} is outside years 1–9999 once in UTC; the registry cannot store it")
    if run_state:
        skew: timedelta = settings.LINEAGE_MAX_FUTURE_SKEW
        if moment > (now or datetime.now(UTC)) + skew:
            return Problem("eventTime", f"{_short(value)} is more than {_human(skew)} ahead of the registry's clock "
                                        "(LINEAGE_MAX_FUTURE_SKEW); send the time the run changed state")
    return None


def _human(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


# In JSON text a NUL is always written \u0000; a backslash before it that is
# itself escaped (an even run of them) does not make it a literal "\u0000".
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


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
