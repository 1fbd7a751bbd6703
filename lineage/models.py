"""Lineage: jobs, their runs, the raw events, and the job→dataset edges.

Datasets are the core's `registry.Dataset`; a dataset first seen in an event is
created unowned. Edges are kept per job (the lineage graph) and per run (what
one run read and wrote), so pruning raw events never loses the graph.

Column lineage adds field edges (an output column and the input columns that
fed it, per job) and the latest known columns of each dataset, which resolve
`SELECT *` in the SQL of later events. Which columns a job reads is the core's
`registry.usage.ColumnRead`, written by the same ingest statement.

What producers say about a dataset beyond its lineage is kept too: its current
schema, the facets shown beside the registry's fields (DatasetFacet), its
aliases (symlinks), its data-quality checks; and what DatasetEvents and
JobEvents declare outside any run (StaticEvent, DeclaredEdge).
"""

from __future__ import annotations

from typing import NamedTuple

from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from lineage.querysets import FieldEdgeQuerySet, QualityCheckQuerySet, RunEventQuerySet, RunQuerySet
from registry.usage import UsageKind, UsageSource


class RunState(models.TextChoices):
    """A run's state, from the eventType of its events (OTHER never changes it)."""

    NEW = "NEW", "New"
    START = "START", "Started"
    RUNNING = "RUNNING", "Running"
    COMPLETE = "COMPLETE", "Complete"
    FAIL = "FAIL", "Failed"
    ABORT = "ABORT", "Aborted"


class Direction(models.TextChoices):
    INPUT = "in", "Input"
    OUTPUT = "out", "Output"


class JobEdge(NamedTuple):
    """A dataset a job reads or writes, as the graph shows it."""

    direction: str  # Direction
    dataset_id: int
    namespace: str
    name: str
    declared: bool  # only a JobEvent declared it (no run showed it)


class Job(models.Model):
    namespace = models.CharField(max_length=500)
    name = models.CharField(max_length=500)
    facets = models.JSONField(default=dict, blank=True, help_text="The job facets of the latest event.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)


    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="lineage_job_namespace_name_unique",
                                               violation_error_message="A job with this namespace and name is already recorded.")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("lineage-job-detail", args=[self.pk])

    @staticmethod
    def edges_of(job_ids: list[int]) -> dict[tuple[int, str], list[JobEdge]]:
        """{(job pk, direction): its datasets by namespace and name}: what runs
        showed (JobDataset) and what JobEvents declared (DeclaredEdge), as the
        graph walks both. One query."""
        seen = (JobDataset.objects.filter(job_id__in=job_ids)
                .values_list("job_id", "direction", "dataset_id", "dataset__namespace", "dataset__name")
                .annotate(declared=models.Value(False)))
        declared = (DeclaredEdge.objects.filter(job_id__in=job_ids)
                    .values_list("job_id", "direction", "dataset_id", "dataset__namespace", "dataset__name")
                    .annotate(declared=models.Value(True)))
        found: dict[tuple[int, int, str], JobEdge] = {}
        for job_id, direction, dataset_id, namespace, name, only_declared in seen.union(declared, all=True):
            key = (job_id, dataset_id, direction)
            if key not in found or not only_declared:
                found[key] = JobEdge(direction, dataset_id, namespace, name, only_declared)
        edges: dict[tuple[int, str], list[JobEdge]] = {}
        for (job_id, _, direction), edge in sorted(found.items(), key=lambda item: (item[1].namespace, item[1].name)):
            edges.setdefault((job_id, direction), []).append(edge)
        return edges

    def edges(self) -> dict[str, list[JobEdge]]:
        """{direction: the datasets this job reads or writes} (see `edges_of`)."""
        return {direction: found for (_, direction), found in Job.edges_of([self.pk]).items()}



