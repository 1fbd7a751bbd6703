"""Who reads what: the columns each job reads of each dataset, and whose job it is.

The core keeps this because it is consumer knowledge, like registrations: lineage
fills it from what pipelines report (`ColumnRead` rows, written by the ingest),
teams declare theirs when they register (`Consumer.declared_columns`), and the
change-request side asks it which teams a change touches.

A read of column "" means *all or unknown*: the job read the dataset and nothing
says which columns (`SELECT *` resolved to nothing, no facet, no parsable SQL).
A fact counts while it is younger than COLUMN_USAGE_WINDOW (30 days by default),
so a column a job stopped reading stops counting.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import F, OuterRef, Subquery, Value
from django.db.models.functions import Concat
from django.utils import timezone

from registry.hooks import absorbing_readers, passing_readers, steps_from  # noqa: F401 - the readers are re-exported
from registry.identifiers import validate_identifier
from registry.jobs import DecidedBy, JobTeam

ALL_COLUMNS = ""


class UsageKind(models.TextChoices):
    DIRECT = "DIRECT", "Direct (feeds an output column)"
    INDIRECT = "INDIRECT", "Indirect (joins, filters, grouping, sorting)"


class UsageSource(models.TextChoices):
    """Where a fact comes from, most trusted first."""

    LINEAGE_FACET = "lineage_facet", "Explicit lineage facet"
    COLUMN_LINEAGE = "column_lineage", "columnLineage facet"
    SQL = "sql", "Parsed SQL (sql job facet)"
    QUALITY_CHECK = "quality_check", "Data-quality check (assertions, metrics)"
    INPUT = "input", "Listed as an input, no column evidence"


class ColumnReadQuerySet(models.QuerySet):
    def current(self, now: datetime | None = None) -> ColumnReadQuerySet:
        """Facts seen within COLUMN_USAGE_WINDOW."""
        return self.filter(last_seen_at__gte=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)

    def expired(self, now: datetime | None = None) -> ColumnReadQuerySet:
        """Facts last seen before COLUMN_USAGE_WINDOW: they no longer count, and are pruned."""
        return self.filter(last_seen_at__lt=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)

    def of_datasets(self, dataset_ids: Iterable[int]) -> ColumnReadQuerySet:
        return self.filter(dataset_id__in=list(dataset_ids))

    def with_job_team(self) -> ColumnReadQuerySet:
        """Annotate `job_team_id` and `job_decided` ("rule|detail"): the team the job's
        ownership facet, the rules file or dbt artefacts decided (registry.jobs.JobTeam),
        in the same query."""
        job = JobTeam.objects.filter(job_namespace=OuterRef("job_namespace"), job_name=OuterRef("job_name"))
        return self.annotate(
            job_team_id=Subquery(job.values("team_id")[:1]),
            job_decided=Subquery(job.annotate(d=Concat("rule", Value("|"), "rule_detail")).values("d")[:1]))


class ColumnRead(models.Model):
    """A job read one column of a dataset (or all/unknown: column ""), with the latest evidence."""

    # The lineage ingest writes these rows with every event: no index of Django's own
    # on the foreign keys (Meta has the three there are). No database constraints: each
    # would check every row at commit and share-lock the dataset and team rows that
    # every concurrent event touches; these are derived facts, Django still cascades
    # deletes to them, and they age out.
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="column_reads",
                                db_index=False, db_constraint=False)
    job_namespace = models.CharField(max_length=500)
    job_name = models.CharField(max_length=500)
    column = models.CharField(max_length=500, blank=True, help_text='"" means all or unknown columns.')
    kind = models.CharField(max_length=10, choices=UsageKind.choices, default=UsageKind.INDIRECT)
    source = models.CharField(max_length=20, choices=UsageSource.choices)
    token_team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                   db_index=False, db_constraint=False,
                                   help_text="The team of the token that posted the latest evidence.")
    run_uuid = models.UUIDField(null=True, blank=True, help_text="The run of the latest evidence.")
    event_time = models.DateTimeField(null=True, blank=True, help_text="When the latest evidence happened.")
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    objects = ColumnReadQuerySet.as_manager()

    class Meta:
        # The unique index leads with the dataset, which most reads of these rows filter
        # on (the age is then checked row by row). A team's readings page starts from
        # the team's jobs and tokens instead: the job index and the (partial) token team
        # index, so that it never attributes every read of the registry. None of the
        # three holds last_seen_at, nor anything a refresh of the same evidence changes:
        # refreshing a row is still a HOT update, and only a new fact writes the indexes.
        constraints = [models.UniqueConstraint(fields=["dataset", "job_namespace", "job_name", "column", "kind"],
                                               name="column_read_unique",
                                               violation_error_message="This job's reading of this column of this dataset is already recorded.")]
        indexes = [models.Index(fields=["job_namespace", "job_name"], name="column_read_job_idx"),
                   models.Index(fields=["token_team"], name="column_read_token_team_idx",
                                condition=models.Q(token_team__isnull=False))]

    def __str__(self) -> str:
        return f"{self.job_namespace}/{self.job_name} reads {self.column or '*'} of dataset #{self.dataset_id}"


class InputSchemaQuerySet(models.QuerySet):
    def current(self, now: datetime | None = None) -> InputSchemaQuerySet:
        """Schemas seen within COLUMN_USAGE_WINDOW, like column reads."""
        return self.filter(last_seen_at__gte=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)

    def expired(self, now: datetime | None = None) -> InputSchemaQuerySet:
        """Schemas last seen before COLUMN_USAGE_WINDOW: they no longer count, and are pruned."""
        return self.filter(last_seen_at__lt=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)

    def of_datasets(self, dataset_ids: Iterable[int]) -> InputSchemaQuerySet:
        return self.filter(dataset_id__in=list(dataset_ids))

    def with_job_team(self) -> InputSchemaQuerySet:
        """Annotate `job_team_id`, `job_decided` and `namespace_team_id`, as `owner_annotations`
        does for jobs: whose job it is, in the same query."""
        return self.annotate(**owner_annotations("job_namespace", "job_name"))


def schema_fingerprint(fields: dict[str, str]) -> tuple[str, str]:
    """(the fields as canonical JSON text, its SHA-256): what an InputSchema row stores and compares."""
    text = json.dumps(fields, sort_keys=True)
    return text, hashlib.sha256(text.encode()).hexdigest()


class InputSchema(models.Model):
    """The schema a reader job's run events gave one of its inputs (the input dataset's
    `schema` facet): the shape of the dataset as that job sees it, which tells which of
    a contract's lanes it reads (lanes.evidence). One row per (dataset, job), rewritten
    only when the schema's fingerprint changes or its last sighting is older than
    USAGE_REFRESH: a pipeline sending the same schema run after run costs nothing."""

    # As ColumnRead: written by the ingest, no index of its own on the keys and no
    # database constraints; the unique index leads with the dataset, which every read filters on.
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="input_schemas",
                                db_index=False, db_constraint=False)
    job_namespace = models.CharField(max_length=500)
    job_name = models.CharField(max_length=500)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the fields as canonical JSON.")
    fields = models.JSONField(help_text="{column: type} of the facet's top-level fields ('' when it gives no type).")
    complete = models.BooleanField(default=True, help_text="Every field has a type: taken as the whole table, so a "
                                                           "column it lacks is one the job does not see.")
    token_team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                   db_index=False, db_constraint=False,
                                   help_text="The team of the token that posted the latest evidence.")
    run_uuid = models.UUIDField(null=True, blank=True, help_text="The run of the latest evidence.")
    event_time = models.DateTimeField(null=True, blank=True)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    objects = InputSchemaQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "job_namespace", "job_name"], name="input_schema_unique",
                                               violation_error_message="This job's schema of this input is already recorded.")]

    def __str__(self) -> str:
        return f"{self.job_namespace}/{self.job_name} sees {len(self.fields)} columns of dataset #{self.dataset_id}"


@dataclass
class ReaderSchema:
    """The schema one job sees of one dataset, and whose job it is."""

    dataset_id: int
    job_namespace: str
    job_name: str
    team_id: int | None
    fingerprint: str
    fields: dict[str, str]
    complete: bool
    last_seen_at: datetime
    dataset_namespace: str = ""  # which warehouse spells the types (registry_client.warehouse_types)
    rule: str = DecidedBy.NOBODY
    rule_detail: str = ""

    @property
    def job(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"


def reader_schemas_of(dataset_ids: Iterable[int], *, now: datetime | None = None) -> list[ReaderSchema]:
    """Every job's current input schema of the datasets, attributed to teams as `readings_of`
    attributes readings (one query)."""
    found = []
    for row in (InputSchema.objects.current(now).of_datasets(dataset_ids).with_job_team()
                .annotate(dataset_namespace=F("dataset__namespace"))
                .order_by("dataset_id", "job_namespace", "job_name")):
        mapping = {row.job_namespace: row.namespace_team_id} if row.namespace_team_id is not None else {}
        team_id, rule, detail = attribute(row.job_namespace, row.token_team_id, mapping, row.job_team_id,
                                          row.job_decided)
        found.append(ReaderSchema(row.dataset_id, row.job_namespace, row.job_name, team_id, row.fingerprint,
                                  row.fields, row.complete, row.last_seen_at, row.dataset_namespace, rule, detail))
    return found


class NamespaceTeam(models.Model):
    """Jobs of this OpenLineage job namespace belong to this team (kept by admins and teams)."""

    namespace = models.CharField(max_length=500, unique=True, validators=[validate_identifier])
    team = models.ForeignKey("registry.Team", on_delete=models.CASCADE, related_name="job_namespaces")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["namespace"]

    def __str__(self) -> str:
        return f"{self.namespace} -> {self.team}"


@dataclass
class Evidence:
    source: str
    run_uuid: str | None
    event_time: datetime | None
    last_seen_at: datetime


@dataclass
class JobReading:
    """What one job reads of one dataset, and whose job it is."""

    dataset_id: int
    job_namespace: str
    job_name: str
    team_id: int | None
    rule: str = DecidedBy.NOBODY  # which rule decided team_id (registry.jobs.DecidedBy)
    rule_detail: str = ""
    # Column -> DIRECT or INDIRECT (DIRECT wins when both were seen); None: all or unknown.
    columns: dict[str, str] | None = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def job(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"

    @property
    def reads_everything(self) -> bool:
        return self.columns is None


def attribute(job_namespace: str, token_team_id: int | None, mapping: dict[str, int],
              job_team_id: int | None = None, job_decided: str | None = None) -> tuple[int | None, str, str]:
    """A job's team, the rule that decided it and which owner, line or node did
    (registry.jobs): what its ownership facet, the rules file or dbt artefacts
    decided (`job_team_id`, `job_decided` as "rule|detail"), else its namespace's
    team, else the team of the token that posted its events."""
    if job_team_id is not None:
        rule, _, detail = (job_decided or "").partition("|")
        return job_team_id, rule, detail
    if job_namespace in mapping:
        return mapping[job_namespace], DecidedBy.NAMESPACE, f"job namespace {job_namespace}"
    if token_team_id is not None:
        return token_team_id, DecidedBy.TOKEN, "the team of the token that posted its events"
    return None, DecidedBy.NOBODY, ""


def readings_of(dataset_ids: Iterable[int], *, now: datetime | None = None) -> list[JobReading]:
    """Every job's current reading of the datasets, attributed to teams (two queries)."""
    rows = list(ColumnRead.objects.current(now).of_datasets(dataset_ids).with_job_team()
                .order_by("dataset_id", "job_namespace", "job_name", "column"))
    mapping = dict(NamespaceTeam.objects.filter(namespace__in={r.job_namespace for r in rows})
                   .values_list("namespace", "team_id"))
    readings: dict[tuple[int, str, str], JobReading] = {}
    for row in rows:
        key = (row.dataset_id, row.job_namespace, row.job_name)
        reading = readings.get(key)
        if reading is None:
            reading = readings[key] = JobReading(row.dataset_id, row.job_namespace, row.job_name, *attribute(
                row.job_namespace, row.token_team_id, mapping, row.job_team_id, row.job_decided))
        elif reading.team_id is None and row.token_team_id is not None:
            reading.team_id, reading.rule, reading.rule_detail = attribute(
                row.job_namespace, row.token_team_id, mapping, row.job_team_id, row.job_decided)
        reading.evidence.append(Evidence(row.source, str(row.run_uuid) if row.run_uuid else None,
                                         row.event_time, row.last_seen_at))
        if row.column == ALL_COLUMNS:
            reading.columns = None
        elif reading.columns is not None:
            if reading.columns.get(row.column) != UsageKind.DIRECT:
                reading.columns[row.column] = row.kind
    return list(readings.values())


