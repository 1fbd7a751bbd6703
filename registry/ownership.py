"""Job ownership at job grain: team aliases, owners read from dbt artefacts,
the ownership rules file, and the attribution they decide (registry.jobs)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from registry.constants import AuditAction
from registry.jobs import DbtOwner, TeamAlias, normal_name
from registry.models import (
    AuditEvent,
    RegistryError,
    Team,
    acts_for,
    is_governance_admin,
    person_of,
)


def teams_named(names: Iterable[str]) -> dict[str, Team]:
    """The teams the names name, by normal name (registry.jobs.normal_name): a
    team slug, else an alias a team declared (one query)."""
    wanted = {normal_name(n) for n in names if n and normal_name(n)}
    if not wanted:
        return {}
    found: dict[str, Team] = {}
    slugs = Q()
    for name in wanted:
        slugs |= Q(slug__iexact=name)
    for team in Team.objects.filter(slugs | Q(aliases__alias__in=wanted)).prefetch_related("aliases").distinct():
        for name in {team.slug.casefold(), *(a.alias for a in team.aliases.all())} & wanted:
            found.setdefault(name, team)
    return found


def dbt_project_of(unique_id: str) -> str:
    """The project in a dbt unique_id ("model.shop.orders" -> "shop"), or ""."""
    parts = unique_id.split(".")
    return parts[1] if len(parts) >= 3 else ""


@dataclass
class DbtOwnersRecorded:
    """What `record_dbt_owners` changed, node ids sorted."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"created": self.created, "changed": self.changed, "unchanged": self.unchanged, "removed": self.removed}


def record_dbt_owners(rows: Iterable[Mapping], *, by, project: str | None = None,
                      replace: bool = False) -> DbtOwnersRecorded:
    """Record the owner team dbt's artefacts give each node, in one transaction, audited.

    Each row is a mapping with `unique_id` (dbt's node id, required), `team` (a
    Team, or a name: a team slug or an alias a team declared), and optionally
    `original_file_path`, `source` (where the owner was read, e.g. "group:finance"
    or "meta.owner") and `project` (else the unique_id's second part, else
    `project`). A node recorded before is updated when its team, path or source
    differ. With `replace` and `project`, nodes of that project not in `rows` are
    removed (their owner was taken out of the artefacts). A name no team answers
    to is an error naming the node; nothing is stored then.

    Jobs whose `dbt_node` facet names a recorded node (by unique_id, else by
    original_file_path) are then attributed to its team unless an `ownership`
    facet or the rules file decides first (rule order: registry.jobs)."""
    if by is not None and not is_governance_admin(by):
        raise PermissionDenied("Recording owners from dbt artefacts is for governance admins.")
    rows = list(rows)
    problems = []
    wanted: dict[str, dict] = {}
    for n, row in enumerate(rows, 1):
        unique_id = str(row.get("unique_id") or "").strip()
        team = row.get("team")
        if not unique_id:
            problems.append(f"row {n}: no unique_id (dbt's node id, e.g. \"model.shop.orders\")")
            continue
        if team is None or (isinstance(team, str) and not team.strip()):
            problems.append(f"{unique_id}: no team")
            continue
        if unique_id in wanted:
            problems.append(f"{unique_id}: listed twice")
            continue
        wanted[unique_id] = {"team": team, "original_file_path": str(row.get("original_file_path") or "").strip(),
                             "source": str(row.get("source") or "").strip()[:100],
                             "project": str(row.get("project") or dbt_project_of(unique_id) or project or "").strip()}
    named = teams_named(t for w in wanted.values() for t in [w["team"]] if isinstance(t, str))
    for unique_id, w in wanted.items():
        if isinstance(w["team"], Team):
            continue
        team = named.get(normal_name(w["team"]))
        if team is None:
            problems.append(f"{unique_id}: no team is named or aliased \"{w['team']}\" "
                            "(add the team, or declare the name as one of its aliases)")
        w["team"] = team
    if problems:
        raise RegistryError("dbt owners not recorded: " + "; ".join(problems) + ".")

    recorded = DbtOwnersRecorded()
    now = timezone.now()
    with transaction.atomic():
        existing = {o.unique_id: o for o in DbtOwner.objects.select_for_update().select_related("team")
                    .filter(Q(unique_id__in=list(wanted)) | (Q(project=project) if replace and project else Q(pk__in=[])))}
        audits = []
        for unique_id in sorted(wanted):
            w = wanted[unique_id]
            old = existing.get(unique_id)
            after = {"unique_id": unique_id, "team": w["team"].slug, "original_file_path": w["original_file_path"],
                     "source": w["source"], "project": w["project"]}
            if old is None:
                row = DbtOwner.objects.create(unique_id=unique_id, team=w["team"], original_file_path=w["original_file_path"],
                                              source=w["source"], project=w["project"], recorded_at=now,
                                              recorded_by=person_of(by))
                recorded.created.append(unique_id)
                audits.append(AuditEvent(**AuditEvent.fields_for(by, AuditAction.DBT_OWNER_RECORDED, row, after=after)))
                continue
            before = {"unique_id": unique_id, "team": old.team.slug, "original_file_path": old.original_file_path,
                      "source": old.source, "project": old.project}
            if before == after:
                recorded.unchanged.append(unique_id)
                continue
            old.team, old.original_file_path, old.source, old.project = (
                w["team"], w["original_file_path"], w["source"], w["project"])
            old.recorded_at, old.recorded_by = now, person_of(by)
            old.save()
            recorded.changed.append(unique_id)
            audits.append(AuditEvent(**AuditEvent.fields_for(by, AuditAction.DBT_OWNER_RECORDED, old,
                                                             before=before, after=after)))
        if replace and project:
            for unique_id, old in sorted(existing.items()):
                if unique_id not in wanted and old.project == project:
                    audits.append(AuditEvent(**AuditEvent.fields_for(
                        by, AuditAction.DBT_OWNER_REMOVED, old,
                        before={"unique_id": unique_id, "team": old.team.slug, "project": old.project}, after=None)))
                    old.delete()
                    recorded.removed.append(unique_id)
        AuditEvent.objects.bulk_create(audits)
    return recorded