class Run(models.Model):
    run_uuid = models.UUIDField(unique=True)
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="runs")
    state = models.CharField(max_length=16, choices=RunState.choices, default=RunState.NEW)
    state_at = models.DateTimeField(help_text="eventTime of the event that set the state.")
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    facets = models.JSONField(default=dict, blank=True, help_text="The run facets of the latest event.")
    created_at = models.DateTimeField(default=timezone.now)
    # Who sent the latest event: no database constraint (the ingest's upsert
    # would pay a foreign-key check per event), and kept when the token goes.
    token = models.ForeignKey("registry.ApiToken", null=True, blank=True, on_delete=models.DO_NOTHING,
                              db_constraint=False, db_index=False, related_name="+",
                              help_text="The token that sent the latest event.")
    token_team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.DO_NOTHING,
                                   db_constraint=False, db_index=False, related_name="+",
                                   help_text="The team that event is attributed to.")

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-state_at"]
        indexes = [
            models.Index(fields=["job", "-state_at"], name="lineage_run_job_recent_idx"),
            # The inbox finds the jobs a team's tokens posted runs of (lineage.inbox).
            models.Index(fields=["token_team", "job"], name="lineage_run_token_team_idx",
                         condition=models.Q(token_team__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"run {self.run_uuid} of {self.job_id}"


class RunEvent(models.Model):
    """A RunEvent as received. Retention prunes these; the rows derived from
    them (jobs, runs, datasets, edges) stay.

    On PostgreSQL the table is partitioned by month of `event_time`
    (lineage.partitions): retention drops whole months, and a read bounded in
    event time reads only its months. A partitioned table's unique keys must
    hold the partition key, so the database's primary key is (id, event_time)
    (ids stay unique: one sequence) and a retry is found by (checksum,
    event_time); the checksum covers the eventTime, so that is the same rule
    as the checksum alone."""

    checksum = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON: a retry stores nothing new.")
    run_uuid = models.UUIDField(db_index=True)
    event_type = models.CharField(max_length=16, blank=True)
    event_time = models.DateTimeField()
    job_namespace = models.CharField(max_length=500)
    job_name = models.CharField(max_length=500)
    payload = models.JSONField()
    received_at = models.DateTimeField(default=timezone.now)
    # Which token sent the event, and the team it is attributed to (a team
    # token's own, a person's only team): the record outlives the token.
    token = models.ForeignKey("registry.ApiToken", null=True, blank=True, on_delete=models.DO_NOTHING,
                              db_constraint=False, db_index=False, related_name="+")
    token_team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.DO_NOTHING,
                                   db_constraint=False, db_index=False, related_name="+")

    objects = RunEventQuerySet.as_manager()

    class Meta:
        ordering = ["-event_time", "-id"]
        constraints = [models.UniqueConstraint(fields=["checksum", "event_time"], name="lineage_runevent_checksum_time_unique",
                                               violation_error_message="This event is already recorded.")]
        # Retention's edge month and the events list read by event time.
        indexes = [models.Index(fields=["event_time", "id"], name="lineage_runevent_time_idx")]

    def __str__(self) -> str:
        return f"{self.event_type or 'event'} {self.run_uuid} at {self.event_time:%Y-%m-%d %H:%M:%S}"


class JobDataset(models.Model):
    """An edge of the lineage graph: `job` reads (in) or writes (out) `dataset`."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="dataset_edges")
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="job_edges")
    direction = models.CharField(max_length=3, choices=Direction.choices)
    first_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "direction", "dataset"], name="lineage_jobdataset_unique",
                                    violation_error_message="This job is already recorded reading or writing this dataset in this direction."),
        ]
        # The graph walk goes dataset -> jobs reading it (downstream) or writing
        # it (upstream); the unique index serves job -> datasets.
        indexes = [models.Index(fields=["dataset", "direction", "job"], name="lineage_edge_dataset_idx")]

    def __str__(self) -> str:
        arrow = "reads" if self.direction == Direction.INPUT else "writes"
        return f"{self.job_id} {arrow} {self.dataset_id}"


class RunDataset(models.Model):
    """What one run read or wrote: run-level lineage."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="dataset_edges")
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="run_edges")
    direction = models.CharField(max_length=3, choices=Direction.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "direction", "dataset"], name="lineage_rundataset_unique",
                                    violation_error_message="This run is already recorded reading or writing this dataset in this direction."),
        ]
        # With the run last, "the newest run that wrote this dataset" is one probe
        # (Marquez's currentVersion, updatedAt and lastModifiedAt read it per dataset).
        indexes = [models.Index(fields=["dataset", "direction", "run"], name="lineage_rundataset_latest_idx")]

    def __str__(self) -> str:
        return f"{self.run_id} {self.direction} {self.dataset_id}"


