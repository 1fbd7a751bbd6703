"""Bootstrap the registry from dbt artefacts (`manage.py import_dbt`, POST /api/dbt/import/).

`read_project(manifest, catalog)` reads what is used, and nothing else:

- manifest `metadata.adapter_type` (the type table's dialect) and `metadata.project_name`;
- `nodes` of resource_type model, seed and snapshot, and `sources`: `database`,
  `schema`, `alias` (a source's `identifier`), named as dbt-ol names them in lineage,
  `<database>.<schema>.<alias>` in the warehouse's namespace; `original_file_path`,
  `description`; `meta.owner` / `meta.owner_team` (also under `config.meta`, and a
  source's `source_meta`), else the `group`'s owner (`groups.<id>.owner.name`, then
  `.email`), else the group's name: the first that names a team (slug or alias);
  `depends_on.nodes` (refs and sources): a ref or source across teams makes the
  reading team a declared consumer;
- columns: an enforced model contract's (`config.contract.enforced`) columns,
  `data_type`s and constraints (`not_null`, `unique`, `primary_key`, model-level
  `primary_key`); otherwise the catalog's columns and types (`catalog.json`
  `nodes` / `sources` `.columns.<name>.type`, in `index` order), else the
  manifest's typed columns;
- tests (`nodes` of resource_type test with `test_metadata.name`, `attached_node`
  (or `depends_on.nodes`) and `column_name`): `not_null` -> not nullable,
  `unique` -> unique, `accepted_values` -> `isin` (its `values`). Other tests
  are named in the draft's notes, not carried.

`import_project(project, namespace=…)` then, node by node, each in one transaction:
creates the dataset (or finds it), gives an unowned one its dbt owner team,
registers cross-team readers as consumers, and drafts a contract
(contracts_app.drafting). It never takes a dataset from a team that owns it, never
drops a consumer, and never rewrites a draft a person edited. The owners are also
recorded for job attribution (registry.ownership.record_dbt_owners). A dry run does
all of it in a transaction that is rolled back, so its report is exactly what a
real run would do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from registry_client.warehouse_types import (
    DIALECTS,
    UnmappableType,
    canonical_dtype,
    dialect_of_adapter,
)

from contracts_app.drafting import (
    CannotDraft,
    DraftChange,
    contract_parts_for,
    dataframe_document,
    save_generated_draft,
    write_into_tree,
)
from contracts_app.models import AuditAction as ContractAction
from contracts_app.models import DatasetBinding, DraftOrigin
from registry.constants import AuditAction
from registry.models import AuditEvent, Consumer, Dataset, RegistryError, Team, person_of
from registry.ownership import record_dbt_owners, team_names, team_of_owner

RESOURCE_TYPES = ("model", "seed", "snapshot", "source")
OWNER_META_KEYS = ("owner", "owner_team", "team")


class DbtArtefactError(RegistryError):
    """A manifest or catalog that cannot be read; the message says which and where."""


@dataclass
class DbtNode:
    unique_id: str
    resource_type: str
    name: str
    relation: str  # <database>.<schema>.<alias>, as dbt-ol names the dataset
    original_file_path: str = ""
    description: str = ""
    owner_names: list[tuple[str, str]] = field(default_factory=list)  # (where it was read, the name), in order
    parents: list[str] = field(default_factory=list)
    columns: list[dict] = field(default_factory=list)  # name, type, description, nullable, unique, checks
    typed_by: str = ""  # where the types came from: "contract", "catalog", "manifest" or ""
    unique_together: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class DbtProject:
    name: str
    adapter_type: str
    nodes: dict[str, DbtNode]


def load_json(path: Path | str, what: str) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DbtArtefactError(f"{what} {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise DbtArtefactError(f"{what} {path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DbtArtefactError(f"{what} {path} must hold a JSON object (dbt writes one)")
    return data


def _meta(raw: dict) -> dict:
    config = raw.get("config") if isinstance(raw.get("config"), dict) else {}
    merged: dict = {}
    for part in (raw.get("source_meta"), config.get("meta"), raw.get("meta")):
        if isinstance(part, dict):
            merged.update(part)
    return merged


def _owner_names(raw: dict, groups: dict[str, dict]) -> list[tuple[str, str]]:
    names = []
    meta = _meta(raw)
    for key in OWNER_META_KEYS:
        value = meta.get(key)
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, str) and one.strip():
                names.append((f"meta.{key}", one.strip()))
    config = raw.get("config") if isinstance(raw.get("config"), dict) else {}
    group_name = raw.get("group") or config.get("group")
    if isinstance(group_name, str) and group_name:
        group = groups.get(group_name) or {}
        owner = group.get("owner") if isinstance(group.get("owner"), dict) else {}
        for key in ("name", "email"):
            if isinstance(owner.get(key), str) and owner[key].strip():
                names.append((f"group:{group_name} owner.{key}", owner[key].strip()))
        names.append((f"group:{group_name}", group_name))
    return names


def _enforced(raw: dict) -> bool:
    config = raw.get("config") if isinstance(raw.get("config"), dict) else {}
    contract = config.get("contract") or raw.get("contract") or {}
    return bool(isinstance(contract, dict) and contract.get("enforced"))


def _contract_columns(node: DbtNode, raw: dict) -> None:
    """An enforced model contract: its columns, data types and constraints are the draft."""
    for name, column in (raw.get("columns") or {}).items():
        kinds = {str(c.get("type")) for c in column.get("constraints") or [] if isinstance(c, dict)}
        if "check" in kinds or "foreign_key" in kinds or "custom" in kinds:
            node.notes.append(f"column {name!r}: constraints {', '.join(sorted(kinds & {'check', 'foreign_key', 'custom'}))}"
                              " are not carried (the contract format has no such check)")
        node.columns.append({"name": column.get("name") or name, "type": column.get("data_type") or "",
                             "description": column.get("description") or "",
                             "nullable": not (kinds & {"not_null", "primary_key"}),
                             "unique": bool(kinds & {"unique", "primary_key"}), "checks": []})
    for constraint in raw.get("constraints") or []:
        if isinstance(constraint, dict) and constraint.get("type") in ("primary_key", "unique"):
            columns = [str(c) for c in constraint.get("columns") or []]
            if len(columns) == 1:
                for column in node.columns:
                    if column["name"] == columns[0]:
                        column["unique"] = True
                        column["nullable"] = column["nullable"] and constraint["type"] != "primary_key"
            elif columns:
                node.unique_together = columns
    node.typed_by = "contract"


def _catalog_columns(node: DbtNode, entry: dict, raw: dict) -> None:
    documented = raw.get("columns") or {}
    described = {str(k).lower(): (v or {}).get("description") or "" for k, v in documented.items()}
    ordered = sorted((entry.get("columns") or {}).values(), key=lambda c: (c.get("index") or 0, c.get("name") or ""))
    for column in ordered:
        name = str(column.get("name"))
        node.columns.append({"name": name, "type": column.get("type") or "", "nullable": True, "unique": False,
                             "description": column.get("comment") or described.get(name.lower(), ""), "checks": []})
    node.typed_by = "catalog"


def _manifest_columns(node: DbtNode, raw: dict) -> None:
    for name, column in (raw.get("columns") or {}).items():
        node.columns.append({"name": column.get("name") or name, "type": column.get("data_type") or "",
                             "description": column.get("description") or "", "nullable": True, "unique": False,
                             "checks": []})
    node.typed_by = "manifest" if node.columns else ""


def _apply_test(node: DbtNode, raw: dict) -> None:
    metadata = raw.get("test_metadata") or {}
    test = str(metadata.get("name") or "")
    kwargs = metadata.get("kwargs") or {}
    column_name = raw.get("column_name") or kwargs.get("column_name")
    column = next((c for c in node.columns if column_name and c["name"].lower() == str(column_name).lower()), None)
    if column is None:
        if test:
            node.notes.append(f"test {test}{f' on {column_name!r}' if column_name else ''}: not carried "
                              f"({'no such column' if column_name else 'not about one column'})")
        return
    if test == "not_null":
        column["nullable"] = False
    elif test == "unique":
        column["unique"] = True
    elif test == "accepted_values":
        values = kwargs.get("values")
        if isinstance(values, list) and values:
            column["checks"].append({"isin": list(values)})
    else:
        node.notes.append(f"test {test or raw.get('name')} on {column['name']!r}: not carried "
                          "(only not_null, unique and accepted_values become the contract's rules)")


def read_project(manifest: dict, catalog: dict | None = None) -> DbtProject:
    """The parts of dbt's manifest.json (and catalog.json) the import uses (see the module's docstring).
    DbtArtefactError when they are not in dbt's shape, naming where."""
    try:
        return _read_project(manifest, catalog)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise DbtArtefactError(f"the manifest or catalog is not in dbt's shape ({type(exc).__name__}: {exc}); "
                               "pass dbt's own target/manifest.json and target/catalog.json") from None


