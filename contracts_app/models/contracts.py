"""Contracts and their published versions.

A ContractVersion is immutable once published: the same content again is a
no-op, different content under the same version is refused, and a version
that a bound dataset's consumers depend on is never deleted.

A contract carries its own compatibility mode (FULL for new contracts) and the
datasets bound to it; both are changed by its owner team or a governance admin,
through `set_mode`, `bind` and `unbind`, each audited.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.utils import timezone
from registry_client.versions import latest_release

from registry.constants import CompatibilityMode
from registry.models import (
    AuditEvent,
    Dataset,
    RegistryError,
    Team,
    acts_for,
    audit_type,
    is_governance_admin,
)


class AuditAction:
    CONTRACT_CREATED = "contract.created"
    VERSION_PUBLISHED = "contract.version_published"
    VERSION_UPLOADED = "contract.version_uploaded"
    VERSION_UPLOAD_FAILED = "contract.version_upload_failed"
    VERSION_DELETED = "contract.version_deleted"
    # A version naming another owner team hands the contract over (its owner team or an admin).
    OWNER_CHANGED = "contract.owner_changed"
    SPEC_PUBLISHED = "contract.spec_published"
    SPEC_DELETED = "contract.spec_deleted"
    DATASET_BOUND = "contract.dataset_bound"
    DATASET_UNBOUND = "contract.dataset_unbound"
    MODE_CHANGED = "contract.mode_changed"
    # A mode that lets through a change the old one refused, while consumer teams
    # depend on the contract: their protection shrank, so it gets a name of its own.
    MODE_WEAKENED = "contract.mode_weakened"
    # The same action lineage records for a dataset it meets first: a dataset
    # named by a contract document before anything wrote it is created unowned.
    DATASET_FIRST_SEEN = "dataset.first_seen"


class ContentChanged(RegistryError):
    """Different content under a version that is already published."""


class VersionInUse(RegistryError):
    """A version that consumers of a bound dataset still depend on."""


class DatasetBoundElsewhere(RegistryError):
    """A contract document names a dataset that another contract describes."""


class UnknownOwner(RegistryError):
    """A contract document's `schema.owner` names no team."""