class Origin(models.TextChoices):
    """Which kind of event said it."""

    RUN = "run", "RunEvent"
    DATASET = "dataset", "DatasetEvent"
    JOB = "job", "JobEvent"


class DatasetSchema(models.Model):
    """A dataset's current schema: the columns its latest `schema` facet listed
    (from a RunEvent writing it, or a DatasetEvent), with where that came from.
    Column usage resolves `SELECT *` with it, when it is complete.

    A facet is *complete* when every field has a type (what a catalog or the
    database gives); dbt without `dbt docs generate` lists only the documented
    columns, untyped. A partial schema never replaces a complete one."""

    dataset = models.OneToOneField("registry.Dataset", primary_key=True, on_delete=models.CASCADE,
                                   related_name="lineage_schema")
    fields = models.JSONField(help_text="{column: type} of the top-level fields ('' when the facet gives no type).")
    complete = models.BooleanField(default=True, help_text="Every field has a type: taken as the whole table.")
    columns = models.JSONField(default=list, blank=True,
                               help_text="[{name, type, description}] in the facet's order (`fields` is for look-ups).")
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.RUN)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="The job whose event carried it (none for a DatasetEvent).")
    run_uuid = models.UUIDField(null=True, blank=True)
    event_time = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"columns of dataset #{self.dataset_id}"

    def listed_columns(self) -> list[dict]:
        """[{name, type, description}] in the facet's order (rows stored before the order was kept: by name)."""
        return self.columns or [{"name": n, "type": t, "description": ""} for n, t in self.fields.items()]


def observed_schemas(dataset_ids: list[int]) -> dict[int, dict]:
    """registry.hooks.dataset_observed_schemas' answer: each dataset's current schema (one query)."""
    return {row.dataset_id: {"columns": row.listed_columns(), "complete": row.complete,
                             "seen_at": row.event_time or row.updated_at}
            for row in DatasetSchema.objects.filter(dataset_id__in=dataset_ids)}


def compiled_queries(jobs: list[str]) -> dict:
    """registry.hooks.job_queries' answer: each job's latest `sql` facet, its sqlglot
    dialect (the facet's, else its inputs' namespace scheme) and the datasets it reads
    with their current columns. Three queries whatever the number of jobs."""
    from registry.hooks import InputTable, JobQuery

    wanted = Q()
    for label in jobs:
        namespace, _, name = label.rpartition("/")
        wanted |= Q(namespace=namespace, name=name)
    if not wanted:
        return {}
    found = {}
    for job in Job.objects.filter(wanted):
        facet = (job.facets or {}).get("sql")
        if isinstance(facet, dict) and isinstance(facet.get("query"), str) and facet["query"].strip():
            found[job.pk] = (job, facet)
    edges = list(JobDataset.objects.filter(job_id__in=found, direction=Direction.INPUT)
                 .values_list("job_id", "dataset_id", "dataset__namespace", "dataset__name").order_by("dataset__name"))
    schemas = {row.dataset_id: row for row in DatasetSchema.objects.filter(dataset_id__in={e[1] for e in edges})}
    inputs: dict[int, list] = {}
    for job_id, dataset_id, namespace, name in edges:
        schema = schemas.get(dataset_id)
        columns = tuple((c["name"], c.get("type") or "") for c in schema.listed_columns()) if schema else None
        inputs.setdefault(job_id, []).append(InputTable(dataset_id, namespace, name, columns))
    # sqlglot (under lineage.sql_usage) costs most of a second to import: load it when a
    # query is asked for, not with the models at every process start.
    from lineage.sql_usage import dialect_for

    answer = {}
    for job_id, (job, facet) in found.items():
        read = inputs.get(job_id, [])
        dialect = facet.get("dialect") if isinstance(facet.get("dialect"), str) else None
        answer[f"{job.namespace}/{job.name}"] = JobQuery(
            f"{job.namespace}/{job.name}", facet["query"],
            dialect_for(dialect, read[0].namespace if read else job.namespace), tuple(read))
    return answer