def _read_project(manifest: dict, catalog: dict | None) -> DbtProject:
    metadata = manifest.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(manifest.get("nodes"), dict):
        raise DbtArtefactError("the manifest has no metadata or nodes: is it dbt's target/manifest.json?")
    catalog = catalog or {}
    catalogued = {**(catalog.get("nodes") or {}), **(catalog.get("sources") or {})}
    groups = {}
    for group in (manifest.get("groups") or {}).values():
        if isinstance(group, dict) and group.get("name"):
            groups[str(group["name"])] = group
    project = DbtProject(name=str(metadata.get("project_name") or ""), adapter_type=str(metadata.get("adapter_type") or ""),
                         nodes={})
    raws = {**manifest["nodes"], **(manifest.get("sources") or {})}
    for unique_id, raw in sorted(raws.items()):
        if not isinstance(raw, dict) or raw.get("resource_type") not in RESOURCE_TYPES:
            continue
        if (raw.get("config") or {}).get("materialized") == "ephemeral":
            continue  # inlined into its readers: no relation in the warehouse, no dataset in lineage
        alias = raw.get("identifier") if raw["resource_type"] == "source" else raw.get("alias")
        alias = alias or raw.get("name")
        parts = [raw.get("database"), raw.get("schema"), alias]
        relation = ".".join(str(p) for p in parts if p)
        if not alias or not raw.get("schema"):
            raise DbtArtefactError(f"manifest {unique_id}: no schema or alias/identifier to name its dataset with")
        node = DbtNode(unique_id=unique_id, resource_type=raw["resource_type"], name=str(raw.get("name") or alias),
                       relation=relation, original_file_path=str(raw.get("original_file_path") or ""),
                       description=str(raw.get("description") or ""), owner_names=_owner_names(raw, groups),
                       parents=[p for p in (raw.get("depends_on") or {}).get("nodes") or [] if isinstance(p, str)])
        if raw["resource_type"] == "model" and _enforced(raw):
            _contract_columns(node, raw)
        elif unique_id in catalogued:
            _catalog_columns(node, catalogued[unique_id], raw)
        else:
            _manifest_columns(node, raw)
        project.nodes[unique_id] = node
    for raw in manifest["nodes"].values():
        if not isinstance(raw, dict) or raw.get("resource_type") != "test":
            continue
        attached = raw.get("attached_node") or next(
            (p for p in (raw.get("depends_on") or {}).get("nodes") or [] if p in project.nodes), None)
        if attached in project.nodes:
            _apply_test(project.nodes[attached], raw)
    return project