def owner_named_in(document: dict) -> Team:
    """The team a contract document's `schema.owner` names, by slug.

    Raises UnknownOwner when it names none: a misspelt owner must never clear a
    contract's owner team, since a contract without one would be open to
    whichever team publishes next."""
    schema = document.get("schema") if isinstance(document, dict) else None
    schema = schema if isinstance(schema, dict) else {}
    slug = str(schema.get("owner") or "").strip()
    where = f"{schema.get('name', '<unnamed>')} {schema.get('version', '?')}: schema.owner"
    team = Team.objects.filter(slug=slug).first() if slug else None
    if team is not None:
        return team
    if not slug:
        raise UnknownOwner(f"{where} is empty; name the owner team by its slug.")
    close = difflib.get_close_matches(slug, list(Team.objects.values_list("slug", flat=True)), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "name an existing team by its slug, or create the team first."
    raise UnknownOwner(f"{where} {slug!r} is no team here; {hint}")


def publisher_refusal(contract: Contract | None, name: str, named: Team | None, by) -> str:
    """Why `by` may not publish a version of contract `name` whose document names
    `named` as owner, or "" when it may. An unknown owner (`named` None) is the
    gate's to refuse (UnknownOwner), not this rule's.

    1. the system (None: an operator's command) and a governance admin may;
    2. the first version: the publisher acts for the team its document names;
    3. a later version: the publisher acts for the contract's current owner team,
       so only that team (or an admin) hands the contract to another team;
    4. a contract without an owner team (its team was deleted): an admin only,
       or the next publisher could take it."""
    if by is None or is_governance_admin(by):
        return ""
    if contract is None:
        if named is None or acts_for(by, named):
            return ""
        return (f"Only a member of the owner team ({named.slug}) named in the document can publish "
                f"the first version of {name}.")
    if contract.owner_team_id is None:
        return f"{name} has no owner team; only a governance admin can publish a version of it."
    if acts_for(by, contract.owner_team):
        return ""
    hand_over = named is not None and named.pk != contract.owner_team_id
    return (f"Only a member of the contract's owner team ({contract.owner_team.slug}) can publish a version of "
            f"{name}" + (f"; naming {named.slug} as its owner is a hand-over only that team or a governance "
                         "admin can make." if hand_over else "."))


def datasets_named_in(document: dict) -> list[tuple[str, str]]:
    """The (namespace, name) of every dataset a contract document's `datasets:` section names."""
    return [(str(d["namespace"]), str(d["name"])) for d in (document.get("datasets") or [])]


# The parts of event and api documents that are JSON Schemas of their fields.
SCHEMA_PARTS = ("payload", "request", "response")


def field_names(document: dict) -> list[str]:
    """The names of a contract document's fields, as the catalogue searches them: a
    dataframe's columns; an event's or api's properties, nested ones too (callbacks
    included), each once, in document order."""
    names: dict[str, None] = {}

    def walk(schema) -> None:
        if isinstance(schema, list):
            for item in schema:
                walk(item)
            return
        if not isinstance(schema, dict):
            return
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, spec in properties.items():
                names.setdefault(str(name), None)
                walk(spec)
        for key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "$defs", "definitions"):
            part = schema.get(key)
            walk(list(part.values()) if key in ("$defs", "definitions") and isinstance(part, dict) else part)

    for column in document.get("columns") or []:
        if isinstance(column, dict) and "name" in column:
            names.setdefault(str(column["name"]), None)
    for part in SCHEMA_PARTS:
        walk(document.get(part))
    callbacks = document.get("callbacks")
    if isinstance(callbacks, dict):
        walk(list(callbacks.values()))
    return list(names)


def document_checksum(document: dict) -> str:
    """SHA-256 of the document's canonical JSON form (keys sorted), so key order
    and YAML formatting never make identical content look different."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def mode_requirements(mode: str) -> tuple[int, int]:
    """What a mode requires, as (backward, forward), each 0 (not checked), 1 (against the
    latest version) or 2 (against every earlier version: the TRANSITIVE modes)."""
    if mode not in CompatibilityMode.values:
        raise RegistryError(f"Unknown compatibility mode {mode!r}; choose one of {', '.join(CompatibilityMode.values)}.")
    base, _, transitive = mode.partition("_")
    depth = 2 if transitive else 1
    return (depth if base in ("BACKWARD", "FULL") else 0, depth if base in ("FORWARD", "FULL") else 0)


def is_weaker(new: str, old: str) -> bool:
    """Whether moving from mode `old` to `new` lets through some change `old` refused:
    it drops a direction, or checks a direction against fewer versions. BACKWARD ->
    FORWARD is weaker too (backward breaks now pass), though it adds a direction."""
    (nb, nf), (ob, of) = mode_requirements(new), mode_requirements(old)
    return nb < ob or nf < of


class SchemaType(models.TextChoices):
    DATAFRAME = "dataframe", "DataFrame"
    EVENT = "event", "Event"
    API = "api", "API"


class ContractQuerySet(models.QuerySet):
    def manageable_by(self, user) -> ContractQuerySet:
        """Contracts whose mode and bindings `user` may change: its teams' contracts, or all for an admin."""
        if is_governance_admin(user):
            return self
        return self.filter(owner_team__in=Team.objects.of_user(user))