class StaticEvent(models.Model):
    """A DatasetEvent or JobEvent as received (no run): static metadata and
    declared lineage. Retention prunes these like RunEvents."""

    checksum = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the canonical JSON: a retry stores nothing new.")
    kind = models.CharField(max_length=8, choices=[(Origin.DATASET, "DatasetEvent"), (Origin.JOB, "JobEvent")])
    event_time = models.DateTimeField()
    namespace = models.CharField(max_length=500, help_text="The dataset's or the job's.")
    name = models.CharField(max_length=500)
    payload = models.JSONField()
    received_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.namespace}/{self.name} at {self.event_time:%Y-%m-%d %H:%M:%S}"


class DeclaredEdge(models.Model):
    """Static lineage: a JobEvent declared that `job` reads (in) or writes (out)
    `dataset`. Kept apart from the edges runs showed (JobDataset); the graph
    shows both, these marked as declared. A JobEvent that lists inputs or
    outputs replaces its job's declaration."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="declared_edges")
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="declared_edges")
    direction = models.CharField(max_length=3, choices=Direction.choices)
    declared_at = models.DateTimeField(help_text="eventTime of the JobEvent that declared it.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "direction", "dataset"], name="lineage_declarededge_unique",
                                    violation_error_message="This job's edge to this dataset in this direction is already declared."),
        ]
        indexes = [models.Index(fields=["dataset", "direction", "job"], name="lineage_declared_dataset_idx")]

    def __str__(self) -> str:
        arrow = "declares reading" if self.direction == Direction.INPUT else "declares writing"
        return f"{self.job_id} {arrow} {self.dataset_id}"


class DatasetFacet(models.Model):
    """The latest of one facet producers send about a dataset (ownership,
    documentation, symlinks, lifecycle state, …; lineage.facets.KEPT), with the
    event it came from. Shown beside the registry's own fields, never instead
    of them: a producer's `ownership` does not claim the dataset."""

    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="lineage_facets")
    name = models.CharField(max_length=100, help_text="The facet's key: ownership, documentation, …")
    facet = models.JSONField()
    origin = models.CharField(max_length=8, choices=Origin.choices)
    job_namespace = models.CharField(max_length=500, blank=True)
    job_name = models.CharField(max_length=500, blank=True)
    run_uuid = models.UUIDField(null=True, blank=True)
    event_time = models.DateTimeField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="lineage_datasetfacet_unique",
                                               violation_error_message="This dataset already has a facet of this name.")]

    def __str__(self) -> str:
        return f"{self.name} of dataset #{self.dataset_id}"


class DatasetAlias(models.Model):
    """Another (namespace, name) of a dataset, from its `symlinks` facet (or the
    previous name of a RENAME): events naming the alias resolve to the dataset
    instead of creating a second one."""

    namespace = models.CharField(max_length=500)
    name = models.CharField(max_length=500)
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="lineage_aliases")
    kind = models.CharField(max_length=100, blank=True, help_text="The symlink's type (TABLE, …), or RENAMED.")
    first_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "dataset aliases"
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="lineage_datasetalias_unique",
                                               violation_error_message="This namespace and name are already an alias of a dataset.")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} -> #{self.dataset_id}"


