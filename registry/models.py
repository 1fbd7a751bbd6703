"""The core: teams, datasets, consumers, ownership, the audit log and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

from registry import auditseal
from registry.constants import (
    DEFAULT_TOKEN_SCOPES,
    AuditAction,
    CompatibilityMode,
    MembershipRole,
    TokenScope,
)
from registry.identifiers import identifier_problem, validate_identifier
from registry.jobs import DbtOwner, JobTeam, OwnershipRules, TeamAlias  # noqa: F401 - the core's models, registered here
from registry.querysets import ApiTokenQuerySet, DatasetQuerySet, TeamQuerySet
from registry.usage import ColumnRead, InputSchema, NamespaceTeam  # noqa: F401 - the core's models, registered here


class RegistryError(ValidationError):
    """A domain rule said no. The message says which rule and what to do."""


class DatasetUnowned(RegistryError):
    pass


class AlreadyOwned(RegistryError):
    pass


class OwnerCannotConsume(RegistryError):
    """The owner team asked to consume its own dataset: it is asked about nothing it changes."""


class InUse(RegistryError):
    """A row others depend on: deleting it would drop their dependency without a word."""


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True, validators=[validate_identifier])
    description = models.TextField(blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children",
                               help_text="The team this one belongs to (a department, a domain), if any.")
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def deletion_refusal(self) -> str:
        """Why this team cannot be deleted, or "". Its consumer registrations would go
        with it (the datasets it owns are protected by the database already)."""
        consumed = sorted(str(d) for d in Dataset.objects.filter(consumers__team=self))
        if consumed:
            return (f"Team {self.slug} cannot be deleted: it is a registered consumer of {', '.join(consumed)}; "
                    "unregister it from those datasets first.")
        return ""

    def map_job_namespace(self, namespace: str, *, by) -> NamespaceTeam:
        """Say that the jobs of an OpenLineage job namespace are this team's (their readings are
        then attributed to it). A namespace another team holds moves only by that team or an admin."""
        namespace = namespace.strip()
        if not namespace:
            raise RegistryError("Name the job namespace, e.g. \"analytics-airflow\".")
        if identifier_problem(namespace):
            raise RegistryError(f"The job namespace {identifier_problem(namespace)}.")
        if not (acts_for(by, self) or is_governance_admin(by)):
            raise PermissionDenied(f"Only a member of team {self.slug} can map a job namespace to it.")
        with transaction.atomic():
            existing = NamespaceTeam.objects.select_for_update().select_related("team").filter(namespace=namespace).first()
            if existing is not None and existing.team_id != self.pk and not (
                    acts_for(by, existing.team) or is_governance_admin(by)):
                raise PermissionDenied(f"Job namespace {namespace} belongs to team {existing.team.slug}; "
                                       f"only that team or an admin can move it.")
            if existing is not None and existing.team_id == self.pk:
                return existing
            before = {"namespace": namespace, "team": existing.team.slug} if existing else None
            mapping, _ = NamespaceTeam.objects.update_or_create(namespace=namespace, defaults={"team": self})
            AuditEvent.record(by, AuditAction.NAMESPACE_MAPPED, self, before=before,
                              after={"namespace": namespace, "team": self.slug})
        return mapping

    def unmap_job_namespace(self, namespace: str, *, by) -> bool:
        if not (acts_for(by, self) or is_governance_admin(by)):
            raise PermissionDenied(f"Only a member of team {self.slug} can unmap its job namespaces.")
        with transaction.atomic():
            deleted, _ = NamespaceTeam.objects.filter(namespace=namespace, team=self).delete()
            if deleted:
                AuditEvent.record(by, AuditAction.NAMESPACE_UNMAPPED, self,
                                  before={"namespace": namespace, "team": self.slug}, after=None)
        return bool(deleted)


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=MembershipRole.choices, default=MembershipRole.MEMBER)
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="membership_unique",
                                               violation_error_message="This person is already a member of this team.")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team}"


def acts_for(user, team: Team) -> bool:
    """Whether `user` (a person or a team token) may act on behalf of `team`."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    team_ids = getattr(user, "principal_team_ids", None)
    if team_ids is not None:
        return team.pk in team_ids
    return Membership.objects.filter(team=team, user_id=user.pk).exists()


def is_governance_admin(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and (user.is_superuser or user.is_staff))


