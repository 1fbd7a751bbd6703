"""Who is still on which lane, from the evidence the product has.

1. The thin client: each document fetch over the API says which version a selector
   resolved to (LaneRead, per token or person, with its team). A reader is on the
   lane of its most recent fetch: a consumer that moved to 3.x is no longer on 2.x.
2. Lineage, in two ways, the first deciding when it can:
   a. the schema each reader job's events gave the contract's bound dataset as an
      input (the input's `schema` facet, kept per dataset and job by the ingest:
      `registry.usage.InputSchema`), matched against each lane's newest release
      (`match_schema`): the lane it fits best, names and types where given; a tie is
      shown as undecided, never guessed;
   b. else the columns the job reads (`registry.usage.readings_of`): a job that reads
      a column the newest lane dropped, and every column it reads is in an older
      lane, is on that lane.

`lane_usage(contracts)` answers for many contracts in a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils import timezone
from packaging.version import Version
from registry_client.dtypes import UnknownDtypeError, canonicalize_dtype
from registry_client.versions import lane_of, latest_in_lane
from registry_client.warehouse_types import UnmappableType, canonical_dtype, dialect_of_namespace

from contracts_app.models import Contract, ContractVersion, DatasetBinding, field_names, version_of
from lanes.models import Lane, LaneRead
from registry.models import Team
from registry.usage import ReaderSchema, reader_schemas_of, readings_of

THIN_CLIENT, LINEAGE = "thin client", "lineage"


@dataclass
class Sighting:
    """One reader seen on a lane: a job (lineage) or a token or person (the thin client)."""

    who: str
    team_id: int | None
    team: str | None  # the team's name
    last_seen: datetime | None
    source: str
    detail: str
    key: str = ""  # what identifies the reader: a job, or a token or person


@dataclass
class LaneUsage:
    contract_id: int
    major: int
    latest: str | None
    versions: list[str]
    lane: Lane | None
    newest: bool
    readers: list[Sighting] = field(default_factory=list)
    # Jobs whose input schema fits this lane and another alike: shown, not counted.
    undecided: list[Sighting] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.major}.x"

    @property
    def team_ids(self) -> set[int]:
        return {r.team_id for r in self.readers if r.team_id is not None}

    @property
    def teams(self) -> list[tuple[str, datetime | None]]:
        """Each team on the lane with the last time any of its readers was seen."""
        seen: dict[str, datetime | None] = {}
        for r in self.readers:
            if r.team:
                last = seen.get(r.team)
                seen[r.team] = r.last_seen if last is None or (r.last_seen and r.last_seen > last) else last
        return sorted(seen.items())

    @property
    def jobs(self) -> int:
        return len({(r.source, r.key or r.who) for r in self.readers})

    @property
    def summary(self) -> str:
        teams, jobs = len(self.team_ids), self.jobs
        return (f"{teams} team{'s' if teams != 1 else ''}, {jobs} job{'s' if jobs != 1 else ''} "
                f"{'on' if self.newest else 'still on'} {self.label}")


def lane_usage(contracts: Iterable[Contract], *, now: datetime | None = None,
               bound: dict[int, int] | None = None) -> dict[int, list[LaneUsage]]:
    """Per contract, its lanes oldest first, each with the readers seen on it.

    Contracts whose versions are prefetched (the contract page) are not asked again, and
    `bound` ({dataset id: contract id}), when the caller already has the bindings, spares
    asking for them a second time."""
    now = now or timezone.now()
    contracts = list(contracts)
    ids = [c.pk for c in contracts]
    versions: dict[int, list[ContractVersion]] = {i: [] for i in ids}
    prefetched = [c for c in contracts if "versions" in getattr(c, "_prefetched_objects_cache", {})]
    for c in prefetched:
        versions[c.pk] = list(c.versions.all())
    others = [c.pk for c in contracts if c not in prefetched]
    if others:
        for v in ContractVersion.objects.filter(contract_id__in=others).only("id", "contract_id", "version", "document"):
            versions[v.contract_id].append(v)
    lanes = {(lane.contract_id, lane.major): lane for lane in Lane.objects.filter(contract_id__in=ids)}
    usage: dict[int, list[LaneUsage]] = {}
    columns: dict[tuple[int, int], set[str]] = {}
    shapes: dict[int, dict[int, LaneColumns]] = {}
    for cid in ids:
        majors = sorted({lane_of(v.version) for v in versions[cid]})
        newest = max((m for m in majors if latest_in_lane(versions[cid], m, key=version_of)), default=None)
        usage[cid] = []
        for major in majors:
            latest = latest_in_lane(versions[cid], major, key=version_of)
            usage[cid].append(LaneUsage(
                cid, major, latest.version if latest else None,
                sorted((v.version for v in versions[cid] if lane_of(v.version) == major), key=Version),
                lanes.get((cid, major)), major == newest))
            if latest is not None:
                columns[(cid, major)] = set(field_names(latest.document))
                shapes.setdefault(cid, {})[major] = lane_columns(latest.document, f"{major}.x")
    by_lane = {(u.contract_id, u.major): u for found in usage.values() for u in found}
    since = now - settings.COLUMN_USAGE_WINDOW
    _thin_client(ids, by_lane, since)
    # Lineage places a reader by telling lanes apart: a contract with one lane asks nothing.
    _lineage([cid for cid in ids if len(shapes.get(cid, {})) > 1], usage, columns, shapes, now, bound)
    for found in usage.values():
        for u in found:
            u.readers.sort(key=lambda r: (r.team or "~", r.who))
            u.undecided.sort(key=lambda r: (r.team or "~", r.who))
    return usage


def _thin_client(ids: list[int], by_lane: dict, since: datetime) -> None:
    latest: dict[tuple[int, str], LaneRead] = {}
    for read in (LaneRead.objects.filter(contract_id__in=ids, last_seen_at__gte=since)
                 .select_related("team").order_by("last_seen_at")):
        latest[(read.contract_id, read.reader)] = read  # the most recent fetch decides the lane
    for read in latest.values():
        lane = by_lane.get((read.contract_id, read.major))
        if lane is not None:
            lane.readers.append(Sighting(read.reader_label, read.team_id, read.team.name if read.team_id else None,
                                         read.last_seen_at, THIN_CLIENT,
                                         f"asked for {read.selector}, got {read.version} ({read.fetches} fetches)",
                                         read.reader))


def _lineage(ids: list[int], usage: dict[int, list[LaneUsage]], columns: dict, shapes: dict[int, dict[int, LaneColumns]],
             now: datetime, bound: dict[int, int] | None = None) -> None:
    if not ids:
        return
    if bound is None:
        bound = dict(DatasetBinding.objects.filter(contract_id__in=ids).values_list("dataset_id", "contract_id"))
    else:
        wanted = set(ids)
        bound = {dataset_id: cid for dataset_id, cid in bound.items() if cid in wanted}
    if not bound:
        return
    schemas = reader_schemas_of(bound, now=now)
    readings = readings_of(bound, now=now)
    names = dict(Team.objects.filter(pk__in={r.team_id for r in [*schemas, *readings] if r.team_id})
                 .values_list("pk", "name"))
    placed = _by_input_schema(schemas, bound, usage, shapes, names)
    by_columns: set[tuple[int, str]] = set()
    for reading in readings:
        cid = bound[reading.dataset_id]
        if (cid, reading.job) in placed:
            continue  # its input schema said which lane
        lanes = usage.get(cid) or []
        newest = next((u for u in lanes if u.newest), None)
        if reading.reads_everything or not reading.columns or newest is None:
            continue  # nothing to match: all or unknown columns
        read = set(reading.columns)
        if read <= columns.get((cid, newest.major), set()):
            continue  # it can read the newest lane
        for lane in sorted(lanes, key=lambda u: -u.major):
            if lane.major < newest.major and read <= columns.get((cid, lane.major), set()):
                last = max((e.last_seen_at for e in reading.evidence), default=None)
                missing = sorted(read - columns.get((cid, newest.major), set()))
                lane.readers.append(Sighting(reading.job, reading.team_id, names.get(reading.team_id), last, LINEAGE,
                                             f"reads {', '.join(missing)}, gone from {newest.label}", reading.job))
                by_columns.add((cid, reading.job))
                break
    if by_columns:  # an undecided schema, but the columns the job reads decide
        for cid in {cid for cid, _ in by_columns}:
            for lane in usage[cid]:
                lane.undecided = [r for r in lane.undecided if (cid, r.key) not in by_columns]


def _by_input_schema(schemas: list[ReaderSchema], bound: dict[int, int], usage: dict[int, list[LaneUsage]],
                     shapes: dict[int, dict[int, LaneColumns]], names: dict[int, str]) -> set[tuple[int, str]]:
    """Place each job whose input schema decides a lane on it; a tie goes to each tied lane's
    `undecided`. Returns the (contract, job) pairs decided. Many jobs share a schema: each
    distinct one (fingerprint, completeness, dialect) is matched once."""
    matched: dict[tuple, SchemaMatch] = {}
    decided: dict[tuple[int, int, str], Sighting] = {}
    tied: dict[tuple[int, int, str], Sighting] = {}
    for schema in schemas:
        cid = bound[schema.dataset_id]
        lanes = shapes.get(cid) or {}
        if len(lanes) < 2:
            continue  # one lane: nothing to tell apart
        dialect = dialect_of_namespace(schema.dataset_namespace)
        key = (cid, schema.fingerprint, schema.complete, dialect)
        if key not in matched:
            matched[key] = match_schema(schema.fields, schema.complete, lanes, dialect)
        found = matched[key]
        sighting = Sighting(schema.job, schema.team_id, names.get(schema.team_id), schema.last_seen_at, LINEAGE,
                            found.detail, schema.job)
        into = decided if len(found.majors) == 1 else tied
        for major in found.majors:
            kept = into.get((cid, major, schema.job))
            if kept is None or (sighting.last_seen and kept.last_seen and sighting.last_seen > kept.last_seen):
                into[(cid, major, schema.job)] = sighting  # a job reading two bound datasets: its latest
    by_lane = {(u.contract_id, u.major): u for found in usage.values() for u in found}
    for (cid, major, _), sighting in decided.items():
        by_lane[(cid, major)].readers.append(sighting)
    done = {(cid, job) for cid, _, job in decided}
    for (cid, major, job), sighting in tied.items():
        if (cid, job) not in done:
            by_lane[(cid, major)].undecided.append(sighting)
    return done


@dataclass(frozen=True)
class LaneColumns:
    """A lane's newest release as a reader's schema is matched against it: its top-level
    field names (case-folded, as warehouses spell them either way), those it requires
    (an optional one may be absent from a table on the lane) and, for a dataframe, each
    column's canonical dtype."""

    label: str
    names: frozenset[str]
    required: frozenset[str]
    types: dict[str, str]