class QualityCheck(models.Model):
    """What one run measured and asserted about a dataset: the
    `dataQualityMetrics` and `dataQualityAssertions` facets (dbt tests, Great
    Expectations, Soda). One row per (dataset, run); a later event of the run
    replaces it. A DatasetEvent's facets make a row without a run."""

    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="quality_checks")
    run_uuid = models.UUIDField(null=True, blank=True)
    job_namespace = models.CharField(max_length=500, blank=True)
    job_name = models.CharField(max_length=500, blank=True)
    event_type = models.CharField(max_length=16, blank=True)
    event_time = models.DateTimeField()
    metrics = models.JSONField(null=True, blank=True, help_text="The dataQualityMetrics facet's fields.")
    assertions = models.JSONField(default=list, blank=True, help_text="The dataQualityAssertions facet's assertions.")
    assertion_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0, help_text="Assertions with success false.")
    checked_at = models.DateTimeField(default=timezone.now)
    # The result waits in its own row for the listeners of `quality_reported`
    # (incidents judges it after the ingest's commit): no second table is written
    # per event. A later event of the run replaces the row and sets it waiting again.
    judged = models.BooleanField(default=False, help_text="Judged by the listeners of quality results since its last write.")
    judge_attempts = models.PositiveSmallIntegerField(default=0, help_text="Judgements of this write that failed.")

    objects = QualityCheckQuerySet.as_manager()

    class Meta:
        ordering = ["-event_time", "-id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "run_uuid"], name="lineage_qualitycheck_run_unique",
                                               violation_error_message="This run's quality checks on this dataset are already recorded.")]
        indexes = [models.Index(fields=["dataset", "-event_time"], name="lineage_quality_recent_idx"),
                   # Only the few results waiting to be judged: the judge's and the sweep's look-ups.
                   models.Index(fields=["dataset", "checked_at"], condition=models.Q(judged=False),
                                name="lineage_quality_waiting_idx")]

    def __str__(self) -> str:
        return f"{self.failed_count}/{self.assertion_count} failed on #{self.dataset_id} ({self.job_name})"

    @property
    def failed_assertions(self) -> list[dict]:
        return [a for a in self.assertions if isinstance(a, dict) and a.get("success") is False]


class FieldEdge(models.Model):
    """Column lineage: `job` fed `field` of `dataset` from `input_field` of
    `input_dataset` (from the same evidence as the ColumnRead rows, most
    trusted source first), with its latest evidence."""

    # No index of their own on the keys: the ingest writes these rows per event, and
    # the unique index and the input index below serve every look-up (a job is
    # never deleted but by hand). No database constraints, as on registry's
    # ColumnRead: derived facts, cascaded by Django, not worth a checked row and a
    # shared lock on hot dataset rows per fact at every commit.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="field_edges", db_index=False,
                            db_constraint=False)
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="+", db_index=False,
                                db_constraint=False)
    field = models.CharField(max_length=500)
    input_dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="+", db_index=False,
                                      db_constraint=False)
    input_field = models.CharField(max_length=500)
    kind = models.CharField(max_length=10, choices=UsageKind.choices, default=UsageKind.DIRECT)
    subtype = models.CharField(max_length=50, blank=True, help_text="IDENTITY, TRANSFORMATION, AGGREGATION, …")
    description = models.TextField(blank=True)
    masking = models.BooleanField(default=False)
    source = models.CharField(max_length=20, choices=UsageSource.choices)
    # Passed on by `SELECT *` alone, never named: a column removed upstream vanishes
    # here without the job failing (None: no source says).
    through_star = models.BooleanField(null=True)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    objects = FieldEdgeQuerySet.as_manager()

    class Meta:
        constraints = [
            # Also the index of the upstream walk: a field -> the fields feeding it.
            models.UniqueConstraint(fields=["dataset", "field", "input_dataset", "input_field", "job", "kind"],
                                    name="lineage_fieldedge_unique",
                                    violation_error_message="This column lineage edge is already recorded."),
        ]
        # The downstream walk: a field -> the fields it feeds. (No index on last_seen_at: the
        # daily prune can scan, the ingest would pay for it with every row.)
        indexes = [models.Index(fields=["input_dataset", "input_field"], name="lineage_fieldedge_input_idx")]

    def __str__(self) -> str:
        return f"#{self.dataset_id}.{self.field} <- #{self.input_dataset_id}.{self.input_field} ({self.kind})"