class Dataset(models.Model):
    namespace = models.CharField(max_length=500, validators=[validate_identifier])
    name = models.CharField(max_length=500, validators=[validate_identifier])
    description = models.TextField(blank=True)
    owner_team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.PROTECT, related_name="datasets")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="owned_datasets"
    )
    compatibility_mode = models.CharField(
        max_length=32, choices=CompatibilityMode.choices, default=CompatibilityMode.BACKWARD
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="dataset_namespace_name_unique",
                                               violation_error_message="A dataset with this namespace and name is already registered.")]
        indexes = [models.Index(fields=["owner_team"], name="dataset_owner_team_idx")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("dataset-detail", args=[self.pk])

    @property
    def is_owned(self) -> bool:
        return self.owner_team_id is not None

    def clean(self) -> None:
        if self.owner_id and not self.owner_team_id:
            raise ValidationError({"owner": "An owner person needs an owner team."})
        if self.owner_id and self.owner_team_id and not Membership.objects.filter(
            team_id=self.owner_team_id, user_id=self.owner_id
        ).exists():
            raise ValidationError({"owner": "The owner must be a member of the owner team."})

    def _ownership_snapshot(self) -> dict[str, Any]:
        return {
            "owner_team": self.owner_team.slug if self.owner_team_id else None,
            "owner": self.owner.get_username() if self.owner_id else None,
        }

    def _check_ownerperson_of(self, team: Team, owner) -> None:
        if not Membership.objects.filter(team=team, user_id=owner.pk).exists():
            raise RegistryError(f"{owner.get_username()} is not a member of team {team.slug}; the owner must belong to the owning team.")

    def claim(self, team: Team, *, owner, by) -> None:
        """A member of `team` takes an unowned dataset for it, naming the owner person."""
        if not acts_for(by, team):
            raise PermissionDenied(f"Only a member of team {team.slug} can claim a dataset for it.")
        self._check_ownerperson_of(team, owner)
        with transaction.atomic():
            locked = Dataset.objects.select_for_update().get(pk=self.pk)
            if locked.owner_team_id is not None:
                raise AlreadyOwned(
                    f"{self} is already owned by team {locked.owner_team.slug}; changing an owner is for admins."
                )
            before = locked._ownership_snapshot()
            locked.owner_team, locked.owner = team, owner
            locked.save(update_fields=["owner_team", "owner"])
            AuditEvent.record(by, AuditAction.DATASET_CLAIMED, locked, before=before, after=locked._ownership_snapshot())
        self.owner_team, self.owner = team, owner

    def assign_owner(self, team: Team | None, *, owner=None, by, reason: str = "") -> None:
        """An admin sets or changes the owner team and person (None makes it unowned);
        the reason given, if any, is kept in the audit row."""
        if not is_governance_admin(by):
            raise PermissionDenied("Changing a dataset's owner is for admins only.")
        if team is None and owner is not None:
            raise RegistryError("An owner person needs an owner team.")
        if team is not None and owner is not None:
            self._check_ownerperson_of(team, owner)
        with transaction.atomic():
            locked = Dataset.objects.select_for_update().get(pk=self.pk)
            before = locked._ownership_snapshot()
            locked.owner_team, locked.owner = team, owner
            locked.save(update_fields=["owner_team", "owner"])
            after = locked._ownership_snapshot()
            if reason.strip():
                after["reason"] = reason.strip()
            AuditEvent.record(by, AuditAction.DATASET_OWNER_CHANGED, locked, before=before, after=after)
        self.owner_team, self.owner = team, owner

    def register_consumer(self, team: Team, *, by, columns: list[str] | None = None) -> Consumer:
        """Register `team` as a consumer; `columns`, if given, are the columns it declares it reads
        (declaring again on an existing registration replaces them, audited)."""
        if not acts_for(by, team):
            raise PermissionDenied(f"Only a member of team {team.slug} can register it as a consumer.")
        with transaction.atomic():
            locked = Dataset.objects.select_for_update().get(pk=self.pk)
            if locked.owner_team_id is None:
                raise DatasetUnowned(
                    f"{self} has no owner yet; a team must claim it before anyone can register as its consumer."
                )
            if locked.owner_team_id == team.pk:
                raise OwnerCannotConsume(
                    f"Team {team.slug} owns {self}: an owner team does not register as a consumer of its own "
                    f"dataset (its changes never wait for itself). Register another of your teams instead."
                )
            declared = normalized_columns(columns)
            consumer, created = Consumer.objects.get_or_create(
                dataset=locked, team=team, defaults={"registered_by": person_of(by), "declared_columns": declared})
            if created:
                AuditEvent.record(by, AuditAction.CONSUMER_REGISTERED, locked, before=None,
                                  after={"team": team.slug, "declared_columns": declared})
            elif columns is not None and declared != consumer.declared_columns:
                before = {"team": team.slug, "declared_columns": consumer.declared_columns}
                consumer.declared_columns = declared
                consumer.save(update_fields=["declared_columns"])
                AuditEvent.record(by, AuditAction.CONSUMER_COLUMNS_DECLARED, locked, before=before,
                                  after={"team": team.slug, "declared_columns": declared})
        return consumer

    def unregister_consumer(self, team: Team, *, by) -> bool:
        if not (acts_for(by, team) or is_governance_admin(by)):
            raise PermissionDenied(f"Only a member of team {team.slug} can unregister it.")
        with transaction.atomic():
            deleted, _ = Consumer.objects.filter(dataset=self, team=team).delete()
            if deleted:
                AuditEvent.record(by, AuditAction.CONSUMER_UNREGISTERED, self, before={"team": team.slug}, after=None)
        return bool(deleted)

    def consumer_teams(self) -> models.QuerySet:
        return Team.objects.filter(consumptions__dataset=self)

    def deletion_refusal(self) -> str:
        """Why this dataset cannot be deleted, or "": consumer teams depend on it."""
        teams = sorted(self.consumers.values_list("team__slug", flat=True))
        if teams:
            return (f"Dataset {self} cannot be deleted: consumer teams depend on it ({', '.join(teams)}); "
                    "they unregister first.")
        return ""

    def delete_unused(self, *, by) -> None:
        """Delete this dataset, audited, unless consumer teams depend on it (InUse).
        Its lineage edges, freshness and contract binding go with it; the audit row
        names the owner and the contract it was bound to."""
        with transaction.atomic():
            locked = Dataset.objects.select_for_update(of=("self",)).select_related("owner_team", "owner").get(pk=self.pk)
            refusal = locked.deletion_refusal()
            if refusal:
                raise InUse(refusal)
            binding = getattr(locked, "contract_binding", None)  # the contracts app's row, if installed
            AuditEvent.record(by, AuditAction.DATASET_DELETED, locked, before={
                "namespace": locked.namespace, "name": locked.name, **locked._ownership_snapshot(),
                "contract": str(binding.contract) if binding is not None else None,
            }, after=None)
            locked.delete()


class Consumer(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="consumers")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="consumptions")
    registered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    registered_at = models.DateTimeField(default=timezone.now)
    declared_columns = models.JSONField(
        null=True, blank=True,
        help_text="The columns the team says it reads (a list of names); empty: not declared.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "team"], name="consumer_dataset_team_unique",
                                               violation_error_message="This team is already a registered consumer of this dataset.")]

    def __str__(self) -> str:
        return f"{self.team} consumes {self.dataset}"


