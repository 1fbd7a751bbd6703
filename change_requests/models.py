"""Change requests: a breaking contract version waits for every consumer team.

States (django-fsm):

    open ──► approved ──► published
      │  └──────┐  │
      ▼         ▼  ▼
    rejected   withdrawn

- `open`: waiting for the required teams (frozen when the request opened).
- `approved`: every required team acknowledged (or, after the deadline, a
  governance admin approved over teams that stayed silent).
- `published`: the owner team recorded the proposed version.
- `rejected` (a governance admin) and `withdrawn` (the owner team) end it.

At most one unfinished (open or approved) request per contract: a partial
unique index says so in the database, so two concurrent proposals cannot both
be stored whatever the Python code does.

Every transition runs in one transaction that locks the request row, checks
the viewer's permission, changes the state and writes an AuditEvent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from django_fsm import FSMField, has_transition_perm, transition

from change_requests import notifications
from change_requests.digest import InboxDigest
from change_requests.notifications import Notification, NotificationEvent, TeamChannel
from contracts_app.models import ContractVersion
from registry.keyset import Segment
from registry.models import (
    AuditEvent,
    RegistryError,
    Team,
    actor_label,
    acts_for,
    is_governance_admin,
    person_of,
)

__all__ = [  # the outbox's rows live with the code that writes and sends them
    "ChangeRequest", "ChangeRequestAction", "ChangeRequestError", "ChangeRequestState", "InboxDigest", "NotRequiredTeam",
    "Notification",
    "NotificationEvent", "ReviewPolicy", "ReviewStatus", "TeamAssessment", "TeamChannel", "TeamReview",
    "UnfinishedRequestExists",
]


class ChangeRequestState(models.TextChoices):
    OPEN = "open", "Open"
    APPROVED = "approved", "Approved"
    PUBLISHED = "published", "Published"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


UNFINISHED = (ChangeRequestState.OPEN, ChangeRequestState.APPROVED)
FINISHED = ~Q(state__in=UNFINISHED)  # the condition of the finished requests' index, as written there


class ReviewStatus(models.TextChoices):
    """A team's answer. ACKNOWLEDGED is "approve" (ready now); MIGRATING is "migrating by
    DATE" (publish may proceed, the team stays on the old lane until DATE); OBJECTED is
    "block" (with a reason: the request cannot publish until the team withdraws it or a
    governance admin overrides it)."""

    PENDING = "pending", "Waiting"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    MIGRATING = "migrating", "Migrating"
    OBJECTED = "objected", "Objected"


# The answers that let a request publish: ready now, or migrating by a date on the old lane.
READY = (ReviewStatus.ACKNOWLEDGED, ReviewStatus.MIGRATING)


class ChangeRequestAction:
    """Audit action names for change requests."""

    OPENED = "change_request.opened"
    ACKNOWLEDGED = "change_request.acknowledged"
    OBJECTED = "change_request.objected"
    APPROVED = "change_request.approved"
    PUBLISHED = "change_request.published"
    REJECTED = "change_request.rejected"
    WITHDRAWN = "change_request.withdrawn"
    REMINDED = "change_request.reminded"
    MIGRATING = "change_request.migrating"
    BLOCK_OVERRIDDEN = "change_request.block_overridden"
    TEAM_ADDED = "change_request.team_added"
    ESCALATED = "change_request.escalated"


class ChangeRequestError(RegistryError):
    """A change-request rule said no (the API answers 409)."""


class UnfinishedRequestExists(ChangeRequestError):
    def __init__(self, existing: ChangeRequest):
        self.existing = existing
        super().__init__(
            f"Contract {existing.contract.name} already has an unfinished change request "
            f"#{existing.pk} ({existing.state}, proposing version {existing.proposed_version}); "
            f"publish, withdraw or reject it before proposing another."
        )


class NotRequiredTeam(ChangeRequestError):
    pass


# --- permission rules, one per transition (django-fsm calls them with (request, user)) ---

def _is_owner_member(request: ChangeRequest, user) -> bool:
    return request.owner_team_id is not None and acts_for(user, request.owner_team)


def _is_admin(request: ChangeRequest, user) -> bool:
    return is_governance_admin(user)


def _nobody(request: ChangeRequest, user) -> bool:
    """Approval by acknowledgement is the system's doing, never a person's click."""
    return user is None


def _every_team_acknowledged(request: ChangeRequest) -> bool:
    """Every required team approved or is migrating by a date (a block, overridden or not,
    is never an approval: an overridden block goes through approve_over_block)."""
    return not request.reviews.exclude(status__in=READY).exists()


def _blocks_overridden(request: ChangeRequest) -> bool:
    """Every block was overridden by a governance admin, and every other team is ready."""
    reviews = list(request.reviews.all())
    return any(r.status == ReviewStatus.OBJECTED for r in reviews) and all(
        r.status in READY or (r.status == ReviewStatus.OBJECTED and r.block_overridden_at) for r in reviews)


def _escalated_without_objection(request: ChangeRequest) -> bool:
    return request.escalated_at is not None and not request.reviews.filter(status=ReviewStatus.OBJECTED).exists()


class ChangeRequestQuerySet(models.QuerySet):
    def unfinished(self) -> ChangeRequestQuerySet:
        return self.filter(state__in=UNFINISHED)

    def for_contract(self, contract) -> ChangeRequestQuerySet:
        return self.filter(contract=contract)

    def due_for_reminder(self, now: datetime) -> ChangeRequestQuerySet:
        return self.filter(state=ChangeRequestState.OPEN, reminded_at__isnull=True,
                           escalated_at__isnull=True, remind_at__lte=now, deadline_at__gt=now)

    def past_deadline(self, now: datetime) -> ChangeRequestQuerySet:
        return self.filter(state=ChangeRequestState.OPEN, escalated_at__isnull=True, deadline_at__lte=now)

    def longest_unassessed(self) -> ChangeRequestQuerySet:
        """Open requests, the one the clock looked at again longest ago (or never) first."""
        return self.filter(state=ChangeRequestState.OPEN).order_by(
            models.F("reassessed_at").asc(nulls_first=True), "opened_at", "pk")

    def for_listing(self) -> ChangeRequestQuerySet:
        """Open first, then approved, then finished; each with its progress, in one query.

        The counts are subqueries, not a JOIN … GROUP BY: grouping would count the
        reviews of every request before a page's LIMIT applied."""
        order = models.Case(
            models.When(state=ChangeRequestState.OPEN, then=0),
            models.When(state=ChangeRequestState.APPROVED, then=1),
            default=2, output_field=models.IntegerField(),
        )
        reviews = TeamReview.objects.filter(change_request=OuterRef("pk")).order_by().values("change_request")

        def counted(**only) -> Coalesce:
            return Coalesce(Subquery(reviews.filter(**only).annotate(n=Count("pk")).values("n")[:1]), 0,
                            output_field=models.IntegerField())

        return (
            self.select_related("contract", "owner_team", "opened_by")
            .annotate(
                required_count=counted(),
                acknowledged_count=counted(status=ReviewStatus.ACKNOWLEDGED),
                objection_count=counted(status=ReviewStatus.OBJECTED),
                state_order=order,
            )
            .order_by("state_order", "deadline_at", "-opened_at")
        )

    def in_listing_order(self) -> list[Segment]:
        """`for_listing`'s order as keyset segments (registry.keyset.segmented_page): open,
        approved, then finished requests, each soonest deadline first through its own
        index, so a page of a long history costs what the first page does. (Requests with
        one deadline follow their ids, not the newest first: one direction seeks.)"""
        key = ("deadline_at", "id")
        return [Segment(self.filter(state=ChangeRequestState.OPEN), key),
                Segment(self.filter(state=ChangeRequestState.APPROVED), key),
                Segment(self.filter(FINISHED), key)]


