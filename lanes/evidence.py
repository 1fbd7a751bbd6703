"""Who is still on which lane, from the evidence the product has.

1. The thin client: each document fetch over the API says which version a selector
   resolved to (LaneRead, per token or person, with its team). A reader is on the
   lane of its most recent fetch: a consumer that moved to 3.x is no longer on 2.x.
2. Lineage: the columns each reader job reads of the contract's datasets (the core's
   `registry.usage`, which the ingest fills from the facets of the job's inputs),
   matched against each lane's columns: a job that reads a column the newest lane
   dropped, and every column it reads is in an older lane, is on that lane.

`lane_usage(contracts)` answers for many contracts in a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils import timezone
from packaging.version import Version
from registry_client.versions import lane_of, latest_in_lane

from contracts_app.models import Contract, ContractVersion, DatasetBinding, field_names, version_of
from lanes.models import Lane, LaneRead
from registry.models import Team
from registry.usage import readings_of

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
    by_lane = {(u.contract_id, u.major): u for found in usage.values() for u in found}
    since = now - settings.COLUMN_USAGE_WINDOW
    _thin_client(ids, by_lane, since)
    _lineage(ids, usage, columns, now, bound)
    for found in usage.values():
        for u in found:
            u.readers.sort(key=lambda r: (r.team or "~", r.who))
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


def _lineage(ids: list[int], usage: dict[int, list[LaneUsage]], columns: dict, now: datetime,
             bound: dict[int, int] | None = None) -> None:
    if bound is None:
        bound = dict(DatasetBinding.objects.filter(contract_id__in=ids).values_list("dataset_id", "contract_id"))
    if not bound:
        return
    readings = readings_of(bound, now=now)
    names = dict(Team.objects.filter(pk__in={r.team_id for r in readings if r.team_id}).values_list("pk", "name"))
    for reading in readings:
        cid = bound[reading.dataset_id]
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
                break
