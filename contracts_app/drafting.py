"""Drafting contracts: from an observed schema or dbt artefacts, into the owner
team's review queue, and from there through the publish gate.

- `dataframe_document` builds a draft document in the exporter's exact shape, so a
  draft written into the contracts tree exports back to itself.
- `save_generated_draft` is what every generator calls, once per contract; it
  returns a `DraftChange` line for the generator's report. Re-running a generator
  refreshes only its own, untouched drafts (see its docstring).
- `approve_draft` is the review: a member of the owner team approves, then the
  publish gate decides (published at once, or breaking: a change request opens).
- `draft_from_observed_schema` drafts a contract from a dataset's schema facet.
- `write_into_tree` writes a draft as contracts-as-code (schema.py + schema.yaml).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from packaging.version import Version
from registry_client.warehouse_types import UnmappableType, canonical_dtype, dialect_of_namespace

from contracts_app.importing import ImportFailed, place_in_tree, tree_folder
from contracts_app.models import (
    Contract,
    DatasetBinding,
    Draft,
    DraftAction,
    DraftOrigin,
    DraftState,
    document_checksum,
)
from contracts_app.publishing import (
    BREAKING,
    REFUSED,
    PublishOutcome,
    check_in_required_modes,
    gate_errors,
    publish_document,
)
from contracts_app.yamlio import load_yaml_file
from registry.hooks import observed_schemas_of
from registry.models import AuditEvent, Dataset, RegistryError, Team, person_of

FIRST_VERSION = "1.0"
# The exporter's config for a class built on registry_client's BaseDataFrameSchema.
DEFAULT_CONFIG = {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None,
                  "add_missing_columns": False, "unique_column_names": False}

CREATED, REFRESHED, SAME, KEPT = "created", "refreshed", "unchanged", "kept"


class DraftRefused(RegistryError):
    """The publish gate refused an approved draft; nothing was recorded."""

    def __init__(self, outcome: PublishOutcome):
        self.outcome = outcome
        super().__init__(" ".join([outcome.message, *outcome.errors]))


class CannotDraft(RegistryError):
    """A contract cannot be drafted from what is known (no schema, an unmappable type …)."""


@dataclass
class DraftChange:
    """One line of a generator's report: what happened (or, in a dry run, would) to one draft."""

    action: str  # created | refreshed | unchanged | kept
    name: str
    version: str
    detail: str = ""
    draft: Draft | None = None

    def __str__(self) -> str:
        return f"{self.action:<9} draft {self.name} {self.version}" + (f": {self.detail}" if self.detail else "")

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "contract": self.name, "version": self.version, "detail": self.detail,
                "draft": self.draft.pk if self.draft is not None and self.draft.pk else None}


# --- names and documents ----------------------------------------------------------

_NOT_IN_PART = re.compile(r"[^A-Za-z0-9_]+")


def name_part(text: str) -> str:
    """One part of a dotted contract name: letters, digits and underscores (a folder and a module name)."""
    part = _NOT_IN_PART.sub("_", str(text)).strip("_").lower()
    if not part:
        raise CannotDraft(f"{text!r} leaves nothing to name a contract part with")
    return f"n{part}" if part[0].isdigit() else part


def contract_parts_for(dataset_name: str, owner: Team) -> list[str]:
    """A dataset's contract name parts: its dotted name's parts (`wh.sales.orders` ->
    wh / sales / orders); a one-part name goes under its owner team's slug."""
    parts = [name_part(p) for p in re.split(r"[./]", dataset_name) if p.strip()]
    if len(parts) == 1:
        parts.insert(0, name_part(owner.slug))
    return parts