def lane_columns(document: dict, label: str = "") -> LaneColumns:
    names: set[str] = set()
    required: set[str] = set()
    types: dict[str, str] = {}
    for column in document.get("columns") or []:
        if isinstance(column, dict) and isinstance(column.get("name"), str):
            name = column["name"].casefold()
            names.add(name)
            if column.get("required", True) is not False:
                required.add(name)
            try:
                types[name] = canonicalize_dtype(column.get("dtype"))
            except UnknownDtypeError:
                pass  # no type to compare: the name still counts
    payload = document.get("payload") or {}
    if isinstance(payload.get("properties"), dict):
        names.update(str(name).casefold() for name in payload["properties"])
        required.update(str(name).casefold() for name in payload.get("required") or [] if name in payload["properties"])
    return LaneColumns(label, frozenset(names), frozenset(required), types)


@dataclass
class SchemaMatch:
    majors: list[int]  # the best-fitting lanes: one decides; several tie (none counts)
    detail: str


def _fits(seen: str, declared: str) -> bool:
    """A reader's column of dtype `seen` fits a lane declaring `declared`: the same, or a
    narrower integer or float (what an `integer` column holds fits an int64 lane)."""
    if seen == declared:
        return True
    widths = {"int32": ("int", 32), "int64": ("int", 64), "float32": ("float", 32), "float64": ("float", 64)}
    a, b = widths.get(seen), widths.get(declared)
    return bool(a and b and a[0] == b[0] and a[1] <= b[1])