@dataclass
class Reader:
    """One job reading a dataset, as the dataset page and API show it."""

    job: str
    team_id: int | None
    team: str | None  # slug
    team_name: str | None
    registered: bool  # its team is a registered consumer
    owner_team: bool  # its team owns the dataset: it reads its own data, no registration needed
    columns: list[str] | None  # None: all or unknown
    kinds: dict[str, str]
    undeclared: list[str]  # read, though its team declared other columns
    last_seen_at: datetime | None
    rule: str = DecidedBy.NOBODY  # which rule decided its team (registry.jobs.DecidedBy)
    rule_detail: str = ""

    @property
    def decided_by(self) -> str:
        """The rule that decided the job's team, in words."""
        return DecidedBy(self.rule).label

    @property
    def unregistered(self) -> bool:
        """A breaking change would not ask this job's team: neither a consumer nor the owner
        (as Dataset.objects.with_unregistered_readers and the change-request impact count)."""
        return not self.registered and not self.owner_team

    def to_dict(self) -> dict:
        return {"job": self.job, "team": self.team, "registered": self.registered, "owner_team": self.owner_team,
                "columns": self.columns,
                "kinds": self.kinds, "undeclared": self.undeclared,
                "last_seen_at": self.last_seen_at.isoformat() if self.last_seen_at else None,
                "decided_by": self.rule, "decided_by_detail": self.rule_detail}


