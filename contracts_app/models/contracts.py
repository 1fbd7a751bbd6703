"""Contracts and their published versions.

A ContractVersion is immutable once published: the same content again is a
no-op, different content under the same version is refused, and a version
that a bound dataset's consumers depend on is never deleted.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


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


class ContractVersion(models.Model):
    contract = models.ForeignKey(Contract, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=50)
    document = models.JSONField(help_text="The canonical contract document, as exported.")
    json_schema = models.JSONField(null=True, blank=True, help_text="The JSON Schema derived from the document, for the checker.")
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the canonical YAML.")
    published_at = models.DateTimeField(default=timezone.now)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    store_key = models.CharField(max_length=500, blank=True, help_text="Where the YAML lives in the contract store.")
    uploaded_at = models.DateTimeField(null=True, blank=True, help_text="Set once the object and index are in the store.")

    class Meta:
        ordering = ["contract__name", "published_at"]
        constraints = [models.UniqueConstraint(fields=["contract", "version"], name="contract_version_unique")]

    def __str__(self) -> str:
        return f"{self.contract.name} {self.version}"


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
