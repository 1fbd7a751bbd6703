"""The publish gates for contract documents.

Used by ``validate_contracts``, by ``export_contracts`` (on what it is about to
write) and by publish. For one document, in order:

1. it must name a ``schema.schema_type`` that has a template;
2. it must validate against that template (a Draft 2020-12 JSON Schema), and
   event/api sections must themselves be valid Draft 2020-12 schemas;
3. dataframe columns must carry canonical dtypes: an unknown dtype and a merely
   non-canonical one are refused with different messages, because the second
   means the YAML did not come from the current exporter (re-export it).

Every problem in a document is reported at once; nothing is fixed silently.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from packaging.version import Version
from registry_client.compat import ecma
from registry_client.dtypes import UnknownDtypeError, canonicalize_dtype, is_canonical
from registry_client.versions import InvalidVersionError, folder_to_version, validate_version

from registry.identifiers import identifier_problem

from .yamlio import ContractYamlError, load_yaml_file

__all__ = [
    "TEMPLATES_DIR",
    "Problem",
    "Template",
    "TemplateError",
    "ContractDocument",
    "load_templates",
    "validate_document",
    "check_location",
    "discover_contract_documents",
    "validate_tree",
]

TEMPLATES_DIR = Path(__file__).resolve().parent / "contract_templates"


@dataclass(frozen=True)
class Problem:
    """One reason a document cannot be published."""

    source: str  # the file (or "<document>")
    contract: str | None  # the dotted name, when the document has one
    where: str  # e.g. "column 'viability'", "schema.version", "document"
    message: str
    code: str  # schema-type | template | unknown-dtype | non-canonical-dtype | identifier | structure | location | yaml

    def __str__(self) -> str:
        contract = f"{self.contract}: " if self.contract else ""
        return f"{self.source}: {contract}{self.where}: {self.message}"


class TemplateError(RuntimeError):
    """A template that is not a valid Draft 2020-12 schema: the gate cannot run at all."""


@dataclass(frozen=True)
class Template:
    schema_type: str
    version: str
    path: Path
    validator: Draft202012Validator


@functools.cache
def load_templates(directory: Path = TEMPLATES_DIR) -> dict[str, Template]:
    """The newest template of each schema_type, each checked and compiled once per process."""
    found: dict[str, Template] = {}
    for type_dir in sorted(p for p in Path(directory).iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        versions: list[tuple[Any, str, Path]] = []
        for version_dir in type_dir.iterdir():
            path = version_dir / "schema.yaml"
            if not path.is_file():
                continue
            try:
                version = folder_to_version(version_dir.name)
            except InvalidVersionError as exc:
                raise TemplateError(f"template folder {version_dir}: {exc}") from None
            versions.append((Version(version), version, path))
        if not versions:
            continue
        _, version, path = max(versions)
        try:
            body = load_yaml_file(path)
        except ContractYamlError as exc:
            raise TemplateError(f"template {path}: {exc}") from None
        if not isinstance(body, dict) or body.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            raise TemplateError(f"template {path} must declare $schema: https://json-schema.org/draft/2020-12/schema")
        try:
            Draft202012Validator.check_schema(body)
        except SchemaError as exc:
            raise TemplateError(f"template {path} is not a valid Draft 2020-12 schema: {exc.message}") from None
        found[type_dir.name] = Template(type_dir.name, version, path, Draft202012Validator(body))
    return found


def _contract_name(document: Any) -> str | None:
    if isinstance(document, Mapping) and isinstance(document.get("schema"), Mapping):
        name = document["schema"].get("name")
        return name if isinstance(name, str) else None
    return None


def _where(document: Mapping, path: Iterable[Any]) -> str:
    parts = list(path)
    if len(parts) >= 2 and parts[0] == "columns" and isinstance(parts[1], int):
        columns = document.get("columns") or []
        column = columns[parts[1]] if parts[1] < len(columns) else None
        name = column.get("name") if isinstance(column, Mapping) else None
        label = f"column {name!r}" if isinstance(name, str) else f"columns[{parts[1]}]"
        rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts[2:])
        return label + (f" {rest.lstrip('.')}" if rest else "")
    if not parts:
        return "document"
    text = str(parts[0])
    for part in parts[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _template_problems(document: Mapping, template: Template, source: str, contract: str | None) -> list[Problem]:
    errors = sorted(template.validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    problems = []
    for error in errors:
        message = error.message
        if error.validator in ("oneOf", "anyOf") and error.context:
            best = min(error.context, key=lambda e: len(e.message))
            message = f"{message.split(' is not valid under')[0]} is not valid: {best.message}"
        if error.validator == "additionalProperties" and list(error.absolute_path)[-2:-1] == ["checks"]:
            message = f"unknown check: {message}"
        problems.append(Problem(source, contract, _where(document, error.absolute_path), message, "template"))
    return problems


def _json_schema_problems(document: Mapping, source: str, contract: str | None) -> list[Problem]:
    sections: list[tuple[str, Any]] = []
    for key in ("payload", "request", "response"):
        if key in document:
            sections.append((key, document[key]))
    callbacks = document.get("callbacks")
    if isinstance(callbacks, Mapping):
        sections.extend((f"callbacks.{name}", body) for name, body in callbacks.items())
    problems = []
    for where, body in sections:
        if not isinstance(body, (dict, bool)):
            continue  # the template already said so
        try:
            # patterns are ECMA-262 (named groups and all), not Python's `re`
            Draft202012Validator.check_schema(body, format_checker=ecma.FORMAT_CHECKER)
        except SchemaError as exc:
            at = "/".join(str(p) for p in exc.absolute_path)
            problems.append(Problem(
                source, contract, where,
                f"is not a valid Draft 2020-12 JSON Schema{f' at {at}' if at else ''}: {exc.message}", "template",
            ))
    return problems


def _identifier_problems(document: Mapping, source: str, contract: str | None) -> list[Problem]:
    """The contract's name, its parts and its owner team are identifiers: no bidirectional
    controls or combining marks (registry.identifiers)."""
    section = document.get("schema")
    if not isinstance(section, Mapping):
        return []
    fields = [(f"schema.{key}", section.get(key)) for key in ("name", "domain", "entity", "owner")]
    subdomains = section.get("subdomains")
    if isinstance(subdomains, list):
        fields += [(f"schema.subdomains[{i}]", part) for i, part in enumerate(subdomains)]
    return [Problem(source, contract, where, problem, "identifier")
            for where, value in fields if isinstance(value, str) and (problem := identifier_problem(value))]


def _structure_problems(document: Mapping, source: str, contract: str | None) -> list[Problem]:
    """What JSON Schema cannot say: column names unique, config.unique naming real columns."""
    columns = document.get("columns")
    if not isinstance(columns, list):
        return []
    names = [c.get("name") for c in columns if isinstance(c, Mapping) and isinstance(c.get("name"), str)]
    problems = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            problems.append(Problem(source, contract, f"column {name!r}", "is declared more than once", "structure"))
        seen.add(name)
    config = document.get("config")
    unique = config.get("unique") if isinstance(config, Mapping) else None
    if isinstance(unique, list):
        for name in unique:
            if isinstance(name, str) and name not in seen:
                problems.append(Problem(source, contract, "config.unique", f"names {name!r}, which is not a column", "structure"))
    return problems


def _dtype_problems(document: Mapping, source: str, contract: str | None) -> list[Problem]:
    columns = document.get("columns")
    if not isinstance(columns, list):
        return []
    problems = []
    for index, column in enumerate(columns):
        if not isinstance(column, Mapping) or not isinstance(column.get("dtype"), str):
            continue  # the template reports a missing or non-string dtype
        dtype = column["dtype"]
        name = column.get("name")
        where = f"column {name!r}" if isinstance(name, str) else f"columns[{index}]"
        try:
            canonical = canonicalize_dtype(dtype)
        except UnknownDtypeError as exc:
            problems.append(Problem(
                source, contract, where, f"{exc}. Consumers cannot rebuild this column.", "unknown-dtype",
            ))
            continue
        if not is_canonical(dtype):
            problems.append(Problem(
                source, contract, where,
                f"dtype {dtype!r} is not canonical (the exporter writes {canonical!r}): this YAML was not produced "
                "by the current exporter; re-export it with `manage.py export_contracts` instead of editing it",
                "non-canonical-dtype",
            ))
    return problems


def validate_document(document: Any, source: str = "<document>") -> list[Problem]:
    """Every reason ``document`` cannot be published; an empty list means it passes the gates."""
    contract = _contract_name(document)
    if not isinstance(document, Mapping):
        return [Problem(source, None, "document", f"must be a mapping, not {type(document).__name__}", "structure")]
    section = document.get("schema")
    schema_type = section.get("schema_type") if isinstance(section, Mapping) else None
    templates = load_templates()
    if schema_type is None:
        return [Problem(
            source, contract, "schema.schema_type",
            f"is missing; every contract declares one of {', '.join(sorted(templates))}", "schema-type",
        )]
    if not isinstance(schema_type, str) or schema_type not in templates:
        return [Problem(
            source, contract, "schema.schema_type",
            f"{schema_type!r} has no template; expected one of {', '.join(sorted(templates))}", "schema-type",
        )]
    problems = _template_problems(document, templates[schema_type], source, contract)
    problems += _json_schema_problems(document, source, contract)
    problems += _identifier_problems(document, source, contract)
    problems += _structure_problems(document, source, contract)
    if schema_type == "dataframe":
        problems += _dtype_problems(document, source, contract)
    return problems


def check_location(document: Any, path: Path, root: Path) -> list[Problem]:
    """A document must sit at ``domains/<parts…>/<version folder>/schema.yaml`` under ``root``."""
    source = str(path)
    contract = _contract_name(document)
    section = document.get("schema") if isinstance(document, Mapping) else None
    if not isinstance(section, Mapping):
        return []
    try:
        relative = Path(path).resolve().relative_to((Path(root) / "domains").resolve())
    except ValueError:
        return [Problem(source, contract, "location", f"is not under {Path(root) / 'domains'}", "location")]
    folders = relative.parts[:-1]
    problems = []
    if len(folders) < 3:
        return [Problem(source, contract, "location", "expected domains/<domain>/<subdomains…>/<entity>/<vX_Y>/schema.yaml", "location")]
    name = section.get("name")
    from_path = ".".join(folders[:-1])
    if isinstance(name, str) and name != from_path:
        problems.append(Problem(
            source, contract, "schema.name",
            f"{name!r} does not match its folders, which spell {from_path!r}", "location",
        ))
    version = section.get("version")
    try:
        folder_version = folder_to_version(folders[-1])
    except InvalidVersionError as exc:
        problems.append(Problem(source, contract, "location", str(exc), "location"))
    else:
        try:
            validate_version(version)
        except InvalidVersionError:
            pass  # the template reports a malformed version
        else:
            if version != folder_version:
                problems.append(Problem(
                    source, contract, "schema.version",
                    f"{version!r} does not match its folder {folders[-1]!r} (version {folder_version!r})", "location",
                ))
    return problems


@dataclass
class ContractDocument:
    """One ``schema.yaml`` found under a contracts root."""

    path: Path
    relative: str
    document: Any = None
    problems: list[Problem] = field(default_factory=list)  # problems reading it

    @property
    def name(self) -> str | None:
        return _contract_name(self.document)


def walk_contract_files(directory: Path, filename: str) -> list[Path]:
    found = []
    for path in sorted(directory.rglob(filename)):
        rel = path.relative_to(directory).parts
        # skip notebook checkpoints, caches and other hidden folders
        if any(part.startswith((".", "__")) for part in rel[:-1]):
            continue
        found.append(path)
    return found


def discover_contract_documents(root: Path) -> list[ContractDocument]:
    """Every ``<root>/domains/**/v*/schema.yaml``, loaded, sorted by path."""
    root = Path(root)
    domains = root / "domains"
    if not domains.is_dir():
        raise FileNotFoundError(f"no contracts under {root}: expected a 'domains' folder there")
    found = []
    for path in walk_contract_files(domains, "schema.yaml"):
        if not path.parent.name.startswith("v"):
            continue
        item = ContractDocument(path=path, relative=str(path.relative_to(root)))
        try:
            item.document = load_yaml_file(path)
        except ContractYamlError as exc:
            item.problems.append(Problem(item.relative, None, "document", str(exc), "yaml"))
        found.append(item)
    return found


def validate_tree(root: Path) -> list[tuple[ContractDocument, list[Problem]]]:
    """Run the gates on every document under ``root``; also refuses two documents with one name and version."""
    results = []
    seen: dict[tuple[str, str], str] = {}
    for item in discover_contract_documents(root):
        problems = list(item.problems)
        if item.document is not None or not problems:
            problems += validate_document(item.document, item.relative)
            problems += [
                Problem(item.relative, p.contract, p.where, p.message, p.code)
                for p in check_location(item.document, item.path, root)
            ]
        section = item.document.get("schema") if isinstance(item.document, Mapping) else None
        if isinstance(section, Mapping) and isinstance(section.get("name"), str) and isinstance(section.get("version"), str):
            key = (section["name"], section["version"])
            if key in seen:
                problems.append(Problem(
                    item.relative, key[0], "schema.version", f"{key[1]!r} is also declared by {seen[key]}", "location",
                ))
            seen.setdefault(key, item.relative)
        results.append((item, problems))
    return results