def match_schema(fields: dict[str, str], complete: bool, lanes: dict[int, LaneColumns],
                 dialect: str | None) -> SchemaMatch:
    """Which lane a reader's input schema fits best.

    Only what tells the lanes apart counts: a column some lanes have and others lack
    (a reader having it rules out the lanes without it; a complete schema lacking it
    rules out the lanes requiring it; a partial one, with untyped fields, says nothing
    by lacking), and a column all lanes have with different dtypes, when the reader's
    type maps to one (`dialect`: the dataset's warehouse). The lanes with the fewest
    misfits win; more than one is a tie, and nothing telling is a tie of all."""
    seen = {str(name).casefold(): kind for name, kind in fields.items()}
    everywhere = frozenset.intersection(*(lane.names for lane in lanes.values()))
    telling = frozenset.union(*(lane.names for lane in lanes.values())) - everywhere
    misfits: dict[int, list[str]] = {major: [] for major in lanes}
    told = 0
    for name in sorted(telling):
        has = name in seen
        if not has and (not complete or not any(name in lane.required for lane in lanes.values())):
            continue
        told += 1
        for major, lane in lanes.items():
            if has and name not in lane.names:
                misfits[major].append(f"has {name}, not in {lane.label}")
            elif not has and name in lane.required:
                misfits[major].append(f"lacks {name} of {lane.label}")
    for name in sorted(everywhere & seen.keys()):
        declared = {major: lane.types.get(name) for major, lane in lanes.items()}
        if None in declared.values() or len(set(declared.values())) < 2 or dialect is None:
            continue
        try:
            dtype = canonical_dtype(seen[name], dialect)
        except UnmappableType:
            continue
        told += 1
        for major, kind in declared.items():
            if not _fits(dtype, kind):
                misfits[major].append(f"{name} is {seen[name]}, {lanes[major].label} has {kind}")
    labels = " and ".join(lanes[m].label for m in sorted(lanes))
    if not told:
        return SchemaMatch(sorted(lanes), f"its input schema has nothing that tells {labels} apart")
    fewest = min(len(found) for found in misfits.values())
    best = sorted(major for major, found in misfits.items() if len(found) == fewest)
    if len(best) > 1:
        return SchemaMatch(best, f"its input schema fits {' and '.join(lanes[m].label for m in best)} alike")
    others = [why for major, found in sorted(misfits.items()) if major != best[0] for why in found]
    shown = ", ".join(dict.fromkeys(others))
    return SchemaMatch(best, f"input schema: {shown}" if shown else "input schema")