class ChangeRequest(models.Model):
    contract = models.ForeignKey("contracts_app.Contract", on_delete=models.PROTECT, related_name="change_requests")
    state = FSMField(default=ChangeRequestState.OPEN, choices=ChangeRequestState.choices)
    owner_team = models.ForeignKey(
        Team, null=True, on_delete=models.PROTECT, related_name="owned_change_requests",
        help_text="The team that may publish or withdraw, frozen when the request opened.",
    )
    base_version = models.ForeignKey(
        "contracts_app.ContractVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The latest published version when the request opened: the left side of the diff.",
    )
    proposed_version = models.CharField(max_length=50)
    proposed_document = models.JSONField(help_text="The canonical document proposed.")
    report = models.JSONField(default=dict, help_text="The compatibility checker's report (to_dict()).")
    summary = models.TextField(blank=True, help_text="Why the owner wants this change.")
    touched_columns = models.JSONField(
        null=True, blank=True,
        help_text="The columns (or top-level properties) the breaking changes touch; empty: every column.")
    # Nullable, with a database default: rows written by raw SQL (and older requests) stay valid.
    unregistered_readers = models.JSONField(
        null=True, blank=True, default=list, help_text="Jobs reading the data whose team is not a registered consumer.")
    routing_note = models.TextField(blank=True, db_default="", help_text="Why the request waits for whom it waits for.")
    verification = models.JSONField(
        null=True, blank=True,
        help_text="The last verification on a scratch schema: when, how many consumers, or why it could not run.")
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    opened_by_label = models.CharField(max_length=200, blank=True)
    opened_at = models.DateTimeField(default=timezone.now)
    deadline_at = models.DateTimeField()
    remind_at = models.DateTimeField(help_text="When the still-waiting teams get a reminder.")
    reminded_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)
    reassessed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the clock last looked again at who the request affects.")
    approved_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    finished_by_label = models.CharField(max_length=200, blank=True)
    closing_comment = models.TextField(blank=True, help_text="Why it was rejected or withdrawn.")
    published_version = models.ForeignKey(
        "contracts_app.ContractVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    objects = ChangeRequestQuerySet.as_manager()

    # The audit log is append-only, so the type its rows name is a permanent identifier:
    # requests were recorded under this label before they had an app of their own.
    audit_type = "contracts_app.changerequest"

    class Meta:
        ordering = ["-opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["contract"], condition=Q(state__in=["open", "approved"]),
                name="change_request_one_unfinished_per_contract",
                violation_error_message="This contract already has an unfinished change request; publish, withdraw or reject it before proposing another.",
            ),
        ]
        indexes = [
            # The beat task polls open requests by deadline; finished ones never matter to it.
            models.Index(fields=["deadline_at"], condition=Q(state="open"), name="change_request_open_deadline"),
            # …and takes the open requests it looked at longest ago to assess again.
            models.Index(fields=["reassessed_at"], condition=Q(state="open"), name="change_request_open_reassessed"),
            # The list pages through the approved, then the finished requests by deadline.
            models.Index(fields=["deadline_at", "id"], condition=Q(state="approved"),
                         name="change_request_approved_dl"),
            models.Index(fields=["deadline_at", "id"], condition=FINISHED, name="change_request_finished_dl"),
        ]

    def __str__(self) -> str:
        return f"change request #{self.pk} for {self.contract.name} {self.proposed_version}"

    def get_absolute_url(self) -> str:
        return reverse("change-request-detail", args=[self.pk])

    @property
    def is_unfinished(self) -> bool:
        return self.state in UNFINISHED

    @property
    def is_overdue(self) -> bool:
        return self.is_unfinished and self.deadline_at <= timezone.now()

    def snapshot(self) -> dict[str, Any]:
        return {"state": self.state, "proposed_version": self.proposed_version}

    # --- the FSM: transitions carry their permission rule; the public methods below
    # lock the row, check that rule for the acting user and write the audit row. ---

    @transition(field=state, source=ChangeRequestState.OPEN, target=ChangeRequestState.APPROVED,
                conditions=[_every_team_acknowledged], permission=_nobody)
    def _approve_by_acknowledgement(self) -> None:
        self.approved_at = timezone.now()

    @transition(field=state, source=ChangeRequestState.OPEN, target=ChangeRequestState.APPROVED,
                conditions=[_escalated_without_objection], permission=_is_admin)
    def _approve_over_silence(self) -> None:
        self.approved_at = timezone.now()

    @transition(field=state, source=ChangeRequestState.OPEN, target=ChangeRequestState.APPROVED,
                conditions=[_blocks_overridden], permission=_nobody)
    def _approve_over_block(self) -> None:
        self.approved_at = timezone.now()

    @transition(field=state, source=ChangeRequestState.APPROVED, target=ChangeRequestState.PUBLISHED,
                permission=_is_owner_member)
    def _publish(self) -> None:
        self.finished_at = timezone.now()

    @transition(field=state, source=list(UNFINISHED), target=ChangeRequestState.REJECTED, permission=_is_admin)
    def _reject(self) -> None:
        self.finished_at = timezone.now()

    @transition(field=state, source=list(UNFINISHED), target=ChangeRequestState.WITHDRAWN,
                permission=_is_owner_member)
    def _withdraw(self) -> None:
        self.finished_at = timezone.now()

    def _locked(self) -> ChangeRequest:
        return ChangeRequest.objects.select_related("contract", "owner_team").select_for_update(of=("self",)).get(pk=self.pk)

    def _refresh_from(self, locked: ChangeRequest) -> None:
        for field in ("state", "approved_at", "finished_at", "finished_by_label", "closing_comment",
                      "published_version_id", "escalated_at", "reminded_at"):
            setattr(self, field, getattr(locked, field))

    def _require(self, method, user, refusal: str) -> None:
        if method.__name__ not in {"_approve_by_acknowledgement"} and self.state not in UNFINISHED:
            raise ChangeRequestError(f"Change request #{self.pk} is already {self.state}; nothing more can happen to it.")
        if not has_transition_perm(method, user):
            if not _may(method, user):
                raise PermissionDenied(refusal)
            raise ChangeRequestError(
                f"Change request #{self.pk} is {self.state}: it cannot be {_VERB[method.__name__]} now."
                + (" It must be approved first: every required team acknowledges." if method.__name__ == "_publish" else "")
            )

    def permitted_actions(self, user, my_team_ids: set[int]) -> dict[str, bool]:
        """What `user` may do here, for the page; computed without queries (reviews prefetched)."""
        reviews = list(self.reviews.all())
        open_ = self.state == ChangeRequestState.OPEN
        owner = self.owner_team_id in my_team_ids
        admin = is_governance_admin(user)
        objected = any(r.status == ReviewStatus.OBJECTED for r in reviews)
        return {
            "review": open_ and any(r.team_id in my_team_ids for r in reviews),
            "publish": self.state == ChangeRequestState.APPROVED and owner,
            "withdraw": self.is_unfinished and owner,
            "reject": self.is_unfinished and admin,
            "approve_over_silence": open_ and admin and self.escalated_at is not None and not objected,
            # Looking for a proof per team changes nobody's answer: the owner, a required team or an admin.
            "verify": self.is_unfinished and (owner or admin or any(r.team_id in my_team_ids for r in reviews)),
            "override_block": open_ and admin and any(
                r.status == ReviewStatus.OBJECTED and not r.block_overridden_at for r in reviews),
        }

    # --- public transitions ---

    def acknowledge(self, team: Team, *, by, comment: str = "", on_behalf: bool = False) -> TeamReview:
        """A member of a required team acknowledges for it; the last one approves the request.

        The request's author never acknowledges it, not even for a consumer team they also
        belong to: the change would approve itself. `on_behalf=True` is a governance admin's
        override, for a team that cannot answer: any required team, a comment saying why,
        never by the author, and the audit row says it was an override."""
        return self._respond(team, ReviewStatus.ACKNOWLEDGED, by=by, comment=comment, on_behalf=on_behalf)

    def object(self, team: Team, *, by, comment: str) -> TeamReview:
        """A member of a required team blocks, saying why; everybody sees it until the team
        answers otherwise or a governance admin overrides it (override_block)."""
        if not comment.strip():
            raise ChangeRequestError("An objection needs a comment saying what would break and what you need.")
        review = self._respond(team, ReviewStatus.OBJECTED, by=by, comment=comment)
        notifications.queue_blocked(self, team, review.comment)
        return review

    block = object

    def migrate_by(self, team: Team, *, by, date, comment: str = "") -> TeamReview:
        """A member of a required team answers "migrating by DATE": the request may publish,
        and the team stays on the old lane until DATE (the old lane's sunset may not come
        before it without an audited override). DATE is today or later."""
        if date is None:
            raise ChangeRequestError("Migrating needs a date by which the team moves to the new lane.")
        if date < timezone.localdate():
            raise ChangeRequestError(f"{date:%Y-%m-%d} is in the past: say by when {team.slug} will have moved.")
        return self._respond(team, ReviewStatus.MIGRATING, by=by, comment=comment, migrating_by=date)

    def override_block(self, team: Team, *, by, reason: str) -> TeamReview:
        """A governance admin overrides one team's block, saying why (audited; the blocking
        team sees the reason on the request). Once no block stands and every other team is
        ready, the request is approved."""
        if not is_governance_admin(by):
            raise PermissionDenied("Only a governance admin can override a team's block.")
        if not reason.strip():
            raise ChangeRequestError("Overriding a block needs a reason, shown to the blocking team.")
        with transaction.atomic():
            locked = self._locked()
            if locked.state != ChangeRequestState.OPEN:
                raise ChangeRequestError(f"Change request #{locked.pk} is {locked.state}; only an open request's blocks are overridden.")
            review = TeamReview.objects.select_for_update().filter(change_request=locked, team=team).first()
            if review is None or review.status != ReviewStatus.OBJECTED:
                raise ChangeRequestError(f"Team {team.slug} does not block change request #{locked.pk}.")
            if review.block_overridden_at:
                raise ChangeRequestError(f"Team {team.slug}'s block is already overridden.")
            review.block_overridden_at, review.block_override_reason = timezone.now(), reason.strip()
            review.block_overridden_by_label = actor_label(by)
            review.save(update_fields=["block_overridden_at", "block_override_reason", "block_overridden_by_label"])
            AuditEvent.record(by, ChangeRequestAction.BLOCK_OVERRIDDEN, locked,
                              before={"team": team.slug, "status": review.status, "block": review.comment},
                              after={"team": team.slug, "override": "a governance admin overrode the team's block",
                                     "reason": review.block_override_reason})
            if _blocks_overridden(locked):
                locked._approve_over_block()
                locked.save(update_fields=["state", "approved_at"])
                AuditEvent.record(None, ChangeRequestAction.APPROVED, locked, before={"state": "open"},
                                  after={"state": "approved", "because": "every block was overridden by a governance "
                                         "admin; every other team approved or is migrating"})
                _notify_owner_of_approval(locked)
            notifications.queue_block_overridden(locked, team, review.block_override_reason)
        self._refresh_from(locked)
        return review

    def is_author(self, user) -> bool:
        """Whether `user` is the person who opened this request."""
        person = person_of(user)
        return person is not None and self.opened_by_id is not None and person.pk == self.opened_by_id

    def _respond(self, team: Team, status: str, *, by, comment: str, on_behalf: bool = False,
                 migrating_by=None) -> TeamReview:
        if on_behalf:
            if not is_governance_admin(by):
                raise PermissionDenied("Only a governance admin can acknowledge on a team's behalf.")
            if self.is_author(by):
                raise PermissionDenied("You opened this request: another governance admin must acknowledge it on a team's behalf.")
            if not comment.strip():
                raise ChangeRequestError(f"Acknowledging on team {team.slug}'s behalf needs a comment saying why.")
        elif not acts_for(by, team):
            raise PermissionDenied(f"Only a member of team {team.slug} can answer for it.")
        elif status in READY and self.is_author(by):
            raise PermissionDenied(
                f"You opened this request, so you cannot acknowledge it for team {team.slug}: another member of "
                f"{team.slug} acknowledges, or a governance admin does on its behalf (recorded as an override).")
        with transaction.atomic():
            locked = self._locked()
            if locked.state != ChangeRequestState.OPEN:
                raise ChangeRequestError(
                    f"Change request #{locked.pk} is {locked.state}; teams answer only while it is open."
                )
            review = TeamReview.objects.select_for_update().filter(change_request=locked, team=team).first()
            if review is None:
                raise NotRequiredTeam(
                    f"Team {team.slug} is not among the teams this request waits for "
                    f"(they were fixed when it opened on {locked.opened_at:%Y-%m-%d %H:%M} UTC)."
                )
            before = {"team": team.slug, "status": review.status}
            if review.migrating_by:
                before["migrating_by"] = review.migrating_by.isoformat()
            review.status, review.comment = status, comment.strip()
            review.migrating_by = migrating_by if status == ReviewStatus.MIGRATING else None
            if status != ReviewStatus.OBJECTED:  # a block withdrawn takes its override with it
                review.block_overridden_at, review.block_override_reason, review.block_overridden_by_label = None, "", ""
            review.responded_by, review.responded_by_label, review.responded_at = person_of(by), actor_label(by), timezone.now()
            review.save(update_fields=["status", "comment", "migrating_by", "responded_by", "responded_by_label",
                                       "responded_at", "block_overridden_at", "block_override_reason",
                                       "block_overridden_by_label"])
            action = {ReviewStatus.ACKNOWLEDGED: ChangeRequestAction.ACKNOWLEDGED,
                      ReviewStatus.MIGRATING: ChangeRequestAction.MIGRATING}.get(status, ChangeRequestAction.OBJECTED)
            after = {"team": team.slug, "status": status, "comment": review.comment}
            if migrating_by is not None:
                after["migrating_by"] = migrating_by.isoformat()
            if on_behalf:
                after["override"] = "a governance admin acknowledged on the team's behalf"
            AuditEvent.record(by, action, locked, before=before, after=after)
            if status in READY and _every_team_acknowledged(locked):
                locked._approve_by_acknowledgement()
                locked.save(update_fields=["state", "approved_at"])
                AuditEvent.record(None, ChangeRequestAction.APPROVED, locked, before={"state": "open"},
                                  after={"state": "approved", "because": "every required team acknowledged"})
                _notify_owner_of_approval(locked)
        self._refresh_from(locked)
        return review

    def approve_without_acknowledgement(self, because: str = "no consumer team to wait for") -> None:
        """Approve a request that waits for no team (no consumer team is touched by it)."""
        with transaction.atomic():
            locked = self._locked()
            locked._approve_by_acknowledgement()
            locked.save(update_fields=["state", "approved_at"])
            AuditEvent.record(None, ChangeRequestAction.APPROVED, locked, before={"state": "open"},
                              after={"state": "approved", "because": because})
        self._refresh_from(locked)

    def approve_over_silence(self, *, by, comment: str = "") -> None:
        """After the deadline, a governance admin approves over teams that never answered.

        So that one silent team is not a veto; an objection still blocks (reject instead).
        """
        with transaction.atomic():
            locked = self._locked()
            locked._require(locked._approve_over_silence, by,
                            "Only a governance admin can approve a request over silent teams.")
            silent = list(locked.reviews.filter(status=ReviewStatus.PENDING).values_list("team__slug", flat=True))
            locked._approve_over_silence()
            locked.save(update_fields=["state", "approved_at"])
            AuditEvent.record(by, ChangeRequestAction.APPROVED, locked, before={"state": "open"},
                              after={"state": "approved", "because": "escalated; approved over silent teams",
                                     "silent_teams": silent, "comment": comment})
            _notify_owner_of_approval(locked)
        self._refresh_from(locked)

    def reject(self, *, by, comment: str) -> None:
        if not comment.strip():
            raise ChangeRequestError("A rejection needs a comment saying why.")
        self._close(self._reject, ChangeRequestAction.REJECTED, by=by, comment=comment,
                    refusal="Only a governance admin can reject a change request.")

    def withdraw(self, *, by, comment: str = "") -> None:
        self._close(self._withdraw, ChangeRequestAction.WITHDRAWN, by=by, comment=comment,
                    refusal=f"Only a member of the owner team ({self.owner_team.slug if self.owner_team_id else 'none'}) can withdraw this request.")

    def _close(self, method_of, action: str, *, by, comment: str, refusal: str) -> None:
        with transaction.atomic():
            locked = self._locked()
            method = getattr(locked, method_of.__name__)
            locked._require(method, by, refusal)
            before = locked.snapshot()
            method()
            locked.finished_by_label, locked.closing_comment = actor_label(by), comment.strip()
            locked.save(update_fields=["state", "finished_at", "finished_by_label", "closing_comment"])
            AuditEvent.record(by, action, locked, before=before, after={**locked.snapshot(), "comment": locked.closing_comment})
        self._refresh_from(locked)

    def mark_published(self, version, *, by) -> None:
        """Move an approved request to published once `version` is recorded (same transaction)."""
        locked = self._locked()
        locked._require(locked._publish, by,
                        f"Only a member of the owner team ({self.owner_team.slug if self.owner_team_id else 'none'}) can publish this request.")
        before = locked.snapshot()
        locked._publish()
        locked.published_version = version
        locked.finished_by_label = actor_label(by)
        locked.save(update_fields=["state", "finished_at", "published_version", "finished_by_label"])
        AuditEvent.record(by, ChangeRequestAction.PUBLISHED, locked, before=before,
                          after={**locked.snapshot(), "version_id": version.pk})
        self._refresh_from(locked)

    def publish(self, *, by) -> ContractVersion:
        """The owner team publishes an approved request: the version is recorded exactly as a
        compatible publish records it (contracts_app.publishing.record_version, upload after
        commit) and the request becomes published, in one transaction."""
        # Imported here: publishing pulls in the compatibility checker (jsonschema), which
        # the models have no need of at process start.
        from contracts_app.publishing import record_version

        with transaction.atomic():
            locked = self._locked()
            # Check the rule before recording anything, so a refused publish stores nothing.
            locked._require(locked._publish, by, f"Only a member of the owner team "
                            f"({locked.owner_team.slug if locked.owner_team_id else 'none'}) can publish this request.")
            version = record_version(locked.proposed_document, by=by)
            locked.mark_published(version, by=by)
        self._refresh_from(locked)
        return version