class Contract(models.Model):
    name = models.CharField(max_length=300, unique=True, help_text="Dotted: domain.sub1.sub2.entity")
    domain = models.CharField(max_length=100)
    subdomains = models.JSONField(default=list, blank=True)
    entity = models.CharField(max_length=100)
    schema_type = models.CharField(max_length=20, choices=SchemaType.choices)
    meta = models.JSONField(default=dict, blank=True)
    owner_team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="contracts")
    owner_label = models.CharField(max_length=200, blank=True, help_text="The `owner` written in the contract document.")
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    datasets = models.ManyToManyField("registry.Dataset", through="DatasetBinding", related_name="contracts", blank=True)
    compatibility_mode = models.CharField(
        max_length=32, choices=CompatibilityMode.choices, default=CompatibilityMode.FULL,
        help_text="What the publish gate checks a new version against (bound datasets may require more). "
                  "FULL: producers change first and history is replayed, so both directions count.",
    )

    objects = ContractQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        # A domain's contracts by name: the catalogue's pages under a domain seek here.
        indexes = [models.Index(fields=["domain", "name"], name="contract_domain_name_idx")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("contract-detail", args=[self.name])

    @property
    def path_parts(self) -> list[str]:
        return [self.domain, *self.subdomains, self.entity]

    # --- who may change it -------------------------------------------------------

    def can_be_managed_by(self, user) -> bool:
        """A member of the owner team (a person or a team token), a governance admin, or
        the system itself (None: an operator's command such as publish_contracts)."""
        if user is None:
            return True
        if is_governance_admin(user):
            return True
        return self.owner_team_id is not None and acts_for(user, self.owner_team)

    def _require_manager(self, by, doing: str) -> None:
        if self.can_be_managed_by(by):
            return
        if self.owner_team_id is None:
            named = f" (its document names {self.owner_label!r}, which is no team here)" if self.owner_label else ""
            raise PermissionDenied(f"{self.name} has no owner team{named}; only a governance admin can {doing} {self.name}.")
        raise PermissionDenied(
            f"Only a member of the owner team {self.owner_team.slug} or a governance admin can {doing} {self.name}."
        )

    # --- the compatibility mode --------------------------------------------------

    def set_mode(self, mode: str, *, by) -> bool:
        """Set the compatibility mode; returns whether it changed.

        A mode that lets more changes through (see is_weaker) while consumer teams
        depend on the contract is audited as MODE_WEAKENED, naming those teams, so
        the contract page can say who lowered whose protection, and when."""
        mode_requirements(mode)  # refuses an unknown mode, listing the valid ones
        self._require_manager(by, "change the compatibility mode of")
        with transaction.atomic():
            locked = Contract.objects.select_for_update().get(pk=self.pk)
            before = locked.compatibility_mode
            if before == mode:
                return False
            teams = sorted(Team.objects.filter(consumptions__dataset__contract_binding__contract=locked)
                           .values_list("slug", flat=True).distinct())
            weakened = is_weaker(mode, before) and bool(teams)
            locked.compatibility_mode = mode
            locked.save(update_fields=["compatibility_mode"])
            after: dict[str, Any] = {"compatibility_mode": mode}
            if weakened:
                after["consumer_teams"] = teams
            AuditEvent.record(by, AuditAction.MODE_WEAKENED if weakened else AuditAction.MODE_CHANGED, locked,
                              before={"compatibility_mode": before}, after=after)
        self.compatibility_mode = mode
        return True

    def weakenings(self) -> models.QuerySet:
        """The audit rows of every weakening of this contract's mode, newest first."""
        return AuditEvent.objects.filter(
            object_type=audit_type(Contract), object_id=str(self.pk), action=AuditAction.MODE_WEAKENED,
        ).order_by("-at", "-id")

    # --- bindings ------------------------------------------------------------------

    def bind(self, dataset, *, by) -> DatasetBinding:
        """Bind `dataset` to this contract; binding it again is a no-op.

        A dataset bound to another contract moves here only when `by` may also manage
        that contract: otherwise one team could take another team's dataset out from
        under its contract (and its change requests)."""
        self._require_manager(by, "bind datasets to")
        with transaction.atomic():
            existing = DatasetBinding.objects.select_for_update().filter(dataset=dataset).select_related("contract").first()
            if existing is not None and existing.contract_id == self.pk:
                return existing
            before = None
            if existing is not None:
                if not existing.contract.can_be_managed_by(by):
                    raise PermissionDenied(
                        f"{dataset} is bound to {existing.contract.name}; only its owner team or a governance "
                        f"admin can move it to {self.name} (or unbind it there first)."
                    )
                before = {"contract": existing.contract.name}
            binding, _ = DatasetBinding.objects.update_or_create(dataset=dataset, defaults={"contract": self, "bound_at": timezone.now()})
            AuditEvent.record(by, AuditAction.DATASET_BOUND, dataset, before=before, after={"contract": self.name})
        return binding

    def bind_named_datasets(self, document: dict, *, by) -> list[DatasetBinding]:
        """Bind every dataset the document's `datasets:` section names, creating the
        ones never seen before as unowned datasets (audited as lineage audits a
        dataset it meets first). A document never takes a dataset from another
        contract: that is refused (DatasetBoundElsewhere) and nothing is bound.
        Call inside the transaction that records the version."""
        named = datasets_named_in(document)
        if not named:
            return []
        clash = self.bound_elsewhere(named)
        if clash:
            raise DatasetBoundElsewhere(clash)
        version = document["schema"]["version"]
        bindings = []
        for namespace, name in named:
            dataset, created = Dataset.objects.get_or_create(namespace=namespace, name=name)
            if created:
                AuditEvent.record(by, AuditAction.DATASET_FIRST_SEEN, dataset, after={
                    "namespace": namespace, "name": name, "owner_team": None, "named_by": f"{self.name} {version}",
                })
            bindings.append(self.bind(dataset, by=by))
        return bindings

    def bound_elsewhere(self, named: list[tuple[str, str]]) -> str:
        """A sentence naming the first of `named` that another contract is bound to, or ""."""
        if not named:
            return ""
        wanted = models.Q()
        for namespace, name in named:
            wanted |= models.Q(dataset__namespace=namespace, dataset__name=name)
        other = (DatasetBinding.objects.filter(wanted).exclude(contract__name=self.name)
                 .select_related("dataset", "contract").order_by("dataset__namespace", "dataset__name").first())
        if other is None:
            return ""
        return (f"the document names dataset {other.dataset}, which is bound to {other.contract.name}; "
                f"unbind it there (its page or DELETE /api/contracts/{other.contract.name}/bindings/"
                f"{other.dataset.pk}/) or leave it out of the document")

    def unbind(self, dataset, *, by) -> bool:
        """Unbind `dataset` from this contract; returns whether it was bound. The audit row
        names the consumer teams, since no change request waits for them any more."""
        self._require_manager(by, "unbind datasets from")
        with transaction.atomic():
            binding = DatasetBinding.objects.select_for_update().filter(dataset=dataset, contract=self).first()
            if binding is None:
                return False
            teams = sorted(dataset.consumers.values_list("team__slug", flat=True))
            binding.delete()
            AuditEvent.record(by, AuditAction.DATASET_UNBOUND, dataset,
                              before={"contract": self.name, "consumer_teams": teams}, after=None)
        return True

    def has_dependent_consumers(self) -> bool:
        return self.bindings.filter(dataset__consumers__isnull=False).exists()

    def latest_version(self) -> ContractVersion | None:
        """The latest published version, by the client's one rule (releases only, semantic order)."""
        return latest_release(self.versions.all(), key=version_of)


class ContractVersionQuerySet(models.QuerySet):
    def in_store(self) -> ContractVersionQuerySet:
        """Versions whose object and index entry are in the contract store."""
        return self.filter(uploaded_at__isnull=False)


class ContractVersion(models.Model):
    contract = models.ForeignKey(Contract, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=50)
    document = models.JSONField(help_text="The canonical contract document, as exported.")
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the document's canonical JSON (keys sorted; see document_checksum).")
    published_at = models.DateTimeField(default=timezone.now)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    store_key = models.CharField(max_length=500, blank=True, help_text="Where the YAML lives in the contract store.")
    uploaded_at = models.DateTimeField(null=True, blank=True, help_text="Set once the object and index are in the store.")
    yaml_text = models.TextField(blank=True, help_text="The YAML as published (the database keeps JSON without key order).")
    upload_error = models.TextField(blank=True, help_text="The last upload failure, cleared by a successful upload.")

    objects = ContractVersionQuerySet.as_manager()

    class Meta:
        ordering = ["contract__name", "published_at"]
        constraints = [models.UniqueConstraint(fields=["contract", "version"], name="contract_version_unique",
                                               violation_error_message="This contract already has a version with this number; publish it under a new version number.")]

    def __str__(self) -> str:
        return f"{self.contract.name} {self.version}"

    @property
    def is_in_store(self) -> bool:
        return self.uploaded_at is not None

    def same_content_as(self, document: dict) -> bool:
        return self.checksum == document_checksum(document)

    def deletion_refusal(self) -> str:
        """Why this version cannot be deleted, or "": consumers of a dataset bound to
        its contract depend on it, or integration specs point at it."""
        if self.contract.has_dependent_consumers():
            return (f"{self} cannot be deleted: datasets bound to {self.contract.name} have consumers "
                    "that depend on its published versions.")
        if self.integration_specs.exists():
            return f"{self} cannot be deleted: integration specs point at it; delete them first."
        return ""

    def delete_unused(self, *, by) -> None:
        """Delete this version, audited, unless something depends on it (VersionInUse).
        Call inside a transaction; contracts_app.publishing.delete_version also
        rewrites the store's index after commit (the published object stays in the
        store's history, out of the index)."""
        with transaction.atomic():
            refusal = self.deletion_refusal()
            if refusal:
                raise VersionInUse(refusal)
            AuditEvent.record(by, AuditAction.VERSION_DELETED, self, before={
                "version": self.version, "checksum": self.checksum, "store_key": self.store_key,
                "in_store": self.is_in_store})
            super().delete()

    def delete(self, *args: Any, **kwargs: Any):
        if self.contract.has_dependent_consumers():
            raise VersionInUse(
                f"{self} cannot be deleted: datasets bound to {self.contract.name} have consumers that depend on it."
            )
        return super().delete(*args, **kwargs)


class IntegrationSpec(models.Model):
    """Maps a contract version to its physical source table."""

    contract_version = models.ForeignKey(ContractVersion, on_delete=models.PROTECT, related_name="integration_specs")
    version = models.CharField(max_length=50)
    document = models.JSONField()
    source_schema = models.CharField(max_length=200)
    source_table = models.CharField(max_length=200)
    field_to_source = models.JSONField(default=dict)
    created_column = models.CharField(max_length=200, blank=True)
    modified_column = models.CharField(max_length=200, blank=True)
    checksum = models.CharField(max_length=64)
    published_at = models.DateTimeField(default=timezone.now)
    store_key = models.CharField(max_length=500, blank=True)
    yaml_text = models.TextField(blank=True)
    uploaded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["contract_version", "version"], name="integration_spec_unique",
                                               violation_error_message="This contract version already has an integration spec with this version number.")]

    def __str__(self) -> str:
        return f"spec {self.version} of {self.contract_version}"


class DatasetBinding(models.Model):
    """A dataset bound to the contract that describes it (at most one per dataset)."""

    dataset = models.OneToOneField("registry.Dataset", on_delete=models.CASCADE, related_name="contract_binding")
    contract = models.ForeignKey(Contract, on_delete=models.PROTECT, related_name="bindings")
    bound_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.dataset} → {self.contract}"


def version_of(version: ContractVersion) -> str:
    """The version string of a row, for registry_client.versions.latest_release."""
    return version.version
