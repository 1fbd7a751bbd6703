"""Incidents and the evidence they come from.

- `CheckResult`: per (dataset, column, kind), the latest *final* verdict of the
  assertions reported about it (a run's COMPLETE or FAIL; the newest event wins,
  so a late older result changes nothing), and the run still reporting, if any.
- `ContractStatus`: per dataset bound to a contract, the status computed from the
  contract's declared checks, the dataset's open incidents and its quality SLO;
  what the preflight, the pages, the list badge and Prometheus read.
- `Incident`: one per (dataset, cause, key) while it is open (a partial unique
  index: the database deduplicates across replicas), with its timeline
  (`IncidentEvent`), the teams told (`IncidentTeam`) and the outbox
  (`IncidentNotification`).
- `QualitySLO`: "checks must pass within N minutes of each write", with the
  deadline the freshness deadline machinery keeps.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from registry.models import Dataset, Team


class Verdict(models.TextChoices):
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    ERRORED = "errored", "Errored"
    NEVER_RUN = "never_run", "Never reported"


class CheckResult(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="check_results")
    column = models.CharField(max_length=500, blank=True, help_text="Empty: a check on the whole dataset.")
    kind = models.CharField(max_length=200)
    name = models.CharField(max_length=500, blank=True, help_text="The assertion's name as last reported.")
    verdict = models.CharField(max_length=16, choices=Verdict.choices, default=Verdict.NEVER_RUN)
    run_uuid = models.UUIDField(null=True, blank=True, help_text="The run of the latest final verdict.")
    job_name = models.CharField(max_length=500, blank=True)
    event_time = models.DateTimeField(null=True, blank=True, help_text="When the latest final verdict was reported.")
    detail = models.JSONField(default=dict, blank=True, help_text="actual, expected, severity as reported.")
    running_run_uuid = models.UUIDField(null=True, blank=True, help_text="A run that started reporting and has not finished.")
    running_since = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["dataset", "column", "kind"]
        constraints = [models.UniqueConstraint(fields=["dataset", "column", "kind"], name="incidents_checkresult_unique",
                                               violation_error_message="This dataset already has a result for this check.")]

    def __str__(self) -> str:
        return f"#{self.dataset_id} {self.column or '(dataset)'} {self.kind}: {self.verdict}"


class ContractState(models.TextChoices):
    PASSING = "passing", "Passing"
    FAILING = "failing", "Failing"
    UNVERIFIED = "unverified", "Not passing (unverified)"


STATE_CSS = {ContractState.PASSING: "good", ContractState.FAILING: "bad", ContractState.UNVERIFIED: "warn"}


class ContractStatus(models.Model):
    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, primary_key=True, related_name="contract_status")
    contract = models.ForeignKey("contracts_app.Contract", on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=50, blank=True, help_text="The latest published version judged against.")
    status = models.CharField(max_length=16, choices=ContractState.choices, default=ContractState.UNVERIFIED)
    running = models.BooleanField(default=False, help_text="A run is reporting; the status is the previous final one.")
    reasons = models.JSONField(default=list, blank=True)
    checks = models.JSONField(default=list, blank=True, help_text="Each declared and reported check with its verdict.")
    facts = models.JSONField(default=dict, blank=True,
                             help_text="The dataset's conditions by cause (stale, drift, check_late): why, while they hold.")
    evaluated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "contract statuses"
        indexes = [models.Index(fields=["status"], name="incidents_status_idx")]

    def __str__(self) -> str:
        return f"#{self.dataset_id} {self.contract_id}: {self.status}"

    @property
    def css(self) -> str:
        return STATE_CSS.get(self.status, "")


class Cause(models.TextChoices):
    STALE = "stale", "Stale"
    DRIFT = "drift", "Drifted from its contract"
    CHECK_FAILED = "check_failed", "A declared check failed"
    CHECK_LATE = "check_late", "Checks did not pass in time"


class IncidentState(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


class Resolution(models.TextChoices):
    OWNER = "owner", "Resolved by the owner team"
    AUTOMATIC = "automatic", "Resolved by a later passing result"
    UNBOUND = "unbound", "The contract was unbound"


class IncidentQuerySet(models.QuerySet):
    def unresolved(self) -> IncidentQuerySet:
        return self.exclude(state=IncidentState.RESOLVED)

    def touching(self, columns: list[str]) -> IncidentQuerySet:
        """Incidents about the whole dataset, or about one of `columns` (as folded)."""
        folded = [c.casefold() for c in columns]
        return self.filter(Q(column="") | Q(column__in=folded))


class Incident(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="incidents")
    cause = models.CharField(max_length=16, choices=Cause.choices)
    key = models.CharField(max_length=700, blank=True, help_text="Which check (column:kind); empty for the whole dataset.")
    column = models.CharField(max_length=500, blank=True, help_text="The affected column (folded); empty: every column.")
    state = models.CharField(max_length=16, choices=IncidentState.choices, default=IncidentState.OPEN)
    summary = models.TextField()
    evidence = models.JSONField(default=dict, blank=True, help_text="The run, assertion or deadline that opened it.")
    opened_at = models.DateTimeField(default=timezone.now)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                        related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolution = models.CharField(max_length=16, choices=Resolution.choices, blank=True)

    objects = IncidentQuerySet.as_manager()

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            # One open incident per (dataset, cause, key), whichever replica sees the evidence first.
            models.UniqueConstraint(fields=["dataset", "cause", "key"], condition=~Q(state="resolved"),
                                    name="incidents_one_open_per_cause",
                                    violation_error_message="This dataset already has an open incident for this cause."),
        ]
        indexes = [
            models.Index(fields=["dataset"], condition=~Q(state="resolved"), name="incidents_open_idx"),
            # The dataset page shows the latest few, in this order, of all the dataset ever had.
            models.Index(fields=["dataset", "-opened_at", "-id"], name="incidents_dataset_recent_idx"),
            # The incidents list, newest first, seeks here page after page.
            models.Index(fields=["opened_at", "id"], name="incidents_opened_idx"),
        ]

    def __str__(self) -> str:
        return f"incident #{self.pk} on #{self.dataset_id}: {self.summary}"

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("dataset-detail", args=[self.dataset_id]) + f"#incident-{self.pk}"

    @property
    def is_open(self) -> bool:
        return self.state != IncidentState.RESOLVED

    @property
    def css(self) -> str:
        return {IncidentState.OPEN: "bad", IncidentState.ACKNOWLEDGED: "warn"}.get(self.state, "good")


class IncidentEvent(models.Model):
    """The incident's timeline: a row per thing that happened, never updated."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=20)  # opened, seen_again, notified, acknowledged, resolved
    actor_label = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind}: {self.text}"