def normalized_columns(columns: list[str] | None) -> list[str] | None:
    """Declared column names, stripped, without blanks or repeats, sorted; None stays None."""
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise RegistryError("Declared columns are a list of column names, e.g. [\"order_id\", \"amount\"].")
    return sorted({c.strip() for c in columns if c.strip()})


def person_of(user):
    """The Django user behind an actor, or None for a team token, the system or anonymous."""
    if user is None or getattr(user, "principal_team_ids", None) is not None:
        return None
    return user if getattr(user, "is_authenticated", False) else None


class AuditEvent(models.Model):
    """Append-only: the database refuses UPDATE and DELETE (and TRUNCATE on PostgreSQL)."""

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False)
    actor_label = models.CharField(max_length=200, help_text="Who acted, kept even if the user is later removed.")
    action = models.CharField(max_length=100)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=100)
    object_repr = models.CharField(max_length=500)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # On PostgreSQL a trigger sets it to the database's now() on insert (registry.auditseal).
    at = models.DateTimeField(default=timezone.now, db_index=True)
    # NULL: written before rows were sealed. (Nullable, SQLite adds the column in place and
    # keeps the append-only triggers; a NOT NULL one would rebuild the table without them.)
    seal = models.CharField(max_length=64, null=True, blank=True, editable=False,  # noqa: DJ001
                            help_text="The app's HMAC of the row (registry.auditseal); a row without a valid one "
                                      "was not written by the app.")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object_idx")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_label} {self.action} {self.object_repr}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise RegistryError("Audit events are append-only.")
        if not self.seal:
            self.seal = auditseal.seal(self.sealed_values())
        super().save(*args, **kwargs)

    def sealed_values(self) -> dict:
        return {name: getattr(self, name) for name in auditseal.SEALED_FIELDS}

    @property
    def is_sealed(self) -> bool:
        """Whether the app wrote this row as it reads now (its seal matches)."""
        return auditseal.is_sealed(self.sealed_values(), self.seal)

    @classmethod
    def record(cls, actor, action: str, obj: models.Model, *, before: Any = None, after: Any = None) -> AuditEvent:
        """Write one audit row. Call inside the transaction that makes the change."""
        return cls.objects.create(**cls.fields_for(actor, action, obj, before=before, after=after))

    @classmethod
    def fields_for(cls, actor, action: str, obj: models.Model, *, before: Any = None, after: Any = None) -> dict:
        """The column values of one row, sealed, for callers that bulk-insert many."""
        person = person_of(actor)
        fields = {
            "actor_label": actor_label(actor),
            "action": action,
            "object_type": audit_type(obj),
            "object_id": str(obj.pk),
            "object_repr": str(obj)[:500],
            "before": before,
            "after": after,
        }
        fields["seal"] = auditseal.seal({**fields, "actor_id": person.pk if person is not None else None})
        return {"actor": person, **fields}