# --- the import ---------------------------------------------------------------------

@dataclass
class ImportReport:
    dry_run: bool
    namespace: str
    lines: list[str] = field(default_factory=list)  # what changed (or, in a dry run, would)
    notices: list[str] = field(default_factory=list)  # what was left alone, and why
    errors: list[str] = field(default_factory=list)
    drafts: list[DraftChange] = field(default_factory=list)
    owners: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, line: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind.startswith(("unknown", "draft_kept", "owner_kept")) or kind == "draft_unchanged":
            self.notices.append(line)
        else:
            self.lines.append(line)

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "namespace": self.namespace, "changes": self.lines, "notices": self.notices, "errors": self.errors,
                "counts": self.counts, "drafts": [d.to_dict() for d in self.drafts], "dbt_owners": self.owners}


class _RollBack(Exception):
    pass


def namespace_for(project: DbtProject, given: str | None) -> str:
    """The dataset namespace dbt-ol gives the project's relations: `given`, else the one
    namespace where lineage already has one of them, else "bigquery" for BigQuery."""
    if given:
        return given.rstrip("/")
    relations = [n.relation for n in project.nodes.values()]
    found = sorted(set(Dataset.objects.filter(name__in=relations).values_list("namespace", flat=True)))
    if len(found) == 1:
        return found[0]
    if project.adapter_type == "bigquery":
        return "bigquery"
    seen = f" (lineage has them in {', '.join(found)})" if found else ""
    raise DbtArtefactError(
        f"which namespace do this project's datasets live in{seen}? dbt-ol names it after the profile's "
        f"connection, e.g. postgres://127.0.0.1:5432 or snowflake://<account>: pass it with --namespace")