def readers_of(dataset, consumers: Iterable, *, now: datetime | None = None) -> list[Reader]:
    """The jobs reading `dataset` now, each with its team, whether that team is a registered
    consumer or the owner team, and what it reads beyond what its team declared (three
    queries). The unregistered readers come first."""
    Team = NamespaceTeam._meta.get_field("team").related_model  # registry.models imports this module
    declared = {c.team_id: c.declared_columns for c in consumers}
    readings = readings_of([dataset.pk], now=now)
    teams = {t.pk: t for t in Team.objects.filter(pk__in={r.team_id for r in readings if r.team_id})}
    rows = []
    for r in readings:
        team = teams.get(r.team_id)
        said = declared.get(r.team_id)
        columns = None if r.columns is None else sorted(r.columns)
        undeclared = [c for c in columns or [] if said is not None and c.casefold() not in {d.casefold() for d in said}]
        rows.append(Reader(r.job, r.team_id, team.slug if team else None, team.name if team else None,
                           r.team_id in declared, r.team_id is not None and r.team_id == dataset.owner_team_id,
                           columns, dict(r.columns or {}), undeclared,
                           max((e.last_seen_at for e in r.evidence), default=None), r.rule, r.rule_detail))
    rows.sort(key=lambda row: (not row.unregistered, row.team or "", row.job))
    return rows