def dataframe_document(parts: list[str], *, owner: Team, columns: list[dict], datasets: list[Dataset] | list[dict],
                       description: str = "", version: str = FIRST_VERSION, unique: list[str] | None = None) -> dict:
    """A dataframe contract document in the exporter's shape. `columns`: dicts with name,
    dtype, nullable and optionally unique, description, checks."""
    section = {"name": ".".join(parts), "domain": parts[0], "subdomains": parts[1:-1], "entity": parts[-1],
               "version": version, "owner": owner.slug, "schema_type": "dataframe",
               "description": description.strip() or None}
    written = []
    for column in columns:
        entry: dict[str, Any] = {"name": column["name"], "dtype": column["dtype"], "nullable": bool(column["nullable"]),
                                 "coerce": False, "required": True, "unique": bool(column.get("unique", False))}
        if column.get("description"):
            entry["description"] = column["description"]
        entry["checks"] = list(column.get("checks") or [])
        written.append(entry)
    named = [d if isinstance(d, dict) else {"namespace": d.namespace, "name": d.name} for d in datasets]
    config = dict(DEFAULT_CONFIG, unique=unique or None)
    return {"schema": section, "datasets": named, "config": config, "columns": written}


def _with_version(document: dict, version: str) -> dict:
    return {**document, "schema": {**document["schema"], "version": version}}


def _bumped(latest: str, bump: str) -> str:
    v = Version(latest)
    major, minor, micro = (list(v.release) + [0, 0, 0])[:3]
    if bump == "major":
        return f"{major + 1}.0"
    if bump == "patch":
        return f"{major}.{minor}.{micro + 1}"
    return f"{major}.{minor + 1}"


# --- saving a generator's draft ------------------------------------------------------

def save_generated_draft(document: dict, *, origin: str, source: str, owner: Team, dataset: Dataset | None = None,
                         notes: list[str] | None = None, by=None, dry_run: bool = False) -> DraftChange:
    """Put a generator's document in the owner team's queue, or say why not.

    1. a pending draft of the contract that a person edited (or wrote) is kept as it is;
       one the generator wrote is refreshed when the document changed, else unchanged;
    2. a contract already published: the same content as its latest version is
       unchanged; other content is drafted as the next version, numbered by the
       checker's suggested bump (a breaking change gets a major);
    3. a draft of that same content that was already approved or discarded is kept:
       the review said its word on it;
    4. otherwise a new draft, audited. In a dry run nothing is written."""
    name = document["schema"]["name"]
    notes = list(notes or [])
    with transaction.atomic():
        pending = Draft.objects.select_for_update().filter(contract_name=name, state=DraftState.PENDING).first()
        if pending is not None:
            document = _with_version(document, pending.version)
            checksum = document_checksum(document)
            if pending.edited_at is not None or pending.origin == DraftOrigin.PERSON:
                who = pending.edited_by.get_username() if pending.edited_by else "a person"
                return DraftChange(KEPT, name, pending.version,
                                   f"edited by {who} on {pending.edited_at or pending.created_at:%Y-%m-%d %H:%M}; "
                                   "left as it is", pending)
            if pending.checksum == checksum:
                return DraftChange(SAME, name, pending.version, "", pending)
            changed = _changed_columns(pending.document, document)
            if not dry_run:
                before = {"checksum": pending.checksum}
                pending.document, pending.checksum, pending.generated_checksum = document, checksum, checksum
                pending.notes = notes
                pending.save(update_fields=["document", "checksum", "generated_checksum", "notes"])
                AuditEvent.record(by, DraftAction.REFRESHED, pending, before=before,
                                  after={"checksum": checksum, "source": source})
            return DraftChange(REFRESHED, name, pending.version, changed, pending)
        contract = Contract.objects.filter(name=name).first()
        latest = contract.latest_version() if contract is not None else None
        if latest is not None:
            document = _with_version(document, latest.version)
            if latest.same_content_as(document):
                return DraftChange(SAME, name, latest.version, "published with this content")
            report = check_in_required_modes(contract, [latest.document], document)
            document = _with_version(document, _bumped(latest.version, report.suggested_bump or "minor"))
        version = document["schema"]["version"]
        checksum = document_checksum(document)
        reviewed = (Draft.objects.filter(contract_name=name, version=version, generated_checksum=checksum)
                    .exclude(state=DraftState.PENDING).select_related("reviewed_by").order_by("-pk").first())
        if reviewed is not None:
            return DraftChange(KEPT, name, version, f"this content was already {reviewed.get_state_display()}", reviewed)
        detail = f"next version after {latest.version}" if latest is not None else ""
        if dry_run:
            return DraftChange(CREATED, name, version, detail)
        draft = Draft.objects.create(
            contract_name=name, version=version, schema_type=document["schema"]["schema_type"], owner_team=owner,
            document=document, checksum=checksum, generated_checksum=checksum, origin=origin, source=source,
            dataset=dataset, notes=notes)
        AuditEvent.record(by, DraftAction.CREATED, draft, after={
            "contract": name, "version": version, "origin": origin, "source": source, "owner_team": owner.slug})
    return DraftChange(CREATED, name, version, detail, draft)