def _owner_of(node: DbtNode, teams: dict[str, Team]) -> tuple[Team | None, str]:
    for where, name in node.owner_names:
        team = team_of_owner(name, teams)
        if team is not None:
            return team, where
    return None, ""


def import_project(project: DbtProject, *, namespace: str | None = None, dialect: str | None = None, by=None,
                   dry_run: bool = False, write_tree: Path | None = None,
                   progress: Callable[[str], None] | None = None) -> ImportReport:
    """Import a read dbt project (see the module's docstring). In a dry run nothing is
    stored and nothing is written into the tree."""
    say = progress or (lambda _line: None)
    namespace = namespace_for(project, namespace)
    dialect = dialect or dialect_of_adapter(project.adapter_type)
    if dialect not in DIALECTS:
        raise DbtArtefactError(f"the manifest's adapter_type {project.adapter_type!r} has no type table; name the "
                               f"warehouse's dialect ({', '.join(DIALECTS)})")
    report = ImportReport(dry_run=dry_run, namespace=namespace)
    teams = team_names()
    owners = {uid: _owner_of(node, teams) for uid, node in project.nodes.items()}
    for uid, node in project.nodes.items():
        if owners[uid][0] is None and node.owner_names:
            report.add("unknown_owner", f"no owner  {node.relation}: "
                       + ", ".join(f"{w} {n!r}" for w, n in node.owner_names) + " name no team (slug or alias)")
    try:
        with transaction.atomic():
            datasets = _import_datasets(project, owners, namespace, report, by=by, say=say)
            _import_consumers(project, owners, datasets, report, by=by)
            _import_drafts(project, owners, datasets, dialect, report, by=by, say=say)
            rows = [{"unique_id": uid, "team": team, "original_file_path": project.nodes[uid].original_file_path,
                     "source": where} for uid, (team, where) in owners.items() if team is not None]
            recorded = record_dbt_owners(rows, by=by, project=project.name or None, replace=bool(project.name))
            report.owners = recorded.to_dict()
            for kind in ("created", "changed", "removed"):
                if getattr(recorded, kind):
                    report.add(f"dbt_owner_{kind}", f"dbt owners {kind}: {len(getattr(recorded, kind))} node(s) "
                               "(for attributing their jobs)")
                    report.counts[f"dbt_owner_{kind}"] = len(getattr(recorded, kind))
            if dry_run:
                raise _RollBack
    except _RollBack:
        pass
    if write_tree is not None and not dry_run:
        for change in report.drafts:
            if change.draft is not None and change.draft.is_pending:
                line = write_into_tree(change, write_tree)
                if line:
                    report.lines.append(f"tree      {line}")
    return report


