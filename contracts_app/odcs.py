"""A published version as an ODCS contract, with what the registry knows of it.

The mapping itself is the client's (`registry_client.odcs`, pure and shared with
pipelines); this module gathers the registry state it exports beside the
document: the owner team and its members, the datasets the contract names or is
bound to with their freshness SLOs (asked of whoever keeps them, through the
core's hook), the consumer teams, the compatibility mode and the column an
integration spec says the rows are dated by.
"""

from __future__ import annotations

from typing import Any

from registry_client.odcs import DatasetFacts, MemberFacts, RegistryFacts, to_odcs

from contracts_app.models import ContractVersion, datasets_named_in
from contracts_app.yamlio import dump_yaml
from registry.hooks import service_levels_of
from registry.models import Consumer, Dataset, Membership


def freshness_column(version: ContractVersion) -> str | None:
    """The contract column the version's latest integration spec dates rows by (its modified
    column, else its created column, translated back through field_to_source), if any."""
    spec = version.integration_specs.order_by("-published_at", "-id").first()
    columns = {c["name"]: c for c in version.document.get("columns") or []}
    if spec is None or not columns:
        return None
    by_source = {source: column for column, source in (spec.field_to_source or {}).items()}
    for source in (spec.modified_column, spec.created_column):
        column = by_source.get(source, source) if source else None
        if column in columns and columns[column]["dtype"] == "datetime64[ns]":
            return column
    return None


def registry_facts(version: ContractVersion) -> RegistryFacts:
    contract = version.contract
    named = datasets_named_in(version.document)
    bound = list(Dataset.objects.filter(contract_binding__contract=contract).select_related("owner")
                 .order_by("namespace", "name"))
    by_identity = {(d.namespace, d.name): d for d in bound}
    missing = [key for key in named if key not in by_identity]
    if missing:
        # named by the document but bound elsewhere since (or never bound): still described by it
        for dataset in Dataset.objects.filter(namespace__in={n for n, _ in missing}, name__in={m for _, m in missing}):
            by_identity.setdefault((dataset.namespace, dataset.name), dataset)
    ordered = [*named, *[(d.namespace, d.name) for d in bound if (d.namespace, d.name) not in named]]
    rows = {key: by_identity.get(key) for key in ordered}
    levels = service_levels_of([d.pk for d in rows.values() if d is not None])
    datasets = []
    for key, dataset in rows.items():
        level = levels.get(dataset.pk, {}) if dataset is not None else {}
        datasets.append(DatasetFacts(namespace=key[0], name=key[1], in_document=key in named,
                                     max_age=level.get("max_age"), warn_after=level.get("warn_after"),
                                     empty_write_counts=level.get("empty_write_counts")))

    members: list[MemberFacts] = []
    team = contract.owner_team
    if team is not None:
        owners = {d.owner_id for d in rows.values() if d is not None and d.owner_id}
        for membership in Membership.objects.filter(team=team).select_related("user").order_by("user__username"):
            user = membership.user
            members.append(MemberFacts(username=user.get_username(), name=user.get_full_name(),
                                       role="owner" if user.pk in owners else "member"))
    consumers: list[dict[str, Any]] = [
        {"team": c.team.slug, "namespace": c.dataset.namespace, "name": c.dataset.name,
         **({"declaredColumns": c.declared_columns} if c.declared_columns else {})}
        for c in Consumer.objects.filter(dataset__in=[d for d in rows.values() if d is not None])
        .select_related("team", "dataset").order_by("dataset__namespace", "dataset__name", "team__slug")
    ]
    return RegistryFacts(
        team_name=team.slug if team else None, team_description=team.description if team else "",
        members=members, datasets=datasets, consumers=consumers,
        compatibility_mode=contract.compatibility_mode, published_at=version.published_at,
        freshness_column=freshness_column(version),
    )


def odcs_document(version: ContractVersion) -> dict[str, Any]:
    """The ODCS v3.1.0 contract of a published version (docs/odcs.md)."""
    return to_odcs(version.document, registry_facts(version))


def odcs_yaml(version: ContractVersion) -> str:
    """The ODCS contract as YAML, in the mapping's key order (deterministic)."""
    header = (f"# {version.contract.name} {version.version} as an Open Data Contract Standard contract, "
              "exported by the dataset registry (docs/odcs.md).\n")
    return dump_yaml(odcs_document(version), header=header)