class IncidentTeam(models.Model):
    """A team whose jobs read what the incident affects, and the path from it to their job."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="teams")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    owner = models.BooleanField(default=False, help_text="The team owning the dataset (told, not paged as a reader).")
    paths = models.JSONField(default=list, blank=True, help_text="[[dataset.column, …, job]] from the incident to each job.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["incident", "team"], name="incidents_team_once",
                                               violation_error_message="This team is already on this incident.")]
        indexes = [models.Index(fields=["team", "incident"], name="incidents_team_idx")]

    def __str__(self) -> str:
        return f"{self.team_id} on incident {self.incident_id}"


class IncidentNotification(models.Model):
    """One message to one recipient about one incident (sent after commit, retried, never twice)."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="notifications")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    channel = models.CharField(max_length=20)
    recipient = models.CharField(max_length=500)
    settings = models.JSONField(default=dict, blank=True, help_text="The channel's settings when queued.")
    subject = models.CharField(max_length=300)
    body = models.TextField()
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["incident", "channel", "recipient"],
                                               name="incidents_notified_once",
                                               violation_error_message="This recipient is already told of this incident.")]

    def __str__(self) -> str:
        return f"incident {self.incident_id} to {self.recipient} by {self.channel}"


class QualitySLO(models.Model):
    """Declared checks must pass within `within` of each write; `due_at` is the deadline."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, primary_key=True, related_name="quality_slo")
    within = models.DurationField()
    last_write_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True, help_text="When a missing passing result becomes a breach.")
    task_eta = models.DateTimeField(null=True, blank=True, help_text="The deadline a Celery task is scheduled for.")

    class Meta:
        verbose_name = "quality SLO"
        indexes = [models.Index(fields=["due_at"], name="incidents_quality_due_idx", condition=Q(due_at__isnull=False))]

    def __str__(self) -> str:
        return f"#{self.dataset_id}: checks within {self.within}"