def _notify_owner_of_approval(request: ChangeRequest) -> None:
    notifications.queue_approved(request)


_VERB = {
    "_approve_over_silence": "approved over silent teams",
    "_publish": "published",
    "_reject": "rejected",
    "_withdraw": "withdrawn",
    "_approve_by_acknowledgement": "approved",
}


def _may(method, user) -> bool:
    """Whether `user` passes the transition's permission rule, whatever the state."""
    meta = method._django_fsm
    instance = method.__self__
    some_transition = next(iter(meta.transitions.values()))
    return some_transition.has_perm(instance, user)



class TeamReview(models.Model):
    """One required consumer team's answer to one request (frozen when the request opens)."""

    change_request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="reviews")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="change_request_reviews")
    status = models.CharField(max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)
    comment = models.TextField(blank=True)
    responded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    responded_by_label = models.CharField(max_length=200, blank=True)
    responded_at = models.DateTimeField(null=True, blank=True)
    migrating_by = models.DateField(null=True, blank=True,
                                    help_text="Migrating: the team stays on the old lane until this date.")
    block_overridden_at = models.DateTimeField(null=True, blank=True)
    block_overridden_by_label = models.CharField(max_length=200, blank=True, db_default="")
    block_override_reason = models.TextField(blank=True, db_default="",
                                             help_text="Why a governance admin overrode the block; shown to the team.")

    class Meta:
        ordering = ["team__name"]
        constraints = [models.UniqueConstraint(fields=["change_request", "team"], name="team_review_unique",
                                               violation_error_message="This team already answers this change request; its review is changed, not added again.")]

    def __str__(self) -> str:
        return f"{self.team} on #{self.change_request_id}: {self.status}"