def _changed_columns(old: dict, new: dict) -> str:
    before = {c["name"]: c for c in old.get("columns") or []}
    after = {c["name"]: c for c in new.get("columns") or []}
    parts = []
    if added := sorted(set(after) - set(before)):
        parts.append("columns added: " + ", ".join(added))
    if removed := sorted(set(before) - set(after)):
        parts.append("columns removed: " + ", ".join(removed))
    if changed := sorted(n for n in set(before) & set(after) if before[n] != after[n]):
        parts.append("columns changed: " + ", ".join(changed))
    return "; ".join(parts) or "the document changed"


# --- the review -------------------------------------------------------------------

def gate_verdict(draft: Draft) -> list[str]:
    """What the publish gate would refuse in the draft (empty: it passes)."""
    return gate_errors(draft.document)


def approve_draft(draft: Draft, *, by) -> PublishOutcome:
    """A member of the owner team approves a pending draft; then the publish gate sees it.

    1. only a member of the owner team (or a governance admin) may (PermissionDenied);
    2. the draft is locked and must still be pending;
    3. the publish gate runs on its document: published (or already published with this
       content) -> the draft is PUBLISHED; breaking -> a change request opens and the
       draft is CHANGE_REQUESTED; refused -> DraftRefused, and nothing is recorded;
    4. the approval is audited with the gate's outcome, in the same transaction."""
    draft.require_reviewer(by, "approve")
    with transaction.atomic():
        locked = Draft.objects.select_for_update().get(pk=draft.pk)
        if not locked.is_pending:
            raise RegistryError(f"{locked} was already {locked.get_state_display()}.")
        outcome = publish_document(locked.document, by=by)
        if outcome.status == REFUSED:
            raise DraftRefused(outcome)
        locked.state = DraftState.CHANGE_REQUESTED if outcome.status == BREAKING else DraftState.PUBLISHED
        locked.reviewed_by, locked.reviewed_at = person_of(by), timezone.now()
        locked.outcome = outcome.message
        locked.change_request_id = outcome.change_request.pk if outcome.change_request is not None else None
        locked.save(update_fields=["state", "reviewed_by", "reviewed_at", "outcome", "change_request_id"])
        AuditEvent.record(by, DraftAction.APPROVED, locked, before={"state": DraftState.PENDING}, after={
            "state": locked.state, "gate": outcome.status, "change_request": locked.change_request_id,
            "contract": locked.contract_name, "version": locked.version})
    draft.refresh_from_db()
    return outcome


# --- drafting from an observed schema ---------------------------------------------