@dataclass
class ColumnReader:
    """One job reading one column (or all/unknown columns) of a dataset, for a page."""

    job_namespace: str
    job_name: str
    team: object | None  # registry.Team, or None when nothing attributes the job
    kinds: list[str]  # DIRECT and/or INDIRECT
    last_seen_at: datetime
    source: str  # of the latest evidence
    rule: str = DecidedBy.NOBODY  # which rule decided its team (registry.jobs.DecidedBy)
    rule_detail: str = ""

    @property
    def job(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"

    @property
    def decided_by(self) -> str:
        return DecidedBy(self.rule).label


@dataclass
class ColumnReaders:
    columns: list[tuple[str, list[ColumnReader]]]  # (column, its readers), by column name
    everything: list[ColumnReader]  # jobs reading all or unknown columns

    def __bool__(self) -> bool:
        return bool(self.columns or self.everything)


def column_readers(dataset_id: int, *, now: datetime | None = None) -> ColumnReaders:
    """Each column's current readers, and the jobs reading all/unknown columns,
    attributed to teams as readings_of does (two queries)."""
    Team = NamespaceTeam._meta.get_field("team").related_model  # registry.models imports this module
    rows = list(ColumnRead.objects.current(now).filter(dataset_id=dataset_id).with_job_team()
                .annotate(namespace_team_id=Subquery(NamespaceTeam.objects.filter(namespace=OuterRef("job_namespace"))
                                                     .values("team_id")[:1]))
                .order_by("column", "job_namespace", "job_name", "kind"))
    mapping = {r.job_namespace: r.namespace_team_id for r in rows if r.namespace_team_id is not None}
    teams = Team.objects.in_bulk({r.token_team_id for r in rows} | {r.job_team_id for r in rows} | set(mapping.values())
                                 - {None})
    by_column: dict[str, dict[tuple[str, str], ColumnReader]] = {}
    for row in rows:
        readers = by_column.setdefault(row.column, {})
        reader = readers.get((row.job_namespace, row.job_name))
        if reader is None:
            team_id, rule, detail = attribute(row.job_namespace, row.token_team_id, mapping,
                                              row.job_team_id, row.job_decided)
            readers[(row.job_namespace, row.job_name)] = ColumnReader(
                row.job_namespace, row.job_name, teams.get(team_id), [row.kind], row.last_seen_at, row.source,
                rule, detail)
            continue
        if row.kind not in reader.kinds:
            reader.kinds.append(row.kind)
        if reader.team is None and row.token_team_id is not None:
            team_id, reader.rule, reader.rule_detail = attribute(row.job_namespace, row.token_team_id, mapping,
                                                                 row.job_team_id, row.job_decided)
            reader.team = teams.get(team_id)
        if row.last_seen_at > reader.last_seen_at:
            reader.last_seen_at, reader.source = row.last_seen_at, row.source
    everything = list(by_column.pop(ALL_COLUMNS, {}).values())
    return ColumnReaders([(column, list(readers.values())) for column, readers in sorted(by_column.items())],
                         everything)


DOWNSTREAM_DEPTH = 5


class Effect:
    """What a breaking change does to a column, which decides how far it travels.

    A job that names a removed column fails: its team reads the column and is asked,
    and what the job writes is left as it was, so the removal goes no further, except
    through a `SELECT *` that passes the column on without naming it.

    A change of values travels wherever the values flow: along DIRECT field edges
    (most expressions pass their input's type and NULLs on: max, case, arithmetic)
    and through the INDIRECT uses that change a job's results (a join key decides
    which rows match, a group key the groups, a filter the rows kept, a window's
    partition its frames, a CASE condition the branch). It stops where the SQL
    provably absorbs it (lineage.sql_usage): a new type under `cast(… as text)`,
    NULLs under `coalesce(…, <a literal>)`, a new type or new values under `count(…)`.
    What the change is: RETYPED (a new type), NULLS (NULLs allowed), NARROWED (an enum
    narrowed: every new value was a possible value before), VALUES (a range narrowed
    or widened, an enum widened, precision, length or format changed: new values), or
    CHANGED when the checker's report does not say (absorbed by nothing).

    What reaches a job's results through an INDIRECT use is new values (rows dropped,
    matched or grouped otherwise change what is computed from them), and NULLs only
    where the use can make them: a join (an outer join's rows that no longer match), a
    CASE condition (no branch taken), a window (no frame). A deterministic expression
    of narrowed values gives values it could give before: NARROWED goes on along DIRECT
    edges, except through an aggregate (a sum of other rows is a new value).

    DROPPED is what NULLs do through a filter or join that rejects them (lineage.sql_usage:
    a NULL makes the WHERE or the ON unknown) when nothing after it aggregates, limits or
    anti-joins the rows: the output loses rows and every row left is as it was. It is
    never a source's effect, and goes one step only: whatever reads such a column gets
    new values (an aggregate of fewer rows, a join that matches fewer)."""

    REMOVED = "removed"
    CHANGED = "changed"
    RETYPED = "retyped"
    NULLS = "nulls"
    VALUES = "values"
    NARROWED = "narrowed"
    DROPPED = "dropped"
    ALL = frozenset({REMOVED, CHANGED})
    VALUE_CHANGES = frozenset({CHANGED, RETYPED, NULLS, VALUES, NARROWED, DROPPED})

    @staticmethod
    def of_change(kind: str) -> str:
        """The effect of one change of the checker's report (its `kind`) on its column."""
        if kind.startswith("nullability"):
            return Effect.NULLS
        # A format is a type to SQL (a `date-time` string is a timestamp), and bounds are what
        # a dataframe's numeric dtype looks like to the checker: a datetime column now str
        # reaches the report as its format removed, an int64 one now int32 as both bounds
        # tightened. Both are judged as retypes (per expression, by the type check).
        if kind.startswith(("type", "format", "minimum", "maximum", "exclusive")):
            return Effect.RETYPED
        if kind in ("enum_added", "enum_value_removed", "const_added"):  # fewer values allowed, no new one
            return Effect.NARROWED
        if kind.startswith(("enum", "const", "min_length", "max_length",
                            "multiple_of", "pattern")):
            return Effect.VALUES
        return Effect.CHANGED


# The INDIRECT uses through which a value change reaches a job's results (OpenLineage's
# INDIRECT subtypes; SORT only orders the rows, and a removal fails the job instead).
RESULT_CHANGING = frozenset({"JOIN", "GROUP_BY", "FILTER", "WINDOW", "CONDITIONAL"})
# The INDIRECT uses whose results may hold NULLs where the key or condition does not
# match: an outer join's other side, a CASE with no branch taken, a window with no frame.
MAKES_NULLS = frozenset({"JOIN", "CONDITIONAL", "WINDOW"})
# What a DIRECT edge's description says when its result's type does not follow its
# input's (a comparison: lineage.sql_usage.TYPE): a new type reaches it as new values.
KEEPS_ITS_TYPE = "type"


def carries(effect: str, subtype: str, through_star: bool | None, *, kind: str = UsageKind.DIRECT,
            absorbs: frozenset[str] | set[str] = frozenset(), drops: bool = False) -> str | None:
    """The effect a field edge passes on for `effect` (None: it stops there).

    DIRECT: a removal only through `SELECT *` (or, when no source says how the edge was
    made, an identity); a value change unless the edge's SQL absorbs it (`absorbs`); a new
    type as new values through an expression whose type is its own (`KEEPS_ITS_TYPE`).
    INDIRECT: a value change through a use that changes results (`RESULT_CHANGING`);
    what reaches the results is their values (a retyped join key matches other rows),
    NULLs only through a use that makes them (`MAKES_NULLS`; `carried` adds the NULLs
    an outer join's lost matches make) — not through a join whose edge absorbs NULLs
    (lineage.sql_usage: an inner join, or the preserved side of an outer one, drops or
    keeps the unmatched rows and pads nothing into this column). A narrowed column's
    values stay narrowed through a DIRECT expression, not through an aggregate."""
    if kind != UsageKind.DIRECT:
        if effect == Effect.REMOVED or subtype.upper() not in RESULT_CHANGING:
            return None
        if effect == Effect.NULLS and drops and subtype.upper() in ("FILTER", "JOIN") \
                and (subtype.upper() != "JOIN" or Effect.NULLS in absorbs):
            return Effect.DROPPED
        if effect == Effect.NULLS and subtype.upper() in MAKES_NULLS and Effect.NULLS not in absorbs \
                or effect == Effect.CHANGED:
            return effect
        return Effect.VALUES
    if effect == Effect.REMOVED:
        carried = through_star is True or (through_star is None and subtype.upper() in ("", "IDENTITY"))
        return effect if carried else None
    if effect == Effect.DROPPED:
        return Effect.VALUES  # the next job's results from fewer rows: an aggregate, a count, a join
    if effect == Effect.RETYPED and KEEPS_ITS_TYPE in absorbs:
        return Effect.VALUES  # `status = 'paid'` is a boolean whatever status is; its truth may differ
    if effect in absorbs or effect == Effect.NARROWED and Effect.VALUES in absorbs:
        return None
    if effect == Effect.NARROWED and subtype.upper() == "AGGREGATION":
        return Effect.VALUES
    return effect


def carried(effects: Iterable[str], subtype: str, through_star: bool | None, *, kind: str = UsageKind.DIRECT,
            absorbs: frozenset[str] | set[str] = frozenset(), drops: bool = False) -> frozenset[str]:
    """Every effect a field edge passes on for `effects` (`carries`), and the NULLs a join
    makes of a key whose values change (an outer join's rows that no longer match),
    unless the edge absorbs them (the join pads nothing into its column)."""
    found = {carries(e, subtype, through_star, kind=kind, absorbs=absorbs, drops=drops) for e in effects} - {None}
    if kind != UsageKind.DIRECT and subtype.upper() == "JOIN" and Effect.NULLS not in absorbs \
            and found & {Effect.VALUES, Effect.NULLS}:
        found.add(Effect.NULLS)
    return frozenset(found)


@dataclass(frozen=True)
class FlowStep:
    """One hop of a change: `input` column of one dataset reached `column` of another
    through `job`, as a DIRECT or INDIRECT (JOIN, GROUP_BY, …) use, shown by `fragment`."""

    input_dataset_id: int
    input_column: str
    dataset_id: int
    column: str
    job: str
    kind: str
    subtype: str
    fragment: str
    effects: frozenset[str]

    def to_dict(self) -> dict:
        return {"from": [self.input_dataset_id, self.input_column], "to": [self.dataset_id, self.column],
                "job": self.job, "kind": self.kind, "subtype": self.subtype, "fragment": self.fragment,
                "effects": sorted(self.effects)}


Touched = dict[int, dict[str, set[str]] | None]  # dataset id -> {column: effects}, None: every column


@dataclass
class Flow:
    """Where a change reached: the columns and their effects, and for each the step that got there first."""

    reached: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    steps: dict[tuple[int, str], FlowStep] = field(default_factory=dict)

    def path_to(self, dataset_id: int, column: str) -> list[FlowStep]:
        """The steps from a changed column to this one, first step first."""
        path, seen = [], set()
        key = (dataset_id, column)
        while key in self.steps and key not in seen:
            seen.add(key)
            step = self.steps[key]
            path.append(step)
            key = (step.input_dataset_id, step.input_column)
        return path[::-1]


def value_flow(sources: Touched, *, depth: int = DOWNSTREAM_DEPTH, now: datetime | None = None) -> Flow:
    """The columns that `sources` reach, directly or through other jobs' outputs, up to
    `depth` hops, by the field edges lineage saw (registry.hooks.column_steps), each
    with the effects that reach it (`carries`) and the step that brought them. The
    sources themselves are left out."""
    flow = Flow()
    frontier: Touched = dict(sources)
    for _ in range(depth):
        steps = steps_from(frontier, now)
        frontier = {}
        for step in steps:
            if step.dataset_id in sources and sources[step.dataset_id] is None:
                continue
            own = (sources.get(step.dataset_id) or {}).get(step.column, set())
            known = flow.reached.setdefault(step.dataset_id, {}).setdefault(step.column, set())
            new = set(step.effects) - known - own
            if new:
                known.update(new)
                frontier.setdefault(step.dataset_id, {}).setdefault(step.column, set()).update(new)
                flow.steps.setdefault((step.dataset_id, step.column), step)
        if not frontier:
            break
    flow.reached = {dataset_id: {c: e for c, e in columns.items() if e}
                    for dataset_id, columns in flow.reached.items() if any(columns.values())}
    return flow


def downstream_columns(sources: Touched, *, depth: int = DOWNSTREAM_DEPTH,
                       now: datetime | None = None) -> dict[int, dict[str, set[str]]]:
    """The columns that `sources` feed, with the effects that reach them (`value_flow`)."""
    return value_flow(sources, depth=depth, now=now).reached


def owner_annotations(namespace: str = "namespace", name: str = "name") -> dict:
    """Annotations for a queryset of jobs (fields `namespace`, `name`): `job_team_id`
    and `job_decided` (registry.jobs.JobTeam) and `namespace_team_id`, for
    `owners_of` to finish without a query per job."""
    job = JobTeam.objects.filter(job_namespace=OuterRef(namespace), job_name=OuterRef(name))
    return {"job_team_id": Subquery(job.values("team_id")[:1]),
            "job_decided": Subquery(job.annotate(d=Concat("rule", Value("|"), "rule_detail")).values("d")[:1]),
            "namespace_team_id": Subquery(NamespaceTeam.objects.filter(namespace=OuterRef(namespace)).values("team_id")[:1])}


@dataclass
class JobOwner:
    team: object | None  # registry.Team
    rule: str  # registry.jobs.DecidedBy
    detail: str

    @property
    def decided_by(self) -> str:
        return DecidedBy(self.rule).label

    def to_dict(self) -> dict:
        return {"team": getattr(self.team, "slug", None), "decided_by": self.rule, "decided_by_detail": self.detail}


def owners_of(jobs: Iterable, token_team_of=lambda job: None) -> list[JobOwner]:
    """Each job's owner, for jobs annotated with `owner_annotations` (one query for the teams);
    `token_team_of(job)`: the team id of the token that posted its latest event, if known."""
    jobs = list(jobs)
    decided = [attribute(j.namespace, token_team_of(j), {j.namespace: j.namespace_team_id}
                         if j.namespace_team_id is not None else {}, j.job_team_id, j.job_decided) for j in jobs]
    Team = NamespaceTeam._meta.get_field("team").related_model  # registry.models imports this module
    ids = {team_id for team_id, _, _ in decided if team_id is not None}
    teams = Team.objects.in_bulk(ids) if ids else {}
    return [JobOwner(teams.get(team_id), rule, detail) for team_id, rule, detail in decided]
