"""Contracts and their published versions.

A ContractVersion is immutable once published: the same content again is a
no-op, different content under the same version is refused, and a version
that a bound dataset's consumers depend on is never deleted.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from registry_client.versions import latest_release

from registry.models import AuditEvent, RegistryError


class AuditAction:
    CONTRACT_CREATED = "contract.created"
    VERSION_PUBLISHED = "contract.version_published"
    VERSION_UPLOADED = "contract.version_uploaded"
    VERSION_UPLOAD_FAILED = "contract.version_upload_failed"
    VERSION_DELETED = "contract.version_deleted"
    SPEC_PUBLISHED = "contract.spec_published"
    DATASET_BOUND = "contract.dataset_bound"


class ContentChanged(RegistryError):
    """Different content under a version that is already published."""


class VersionInUse(RegistryError):
    """A version that consumers of a bound dataset still depend on."""


def document_checksum(document: dict) -> str:
    """SHA-256 of the document's canonical JSON form (keys sorted), so key order
    and YAML formatting never make identical content look different."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class SchemaType(models.TextChoices):
    DATAFRAME = "dataframe", "DataFrame"
    EVENT = "event", "Event"
    API = "api", "API"


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

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["domain"], name="contract_domain_idx")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("contract-detail", args=[self.name])

    @property
    def path_parts(self) -> list[str]:
        return [self.domain, *self.subdomains, self.entity]

    def bind(self, dataset, *, by) -> DatasetBinding:
        """Bind `dataset` to this contract (replacing any earlier binding)."""
        with transaction.atomic():
            before = None
            existing = DatasetBinding.objects.filter(dataset=dataset).select_related("contract").first()
            if existing is not None:
                before = {"contract": existing.contract.name}
            binding, _ = DatasetBinding.objects.update_or_create(dataset=dataset, defaults={"contract": self})
            AuditEvent.record(by, AuditAction.DATASET_BOUND, dataset, before=before, after={"contract": self.name})
        return binding

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
        constraints = [models.UniqueConstraint(fields=["contract", "version"], name="contract_version_unique")]

    def __str__(self) -> str:
        return f"{self.contract.name} {self.version}"

    @property
    def is_in_store(self) -> bool:
        return self.uploaded_at is not None

    def same_content_as(self, document: dict) -> bool:
        return self.checksum == document_checksum(document)

    def delete_unused(self, *, by) -> None:
        """Delete this version, unless consumers of a dataset bound to its contract
        depend on it. Published objects stay in the store's history; the index
        is rewritten by the caller."""
        with transaction.atomic():
            if self.contract.has_dependent_consumers():
                raise VersionInUse(
                    f"{self} cannot be deleted: datasets bound to {self.contract.name} have consumers "
                    "that depend on its published versions."
                )
            if self.integration_specs.exists():
                raise VersionInUse(f"{self} cannot be deleted: integration specs point at it; delete them first.")
            AuditEvent.record(by, AuditAction.VERSION_DELETED, self, before={"version": self.version, "checksum": self.checksum})
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
        constraints = [models.UniqueConstraint(fields=["contract_version", "version"], name="integration_spec_unique")]

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