class TeamAssessment(models.Model):
    """How the change touches one consumer team: affected (it must acknowledge) or not, why, and
    the evidence (its jobs, the columns they read, where that was seen). Never removed: a team
    that new evidence makes affected while the request is open is added, not swapped."""

    change_request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="assessments")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="+")
    affected = models.BooleanField()
    why = models.TextField()
    jobs = models.JSONField(default=list, blank=True, help_text="Its jobs' readings: job, dataset, reads, touched, evidence.")
    declared = models.JSONField(null=True, blank=True, help_text="The columns the team declared it reads.")
    verdict = models.JSONField(
        null=True, blank=True,
        help_text="The verdict's kind and proof: proven_broken (with the error), assumed_affected (with the path and "
                  "the reason), verified_safe, not_affected (with the reason).")
    assessed_at = models.DateTimeField(default=timezone.now)
    added_after_opening = models.BooleanField(default=False)

    class Meta:
        ordering = ["-affected", "team__name"]
        constraints = [models.UniqueConstraint(fields=["change_request", "team"], name="team_assessment_unique",
                                               violation_error_message="This team is already assessed for this change request.")]

    def __str__(self) -> str:
        return f"{self.team} on #{self.change_request_id}: {'affected' if self.affected else 'not affected'}"


class ReviewPolicy(models.Model):
    """A dataset's own review period for breaking changes (else CHANGE_REQUEST_DEADLINE)."""

    dataset = models.OneToOneField("registry.Dataset", on_delete=models.CASCADE, related_name="review_policy")
    review_period = models.DurationField(help_text="How long consumer teams have to answer, e.g. 7 days.")

    class Meta:
        verbose_name_plural = "review policies"

    def __str__(self) -> str:
        return f"{self.dataset}: {self.review_period}"