def _import_datasets(project: DbtProject, owners: dict, namespace: str, report: ImportReport, *, by,
                     say: Callable[[str], None]) -> dict[str, Dataset]:
    datasets: dict[str, Dataset] = {}
    total = len(project.nodes)
    for n, (uid, node) in enumerate(sorted(project.nodes.items()), 1):
        if n % 50 == 0 or n == total:
            say(f"datasets: {n}/{total}")
        dataset, created = Dataset.objects.select_for_update().get_or_create(
            namespace=namespace, name=node.relation, defaults={"description": node.description})
        if created:
            AuditEvent.record(by, ContractAction.DATASET_FIRST_SEEN, dataset, after={
                "namespace": namespace, "name": node.relation, "owner_team": None, "named_by": f"dbt {uid}"})
            report.add("dataset_created", f"created   dataset {dataset} ({node.resource_type} {uid})")
        datasets[uid] = dataset
        team, where = owners[uid]
        if team is None:
            continue
        if dataset.owner_team_id is None:
            dataset.owner_team = team
            dataset.save(update_fields=["owner_team"])
            AuditEvent.record(by, AuditAction.DATASET_CLAIMED, dataset, before={"owner_team": None, "owner": None},
                              after={"owner_team": team.slug, "owner": None, "source": f"dbt {uid} {where}"})
            report.add("owner_set", f"owner     {dataset}: {team.slug} (from {where})")
        elif dataset.owner_team_id != team.pk:
            report.add("owner_kept", f"kept      {dataset}: owned by {dataset.owner_team.slug}; dbt's {where} says "
                       f"{team.slug}: a changed owner is for a governance admin")
    return datasets


def _import_consumers(project: DbtProject, owners: dict, datasets: dict[str, Dataset], report: ImportReport, *,
                      by) -> None:
    wanted: dict[tuple[int, int], tuple[Dataset, Team, str]] = {}
    for uid, node in project.nodes.items():
        reader = owners[uid][0]
        if reader is None:
            continue
        for parent in node.parents:
            if parent not in datasets:
                continue
            dataset = datasets[parent]
            if dataset.owner_team_id is None or dataset.owner_team_id == reader.pk:
                continue
            wanted.setdefault((dataset.pk, reader.pk), (dataset, reader, uid))
    existing = set(Consumer.objects.filter(dataset_id__in=[k[0] for k in wanted]).values_list("dataset_id", "team_id"))
    for key, (dataset, team, uid) in sorted(wanted.items(), key=lambda item: (str(item[1][0]), item[1][1].slug)):
        if key in existing:
            continue
        Consumer.objects.create(dataset=dataset, team=team, registered_by=person_of(by))
        AuditEvent.record(by, AuditAction.CONSUMER_REGISTERED, dataset, before=None,
                          after={"team": team.slug, "declared_columns": None, "source": f"dbt {uid} reads it"})
        report.add("consumer_registered", f"consumer  {team.slug} reads {dataset} (dbt {uid})")


def _import_drafts(project: DbtProject, owners: dict, datasets: dict[str, Dataset], dialect: str,
                   report: ImportReport, *, by, say: Callable[[str], None]) -> None:
    bound = {b.dataset_id: b.contract.name for b in
             DatasetBinding.objects.filter(dataset__in=list(datasets.values())).select_related("contract")}
    drafted = [(uid, node) for uid, node in sorted(project.nodes.items()) if node.columns]
    for n, (uid, node) in enumerate(drafted, 1):
        if n % 25 == 0 or n == len(drafted):
            say(f"drafts: {n}/{len(drafted)}")
        team = owners[uid][0]
        dataset = datasets[uid]
        if team is None:
            continue
        if dataset.owner_team_id != team.pk:
            continue  # owned by another team (reported above): its contract is that team's to write
        parts = contract_parts_for(node.relation, team)
        name = ".".join(parts)
        if dataset.pk in bound and bound[dataset.pk] != name:
            report.add("draft_kept", f"kept      {dataset}: described by contract {bound[dataset.pk]}, not drafted")
            continue
        try:
            columns = [{**c, "dtype": canonical_dtype(c["type"], dialect, where=f"{uid} column {c['name']!r}")}
                       for c in node.columns]
        except UnmappableType as exc:
            hint = "" if node.typed_by != "manifest" or exc.type_name else " (run `dbt docs generate` for catalog.json)"
            report.errors.append(f"{exc}{hint}")
            continue
        document = dataframe_document(parts, owner=team, columns=columns, datasets=[dataset],
                                      description=node.description, unique=node.unique_together or None)
        try:
            with transaction.atomic():
                change = save_generated_draft(document, origin=DraftOrigin.DBT, source=uid, owner=team,
                                              dataset=dataset, notes=node.notes, by=by)
        except CannotDraft as exc:
            report.errors.append(f"{uid}: {exc}")
            continue
        report.drafts.append(change)
        report.add(f"draft_{change.action}", str(change))