def observed_columns(dataset: Dataset, *, dialect: str | None = None) -> list[dict]:
    """The dataset's observed columns with canonical dtypes (nullable: the facet does not say).
    CannotDraft when there is no schema, or names every type that cannot be mapped."""
    schema = observed_schemas_of([dataset.pk]).get(dataset.pk)
    if schema is None or not schema["columns"]:
        raise CannotDraft(f"{dataset} has no observed schema: no lineage event or dataset event has carried a "
                          "schema facet for it yet.")
    untyped = [c["name"] for c in schema["columns"] if not c.get("type")]
    if untyped:
        raise CannotDraft(f"{dataset}: its observed schema lists {', '.join(map(repr, untyped))} without a type (a "
                          "partial schema, e.g. dbt's documented columns without `dbt docs generate`); nothing was "
                          "guessed: send a schema facet with every column's type, or import the dbt catalog "
                          "(import_dbt --catalog).")
    dialect = dialect or dialect_of_namespace(dataset.namespace)
    if dialect is None:
        raise CannotDraft(f"{dataset}: its namespace {dataset.namespace!r} does not say which warehouse it is in, so "
                          "its types cannot be read; name the dialect (postgres, snowflake, bigquery, spark, duckdb, "
                          "trino).")
    columns, problems = [], []
    for column in schema["columns"]:
        try:
            dtype = canonical_dtype(column.get("type") or "", dialect, where=f"column {column['name']!r} of {dataset}")
        except UnmappableType as exc:
            problems.append(str(exc))
            continue
        columns.append({"name": column["name"], "dtype": dtype, "nullable": True,
                        "description": column.get("description") or ""})
    if problems:
        raise CannotDraft("; ".join(problems))
    return columns


def draft_from_observed_schema(dataset: Dataset, *, by=None, dialect: str | None = None,
                               dry_run: bool = False) -> DraftChange:
    """Draft a contract for an owned dataset with an observed schema and no contract."""
    if dataset.owner_team_id is None:
        raise CannotDraft(f"{dataset} has no owner team; a team claims it before a contract is drafted for it.")
    binding = DatasetBinding.objects.filter(dataset=dataset).select_related("contract").first()
    if binding is not None:
        raise CannotDraft(f"{dataset} already has a contract, {binding.contract.name}; propose a new version of it.")
    owner = dataset.owner_team
    document = dataframe_document(contract_parts_for(dataset.name, owner), owner=owner,
                                  columns=observed_columns(dataset, dialect=dialect), datasets=[dataset],
                                  description=dataset.description)
    return save_generated_draft(document, origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}", owner=owner,
                                dataset=dataset, by=by, dry_run=dry_run,
                                notes=["nullable: the schema facet does not say; every column is drafted nullable"])


def datasets_to_draft() -> list[Dataset]:
    """Owned datasets with an observed schema and no contract (what `draft_contracts` offers)."""
    candidates = list(Dataset.objects.filter(owner_team__isnull=False, contract_binding__isnull=True)
                      .select_related("owner_team"))
    observed = observed_schemas_of([d.pk for d in candidates])
    return [d for d in candidates if observed.get(d.pk, {}).get("columns")]


# --- contracts as code --------------------------------------------------------------

ORIGINS = {DraftOrigin.DBT: "drafted from dbt artefacts by import_dbt",
           DraftOrigin.OBSERVED: "drafted from the dataset's observed schema by draft_contracts",
           DraftOrigin.PERSON: "drafted in the registry"}


def write_into_tree(draft: Draft | DraftChange, root: Path) -> str:
    """Write a draft into the contracts tree at `root`, for review in a pull request; returns
    a report line. Files already there are left alone unless they hold exactly the draft's
    document (the team may be editing them in its pull request)."""
    draft = draft.draft if isinstance(draft, DraftChange) else draft
    if draft is None or not draft.is_pending:
        return ""  # a reviewed draft is published (or waits in a change request): the tree has its own copy
    folder = tree_folder(draft.document, Path(root))
    shown = folder.relative_to(Path(root)) if folder.is_relative_to(Path(root)) else folder
    if (folder / "schema.yaml").exists() or (folder / "schema.py").exists():
        try:
            same = load_yaml_file(folder / "schema.yaml") == draft.document
        except Exception:  # an unreadable or missing YAML is someone's work in progress
            same = False
        return f"unchanged {shown}" if same else f"kept      {shown}: files there differ from the draft; left as they are"
    try:
        written = place_in_tree(draft.document, into=Path(root), origin=ORIGINS.get(draft.origin, ORIGINS["person"]))
    except ImportFailed as exc:
        raise CannotDraft(f"{draft}: cannot be written into {root}: {exc}") from None
    return "wrote     " + ", ".join(str(p.relative_to(Path(root))) for p in written)
