"""Whose job is it: the facts ownership rules match a job by, and what decides.

A job's team is decided at job grain, in this order (registry.ownership):
1. the OpenLineage `ownership` job facet (owner names matched to team slugs or
   to the aliases a team declares, `TeamAlias`);
2. the ownership rules file (`OwnershipRules`: CODEOWNERS syntax over dbt's
   `original_file_path`, and job-name globs per namespace);
3. owners read from dbt artefacts (`DbtOwner`, matched by the `dbt_node`
   facet's `unique_id`, else its `original_file_path`);
4. the job namespace's team (`registry.usage.NamespaceTeam`);
5. the team of the token that posted the job's events.

These models import nothing of the core's other modules: registry.models
imports them (as it does registry.usage), and registry.ownership holds the rules.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class TeamAlias(models.Model):
    """Another name a team answers to in lineage (an `ownership` facet's owner
    name, a rules file's `@owner`, a dbt `group` or `meta.owner`)."""

    team = models.ForeignKey("registry.Team", on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=200, unique=True,
                             help_text="Matched without regard to case, e.g. \"team:finance\" or \"Finance Analytics\".")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["alias"]
        verbose_name_plural = "team aliases"

    def __str__(self) -> str:
        return f"{self.alias} -> {self.team}"

    def save(self, *args, **kwargs) -> None:
        self.alias = normal_name(self.alias)
        super().save(*args, **kwargs)


def normal_name(name: str) -> str:
    """An owner name as it is matched: stripped, case folded, without a leading "@"."""
    return name.strip().lstrip("@").strip().casefold()


class DbtOwner(models.Model):
    """The owner team dbt's artefacts give a node (a `group`'s owner, `meta.owner`),
    recorded by `registry.ownership.record_dbt_owners`."""

    project = models.CharField(max_length=200, blank=True,
                               help_text="The dbt project (the second part of the unique_id, unless told).")
    unique_id = models.CharField(max_length=500, unique=True, help_text='dbt\'s node id, e.g. "model.shop.orders".')
    original_file_path = models.CharField(max_length=1000, blank=True,
                                          help_text='The node\'s file in its project, e.g. "models/finance/orders.sql".')
    team = models.ForeignKey("registry.Team", on_delete=models.CASCADE, related_name="dbt_nodes")
    source = models.CharField(max_length=100, blank=True,
                              help_text='Where the owner was read, e.g. "group:finance" or "meta.owner".')
    recorded_at = models.DateTimeField(default=timezone.now)
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")

    class Meta:
        ordering = ["unique_id"]
        verbose_name = "dbt node owner"
        indexes = [models.Index(fields=["original_file_path"], name="dbt_owner_path_idx")]

    def __str__(self) -> str:
        return f"{self.unique_id} -> {self.team}"


class DecidedBy(models.TextChoices):
    """The rule that decided a job's team, in the order they are tried."""

    OWNERSHIP_FACET = "ownership_facet", "OpenLineage ownership facet"
    RULES_FILE = "rules_file", "Ownership rules file"
    DBT_ARTEFACTS = "dbt_artefacts", "dbt artefacts"
    NAMESPACE = "namespace", "Job namespace mapping"
    TOKEN = "token", "Team of the posting token"
    NOBODY = "", "Nobody"


class JobTeam(models.Model):
    """One job (by OpenLineage namespace and name): the facts ownership rules
    match it by, as its latest events said, and the team the first three rules
    decide (registry.ownership.attribute_jobs keeps it current whenever a rule
    or a fact changes; the namespace mapping and the token's team are joined
    where usage is read, as they always were)."""

    # Written by the ingest: no database constraint on the team (it would share-lock
    # the team row on every write); Django still sets it NULL when a team goes.
    job_namespace = models.CharField(max_length=500)
    job_name = models.CharField(max_length=500)
    dbt_unique_id = models.CharField(max_length=500, blank=True, help_text="The dbt_node facet's unique_id.")
    dbt_path = models.CharField(max_length=1000, blank=True, help_text="The dbt_node facet's original_file_path.")
    owners = models.JSONField(default=list, blank=True,
                              help_text="The ownership facet's owner names, in its order (normal names).")
    team = models.ForeignKey("registry.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                             db_constraint=False)
    rule = models.CharField(max_length=20, choices=DecidedBy.choices, blank=True, default=DecidedBy.NOBODY)
    rule_detail = models.CharField(max_length=1000, blank=True,
                                   help_text='Which owner, line or node decided, e.g. "rules v3 line 4: models/finance/** @finance".')
    first_seen_at = models.DateTimeField(default=timezone.now)
    attributed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_namespace", "job_name"]
        constraints = [models.UniqueConstraint(fields=["job_namespace", "job_name"], name="job_team_unique",
                                               violation_error_message="This job is already known.")]
        indexes = [models.Index(fields=["dbt_unique_id"], name="job_team_dbt_id_idx")]

    def __str__(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"

    @property
    def job(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"


class OwnershipRules(models.Model):
    """One version of the ownership rules file; the highest version is in force.
    Versions are never edited: a change is a new version (audited)."""

    version = models.PositiveIntegerField(unique=True)
    text = models.TextField(blank=True)
    note = models.CharField(max_length=500, blank=True, help_text="Why it changed.")
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        ordering = ["-version"]
        verbose_name = "ownership rules version"

    def __str__(self) -> str:
        return f"ownership rules v{self.version}"
