"""Lanes: every major version of a contract keeps receiving minor and patch versions
after a newer major is published; this app keeps each lane's dates and who still reads it.

- `Lane`: a lane's deprecation and sunset dates (set by the owner team, audited) and a
  governance admin's extension of its sunset (audited). From the deprecation date the thin
  client warns; at the sunset in force the lane stops answering "2.x" and "latest".
- `LaneRead`: the thin client's report of the version a selector resolved to (the
  X-Registry-Resolved header of its document fetch), one row per contract, lane and
  reader (a token, else a person), with the last time seen and a count.
- `LaneReminder` / `LaneNotice`: the 30/7/1-day sunset reminders, once per lane, team
  and step, and their outbox rows (sent after commit by a Celery task).
"""

from __future__ import annotations

from datetime import date

from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.utils import timezone

from contracts_app.models import Contract
from contracts_app.store import SCHEMA_INDEX_KEY
from lanes.answers import latest_migrating_by
from registry.models import AuditEvent, RegistryError, Team, acts_for, is_governance_admin


class LaneAction:
    DATES_SET = "lane.dates_set"
    EXTENDED = "lane.extended"


class LaneError(RegistryError):
    """A lane rule said no (the API answers 409 with `code`)."""

    def __init__(self, message: str, code: str = "lane_rule"):
        super().__init__(message, code=code)


class LaneQuerySet(models.QuerySet):
    def deprecated(self, today: date) -> LaneQuerySet:
        return self.filter(deprecation_date__lte=today)