def declare_alias(team: Team, alias: str, *, by) -> TeamAlias:
    """Say that `team` also answers to `alias` in lineage and ownership files (audited)."""
    name = normal_name(alias)
    if not name:
        raise RegistryError("Name the alias, e.g. \"team:finance\".")
    if not (acts_for(by, team) or is_governance_admin(by)):
        raise PermissionDenied(f"Only a member of team {team.slug} or an admin can declare its aliases.")
    with transaction.atomic():
        clash = Team.objects.filter(slug__iexact=name).exclude(pk=team.pk).first()
        if clash is not None:
            raise RegistryError(f"\"{name}\" is team {clash.slug}'s slug; it cannot be another team's alias.")
        existing = TeamAlias.objects.select_for_update().select_related("team").filter(alias=name).first()
        if existing is not None:
            if existing.team_id == team.pk:
                return existing
            raise RegistryError(f"\"{name}\" is already an alias of team {existing.team.slug}; "
                                "that team removes it first.")
        row = TeamAlias.objects.create(team=team, alias=name)
        AuditEvent.record(by, AuditAction.TEAM_ALIAS_DECLARED, team, after={"team": team.slug, "alias": name})
    return row


def remove_alias(team: Team, alias: str, *, by) -> bool:
    if not (acts_for(by, team) or is_governance_admin(by)):
        raise PermissionDenied(f"Only a member of team {team.slug} or an admin can remove its aliases.")
    name = normal_name(alias)
    with transaction.atomic():
        deleted, _ = TeamAlias.objects.filter(team=team, alias=name).delete()
        if deleted:
            AuditEvent.record(by, AuditAction.TEAM_ALIAS_REMOVED, team, before={"team": team.slug, "alias": name})
    return bool(deleted)
