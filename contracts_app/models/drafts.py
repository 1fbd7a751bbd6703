"""Drafts: contract versions not yet live, in their owner team's review queue.

A draft comes from a generator (import_dbt, draft_contracts, the "Draft a contract"
button) or from a person. The generator keys each of its drafts by `source` (a dbt
unique_id, an observed dataset), so running it again refreshes its own draft and
never a document a person has edited since (`edited_by`). A member of the owner
team approves it (audited); only then does the publish gate see it.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.utils import timezone

from contracts_app.models.contracts import document_checksum
from registry.models import (
    AuditEvent,
    RegistryError,
    Team,
    acts_for,
    is_governance_admin,
    person_of,
)


class DraftAction:
    CREATED = "draft.created"
    REFRESHED = "draft.refreshed"
    EDITED = "draft.edited"
    APPROVED = "draft.approved"
    DISCARDED = "draft.discarded"


class DraftState(models.TextChoices):
    PENDING = "pending", "waiting for review"
    # approved and handed to the publish gate, which published it at once ...
    PUBLISHED = "published", "approved and published"
    # ... or found it breaking: a change request now waits for the consumer teams
    CHANGE_REQUESTED = "change_requested", "approved; a change request waits for the consumer teams"
    DISCARDED = "discarded", "discarded"


class DraftOrigin(models.TextChoices):
    DBT = "dbt", "dbt artefacts (import_dbt)"
    OBSERVED = "observed", "an observed schema (draft_contracts)"
    PERSON = "person", "written by a person"


class DraftQuerySet(models.QuerySet):
    def pending(self) -> DraftQuerySet:
        return self.filter(state=DraftState.PENDING)

    def queued_for(self, team: Team) -> DraftQuerySet:
        """The owner team's review queue: its pending drafts, oldest first."""
        return self.pending().filter(owner_team=team).order_by("created_at", "pk")

    def reviewable_by(self, user) -> DraftQuerySet:
        if is_governance_admin(user):
            return self
        return self.filter(owner_team__in=Team.objects.of_user(user))


class Draft(models.Model):
    contract_name = models.CharField(max_length=300)
    version = models.CharField(max_length=50)
    schema_type = models.CharField(max_length=20)
    owner_team = models.ForeignKey("registry.Team", on_delete=models.PROTECT, related_name="contract_drafts")
    document = models.JSONField(help_text="The contract document, as the publish gate will see it.")
    checksum = models.CharField(max_length=64)
    generated_checksum = models.CharField(
        max_length=64, blank=True,
        help_text="The checksum of the document as its generator last wrote it; a re-run refreshes only that.")
    origin = models.CharField(max_length=16, choices=DraftOrigin.choices)
    source = models.CharField(max_length=500, blank=True,
                              help_text="What the generator drafted it from (a dbt unique_id, a dataset), its re-run key.")
    dataset = models.ForeignKey("registry.Dataset", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="contract_drafts")
    notes = models.JSONField(default=list, blank=True, help_text="What the generator could not carry over, each a line.")
    state = models.CharField(max_length=20, choices=DraftState.choices, default=DraftState.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    edited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+", help_text="The last person who edited the document.")
    edited_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.TextField(blank=True, help_text="What the publish gate said when the draft was approved.")
    change_request_id = models.IntegerField(null=True, blank=True)

    objects = DraftQuerySet.as_manager()

    class Meta:
        ordering = ["owner_team", "contract_name", "version"]
        constraints = [
            # One pending draft per contract version: a second generator run refreshes it.
            models.UniqueConstraint(fields=["contract_name", "version"], condition=models.Q(state="pending"),
                                    name="draft_one_pending_per_version",
                                    violation_error_message="This contract version already has a draft waiting for review."),
        ]
        indexes = [models.Index(fields=["owner_team", "state"], name="draft_team_state_idx"),
                   models.Index(fields=["origin", "source"], name="draft_origin_source_idx")]

    def __str__(self) -> str:
        return f"draft {self.contract_name} {self.version}"

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("draft-detail", args=[self.pk])

    @property
    def is_pending(self) -> bool:
        return self.state == DraftState.PENDING

    @property
    def edited_by_a_person(self) -> bool:
        return self.edited_at is not None and self.checksum != self.generated_checksum

    def can_be_reviewed_by(self, user) -> bool:
        """A member of the owner team (a person or its token) or a governance admin."""
        return is_governance_admin(user) or acts_for(user, self.owner_team)

    def require_reviewer(self, user, doing: str = "review") -> None:
        if not self.can_be_reviewed_by(user):
            raise PermissionDenied(f"Only a member of the owner team {self.owner_team.slug} (or a governance admin) "
                                   f"can {doing} {self}.")

    def edit(self, document: dict, *, by) -> bool:
        """A person replaces the document (the version and name may not change); returns
        whether it changed. From then on a generator's re-run leaves it alone."""
        self.require_reviewer(by, "edit")
        schema = document.get("schema") if isinstance(document, dict) else None
        if not isinstance(schema, dict) or schema.get("name") != self.contract_name or \
                str(schema.get("version")) != self.version:
            raise RegistryError(f"The edited document must keep schema.name {self.contract_name!r} and "
                                f"schema.version {self.version!r}; draft another version separately.")
        with transaction.atomic():
            locked = Draft.objects.select_for_update().get(pk=self.pk)
            if not locked.is_pending:
                raise RegistryError(f"{self} was {locked.get_state_display()}; only a pending draft can be edited.")
            checksum = document_checksum(document)
            if checksum == locked.checksum:
                return False
            before = {"checksum": locked.checksum}
            locked.document, locked.checksum = document, checksum
            locked.edited_by, locked.edited_at = person_of(by), timezone.now()
            locked.save(update_fields=["document", "checksum", "edited_by", "edited_at"])
            AuditEvent.record(by, DraftAction.EDITED, locked, before=before, after={"checksum": checksum})
        self.refresh_from_db()
        return True

    def discard(self, *, by) -> None:
        self.require_reviewer(by, "discard")
        with transaction.atomic():
            updated = Draft.objects.filter(pk=self.pk, state=DraftState.PENDING).update(
                state=DraftState.DISCARDED, reviewed_by=person_of(by), reviewed_at=timezone.now())
            if updated != 1:
                raise RegistryError(f"{self} is no longer pending.")
            AuditEvent.record(by, DraftAction.DISCARDED, self, before={"state": DraftState.PENDING},
                              after={"state": DraftState.DISCARDED})
        self.refresh_from_db()