def audit_type(obj: models.Model | type[models.Model]) -> str:
    """The type an audit row names: the model's label, unless the model keeps an older one."""
    return getattr(obj, "audit_type", None) or obj._meta.label_lower


def actor_label(actor) -> str:
    if actor is None:
        return "system"
    if isinstance(actor, str):
        return actor
    if getattr(actor, "principal_team_ids", None) is not None:
        return str(actor)
    if getattr(actor, "is_authenticated", False):
        return actor.get_username()
    return "anonymous"


TOKEN_PREFIX = "dr_"


def parse_scopes(text: str) -> frozenset[str]:
    return frozenset(text.split())


def clean_scopes(scopes) -> tuple[str, ...]:
    """Scopes as stored: known ones only, in TokenScope's order, at least one."""
    wanted = set(scopes)
    unknown = sorted(wanted - set(TokenScope.values))
    if unknown:
        raise RegistryError(f"Unknown token scope {', '.join(map(repr, unknown))}; the scopes are {', '.join(TokenScope.values)}.")
    if not wanted:
        raise RegistryError(f"A token needs at least one scope ({', '.join(TokenScope.values)}).")
    return tuple(s for s in TokenScope.values if s in wanted)


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for a machine. Only a SHA-256 of the secret is kept; the
    secret is shown once, when the token is created."""

    name = models.CharField(max_length=100)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    key_prefix = models.CharField(max_length=16, editable=False, help_text="The first characters, to recognise a token.")
    scopes = models.CharField(max_length=200, default=" ".join(DEFAULT_TOKEN_SCOPES),
                              help_text="What the token may do, space-separated: " + ", ".join(TokenScope.values) + ".")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, team__isnull=True) | models.Q(user__isnull=True, team__isnull=False),
                name="api_token_owned_by_user_or_team",
                violation_error_message="A token belongs to exactly one of a user or a team: choose one and leave the other empty.",
            )
        ]

    def __str__(self) -> str:
        owner = self.user.get_username() if self.user_id else f"team {self.team.slug}" if self.team_id else "?"
        return f"{self.name} ({owner})"

    @property
    def scope_set(self) -> frozenset[str]:
        return parse_scopes(self.scopes)

    def has_scope(self, scope: str) -> bool:
        return scope in self.scope_set

    @classmethod
    def issue(cls, name: str, *, user=None, team: Team | None = None, by=None,
              scopes: list[str] | tuple[str, ...] | None = None) -> tuple[ApiToken, str]:
        """Create a token and return it with its secret, which is never stored.
        `scopes` default to DEFAULT_TOKEN_SCOPES. lineage:write:any (a
        platform-wide ingest token) is for a governance admin to grant, or an
        operator's management command (`by` None)."""
        if (user is None) == (team is None):
            raise RegistryError("A token is owned by exactly one of a user or a team.")
        chosen = clean_scopes(DEFAULT_TOKEN_SCOPES if scopes is None else scopes)
        if TokenScope.LINEAGE_WRITE_ANY in chosen and by is not None and not is_governance_admin(by):
            raise PermissionDenied("Only a governance admin may create a platform-wide ingest token (lineage:write:any).")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with transaction.atomic():
            token = cls.objects.create(
                name=name, user=user, team=team, key_hash=hash_token(secret), key_prefix=secret[:10],
                scopes=" ".join(chosen),
            )
            AuditEvent.record(by, AuditAction.TOKEN_CREATED, token,
                              after={"name": name, "prefix": token.key_prefix, "scopes": list(chosen)})
        return token, secret

    def revoke(self, *, by=None) -> None:
        with transaction.atomic():
            updated = ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
            if updated:
                AuditEvent.record(by, AuditAction.TOKEN_REVOKED, self, before={"revoked": False}, after={"revoked": True})
        self.refresh_from_db(fields=["revoked_at"])