class Lane(models.Model):
    contract = models.ForeignKey(Contract, on_delete=models.CASCADE, related_name="lanes")
    major = models.PositiveIntegerField()
    deprecation_date = models.DateField(null=True, blank=True, help_text="From this day the lane is deprecated.")
    sunset_date = models.DateField(null=True, blank=True,
                                   help_text="From this day the lane no longer resolves for lane selectors or latest.")
    extended_until = models.DateField(null=True, blank=True,
                                      help_text="A governance admin's extension: the sunset in force instead.")
    extension_reason = models.TextField(blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = LaneQuerySet.as_manager()

    class Meta:
        ordering = ["contract__name", "major"]
        constraints = [
            models.UniqueConstraint(fields=["contract", "major"], name="lane_unique_per_contract",
                                    violation_error_message="This contract already has this lane."),
            models.CheckConstraint(
                condition=models.Q(sunset_date__isnull=True) | models.Q(deprecation_date__isnull=True)
                | models.Q(sunset_date__gte=models.F("deprecation_date")),
                name="lane_sunset_after_deprecation",
                violation_error_message="A lane's sunset cannot come before its deprecation."),
        ]

    def __str__(self) -> str:
        return f"{self.contract.name} {self.label}"

    @property
    def label(self) -> str:
        return f"{self.major}.x"

    @property
    def sunset_in_force(self) -> date | None:
        """The sunset that applies: a governance admin's extension, else the owner's date."""
        return self.extended_until or self.sunset_date

    def is_deprecated(self, today: date) -> bool:
        return self.deprecation_date is not None and today >= self.deprecation_date

    def is_past_sunset(self, today: date) -> bool:
        sunset = self.sunset_in_force
        return sunset is not None and today >= sunset

    def snapshot(self) -> dict:
        def iso(day):
            return day.isoformat() if day else None
        return {"lane": self.label, "deprecation_date": iso(self.deprecation_date), "sunset_date": iso(self.sunset_date),
                "extended_until": iso(self.extended_until)}

    @classmethod
    def of(cls, contract: Contract, major: int) -> Lane:
        lane, _ = cls.objects.get_or_create(contract=contract, major=major)
        return lane

    def set_dates(self, *, deprecation_date: date | None, sunset_date: date | None, by,
                  override_reason: str = "", from_document: bool = False) -> Lane:
        """The owner team sets the lane's dates (audited). The sunset may not come before
        the latest "migrating by" date a team gave for leaving this lane, unless a governance
        admin overrides it with a reason (audited as an override)."""
        if not from_document and not (is_governance_admin(by) or (self.contract.owner_team_id and acts_for(by, self.contract.owner_team))):
            raise PermissionDenied(f"Only a member of the owner team of {self.contract.name} sets its lanes' dates.")
        if deprecation_date and sunset_date and sunset_date < deprecation_date:
            raise LaneError(f"The sunset ({sunset_date}) cannot come before the deprecation ({deprecation_date}).",
                            code="sunset_before_deprecation")
        with transaction.atomic():
            locked = Lane.objects.select_for_update().select_related("contract").get(pk=self.pk)
            migrating = latest_migrating_by(locked.contract_id, locked.major)
            override = ""
            if sunset_date and migrating and sunset_date < migrating[0]:
                day, team = migrating
                if not override_reason.strip():
                    raise LaneError(
                        f"Team {team} is migrating off lane {locked.label} of {locked.contract.name} by {day}: the sunset "
                        f"cannot come before it. A governance admin may override this, with a reason.",
                        code="sunset_before_migration")
                if not is_governance_admin(by):
                    raise PermissionDenied("Only a governance admin can set a sunset before a team's migration date.")
                override = f"sunset {sunset_date} before {team}'s migration date {day}: {override_reason.strip()}"
            before = locked.snapshot()
            locked.deprecation_date, locked.sunset_date, locked.updated_at = deprecation_date, sunset_date, timezone.now()
            locked.save(update_fields=["deprecation_date", "sunset_date", "updated_at"])
            after = {**locked.snapshot(), "contract": locked.contract.name}
            if override:
                after["override"] = override
            if from_document:
                after["from"] = "the contract document"
            AuditEvent.record(by, LaneAction.DATES_SET, locked, before=before, after=after)
            transaction.on_commit(_rewrite_index)
        self._refresh(locked)
        return self

    def extend(self, *, until: date, by, reason: str) -> Lane:
        """A governance admin extends the lane's sunset (audited): until then it keeps resolving."""
        if not is_governance_admin(by):
            raise PermissionDenied("Only a governance admin can extend a lane past its sunset.")
        if not reason.strip():
            raise LaneError("An extension needs a reason.", code="reason_required")
        with transaction.atomic():
            locked = Lane.objects.select_for_update().select_related("contract").get(pk=self.pk)
            current = locked.sunset_in_force
            if current is None:
                raise LaneError(f"Lane {locked.label} of {locked.contract.name} has no sunset to extend.",
                                code="no_sunset")
            if until <= current:
                raise LaneError(f"An extension moves the sunset later than {current}; {until} does not.",
                                code="extension_not_later")
            before = locked.snapshot()
            locked.extended_until, locked.extension_reason, locked.updated_at = until, reason.strip(), timezone.now()
            locked.save(update_fields=["extended_until", "extension_reason", "updated_at"])
            AuditEvent.record(by, LaneAction.EXTENDED, locked, before=before,
                              after={**locked.snapshot(), "contract": locked.contract.name, "reason": locked.extension_reason})
            transaction.on_commit(_rewrite_index)
        self._refresh(locked)
        return self

    def _refresh(self, locked: Lane) -> None:
        for field in ("deprecation_date", "sunset_date", "extended_until", "extension_reason", "updated_at"):
            setattr(self, field, getattr(locked, field))


def _rewrite_index() -> None:
    """The store's index carries the lane dates: rewrite it once they change."""
    # The checker (under publishing) loads on first use, not at start-up.
    from contracts_app.publishing import rewrite_index

    rewrite_index(SCHEMA_INDEX_KEY)


class LaneRead(models.Model):
    """A thin client fetched a version of a contract and said which selector it resolved."""

    contract = models.ForeignKey(Contract, on_delete=models.CASCADE, related_name="+")
    reader = models.CharField(max_length=60, help_text='"token:<id>" or "user:<id>": who fetched.')
    reader_label = models.CharField(max_length=200)
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    major = models.PositiveIntegerField()
    version = models.CharField(max_length=50)
    selector = models.CharField(max_length=50)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    fetches = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["contract", "reader", "major"], name="lane_read_unique",
                                               violation_error_message="This reader's fetches of this lane are already counted.")]
        indexes = [models.Index(fields=["contract", "last_seen_at"], name="lane_read_recent")]

    def __str__(self) -> str:
        return f"{self.reader_label} read {self.contract_id} {self.version} ({self.selector})"


class LaneReminder(models.Model):
    """One sunset reminder step (30, 7 or 1 day(s) before) sent to one team for one lane."""

    lane = models.ForeignKey(Lane, on_delete=models.CASCADE, related_name="reminders")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    days_before = models.PositiveIntegerField()
    sunset_date = models.DateField(help_text="The sunset the reminder was for (an extension starts the steps again).")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["lane", "team", "days_before", "sunset_date"],
                                               name="lane_reminder_once",
                                               violation_error_message="This team was already reminded at this step.")]

    def __str__(self) -> str:
        return f"{self.days_before}-day reminder of {self.lane_id} to team {self.team_id}"


class LaneNotice(models.Model):
    """An outbox row: one reminder to one recipient (a member's e-mail or a team channel),
    sent after commit through the channel kind's transport."""

    reminder = models.ForeignKey(LaneReminder, on_delete=models.CASCADE, related_name="notices")
    channel = models.CharField(max_length=20)
    recipient = models.CharField(max_length=500)
    team_channel_id = models.IntegerField(null=True, blank=True)
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
        constraints = [models.UniqueConstraint(fields=["reminder", "channel", "recipient"], name="lane_notice_once",
                                               violation_error_message="This recipient already has this reminder.")]

    def __str__(self) -> str:
        return f"{self.channel} to {self.recipient}"


