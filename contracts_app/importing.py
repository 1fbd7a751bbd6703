"""Import: an ODCS contract -> a contract in the contracts-as-code tree.

`import_odcs_file(path, into=root)`:

1. read the ODCS YAML and map it to a contract document (`registry_client.odcs.from_odcs`),
   collecting what did not fit, each with its path;
2. write it in a scratch folder beside its place in the tree: for a dataframe contract a
   `schema.py` a person can edit (a Pandera class) and the `schema.yaml` the exporter makes
   of it; for event and api contracts the `schema.yaml`;
3. run the gates every document passes (template, dtypes, location) and, for a dataframe
   contract, check that exporting the generated class gives back exactly the imported document;
4. only then move the files into place. A contract already in the tree is refused, and a
   failure at any step leaves the tree as it was.
"""

from __future__ import annotations

import keyword
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry_client.odcs import OdcsError, from_odcs
from registry_client.versions import version_to_folder

from contracts_app.gates import Problem, check_location, validate_document
from contracts_app.yamlio import ContractYamlError, dump_yaml, load_yaml_file

__all__ = ["ImportFailed", "ImportOutcome", "import_odcs_file", "place_in_tree", "render_schema_py"]


class ImportFailed(Exception):
    """The ODCS file cannot become a contract in the tree; the message says what and where.

    `problems` lists every problem found in the file, each with its JSON path."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems) if problems else [message]
        super().__init__(message)


def _report(path: Path, problems: list[str]) -> ImportFailed:
    return ImportFailed(f"{path}: {len(problems)} problem(s), nothing was written:\n  " + "\n  ".join(problems),
                        problems)


# Where a gate's finding about the imported document sits in the ODCS file.
def _odcs_path(problem: Problem, document: dict) -> str:
    where = problem.where
    if where.startswith("schema."):
        key = where.split(".", 1)[1]
        return {"name": "id", "domain": "id", "subdomains": "id", "entity": "id", "owner": "team.name",
                "version": "version", "description": "description.purpose"}.get(key.split(".")[0].split("[")[0], where)
    if where.startswith("column "):
        names = [c.get("name") for c in document.get("columns") or []]
        label, _, rest = where[len("column "):].partition(" ")
        name = label.strip("'\"")
        if name in names:
            return f"schema[0].properties[{names.index(name)}]" + (f" {rest}" if rest else "")
    return where


@dataclass
class ImportOutcome:
    name: str
    version: str
    schema_type: str
    folder: Path
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_ANNOTATIONS = {
    "str": "str", "int32": "np.int32", "int64": "np.int64", "float32": "np.float32", "float64": "np.float64",
    "bool": "bool", "datetime64[ns]": "Timestamp", "List[str]": "List[str]", "List[int64]": "List[int]",
    "List[float64]": "List[float]", "List[bool]": "List[bool]",
}
_RESERVED = {"Config", "to_schema", "validate", "schema_meta", "contract_header", "contract_info"}


def _class_name(entity: str) -> str:
    return "".join(part.capitalize() for part in entity.split("_") if part) + "Schema"


def _kwargs_source(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in kwargs.items())


_ODCS_ORIGIN = "imported from an Open Data Contract Standard contract by import_odcs"


def render_schema_py(document: dict, *, origin: str = _ODCS_ORIGIN) -> str:
    """An editable Pandera class that exports to `document` (a dataframe contract);
    `origin` completes its docstring ("drafted from dbt artefacts by import_dbt")."""
    schema, meta, config = document["schema"], document.get("meta") or {}, document["config"]
    decorator = {"domain": schema["domain"], "subdomains": schema["subdomains"], "entity": schema["entity"],
                 "version": schema["version"], "owner": schema["owner"]}
    if schema.get("description"):
        decorator["description"] = schema["description"]
    meta_source = f"SchemaMeta({_kwargs_source(meta)})" if meta else None
    lines = [
        f'"""{schema["name"]} {schema["version"]}: {origin}.',
        "Edit it like any other contract, then run export_contracts.\"\"\"",
        "",
        "from typing import List, Optional  # noqa: F401, UP035 - pandera reads typing's spellings",
        "",
        "import numpy as np  # noqa: F401",
        "import pandera.pandas as pa",
        "from pandas import Timestamp  # noqa: F401",
        "from registry_client.authoring import BaseDataFrameSchema, ContractMixin, SchemaMeta, register_dataframe_schema",
        "",
    ]
    if document.get("datasets"):
        lines += [f"DATASETS = {document['datasets']!r}", ""]
    lines += ["", "@register_dataframe_schema("]
    lines += [f"    {key}={value!r}," for key, value in decorator.items()]
    if meta_source:
        lines.append(f"    meta={meta_source},")
    lines += [")", f"class {_class_name(schema['entity'])}(ContractMixin, BaseDataFrameSchema):"]
    # pandera (and pandas) load here, when a class is written, not with every command
    from registry_client.pandera_models import field_kwargs

    for index, column in enumerate(document.get("columns") or []):
        annotation = _ANNOTATIONS[column["dtype"]]
        if column.get("required", True) is False:
            annotation = f"Optional[{annotation}]"
        kwargs = field_kwargs(column, schema["name"])
        kwargs["coerce"] = bool(column.get("coerce", False))
        attribute = column["name"]
        if (not attribute.isidentifier() or keyword.iskeyword(attribute) or attribute.startswith("_")
                or attribute in _RESERVED):
            attribute = f"column_{index}"
            kwargs["alias"] = column["name"]
        lines.append(f"    {attribute}: {annotation} = pa.Field({_kwargs_source(kwargs)})")
    lines += ["", "    class Config:"]
    lines += [f"        {key} = {value!r}" for key, value in config.items()]
    return "\n".join(lines) + "\n"


def _imported_yaml(document: dict, source: Path) -> str:
    return dump_yaml(document, header=f"# Imported from the ODCS contract {source.name} by import_odcs.\n")


def tree_folder(document: dict, into: Path) -> Path:
    """Where a document sits in the tree rooted at `into`: domains/<parts…>/<vX_Y>/."""
    section = document["schema"]
    return Path(into, "domains", section["domain"], *section["subdomains"], section["entity"],
                version_to_folder(section["version"]))


def import_odcs_file(path: Path, *, into: Path, name: str | None = None, team: str | None = None) -> ImportOutcome:
    """Import one ODCS file into the tree rooted at `into` (it holds `domains/`).

    `name` and `team` name the contract and its owner team where the file does not
    (`import_odcs --id`, `--team`). Every problem found is reported at once."""
    path, into = Path(path), Path(into)
    try:
        odcs = load_yaml_file(path)
    except (OSError, ContractYamlError) as exc:
        raise ImportFailed(f"{path}: {exc}") from None
    try:
        imported = from_odcs(odcs, name=name, team=team)
    except OdcsError as exc:
        raise _report(path, exc.problems) from None
    document, section = imported.document, imported.document["schema"]
    problems = validate_document(document, str(path))
    if problems:
        raise _report(path, [f"{_odcs_path(p, document)}: {p.message}" for p in problems])
    folder = tree_folder(document, into)
    if (folder / "schema.yaml").exists() or (folder / "schema.py").exists():
        raise ImportFailed(f"{path}: {section['name']} {section['version']} is already in the tree at {folder}; "
                           "a published version never changes: import it as a new version")
    outcome = ImportOutcome(section["name"], section["version"], section["schema_type"], folder, notes=imported.notes)
    try:
        outcome.written = place_in_tree(document, into=into, origin=_ODCS_ORIGIN,
                                        yaml_text=_imported_yaml(document, path))
    except ImportFailed as exc:
        raise ImportFailed(f"{path}: {exc}") from None
    return outcome


def place_in_tree(document: dict, *, into: Path, origin: str, yaml_text: str | None = None) -> list[Path]:
    """Write a document that passed the gates into the tree at `into`: a `schema.py` and the
    `schema.yaml` exported from it (dataframe), or the `schema.yaml` (event, api; `yaml_text`
    or the plain dump). Staged in a scratch folder, checked (export gives back exactly
    `document`; the location rules), then moved into place: a failure leaves the tree as it
    was. Returns the files written; replaces files already there."""
    into = Path(into)
    section = document["schema"]
    relative = tree_folder(document, Path())
    folder = into / relative
    written: list[Path] = []
    into.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".import-", dir=into))
    try:
        staged = scratch / relative
        staged.mkdir(parents=True)
        if section["schema_type"] == "dataframe":
            from contracts_app.exporting import (
                export_file,  # pandera: only when a class is exported
            )

            (staged / "schema.py").write_text(render_schema_py(document, origin=origin), encoding="utf-8")
            result = export_file(staged / "schema.py", scratch)
            if result.status == "error":
                raise ImportFailed(f"the generated schema.py does not export: {result.error}")
            exported = load_yaml_file(staged / "schema.yaml")
            if exported != document:
                differ = sorted(k for k in {*exported, *document} if exported.get(k) != document.get(k))
                raise ImportFailed(f"the generated schema.py exports a different contract "
                                   f"(sections {', '.join(differ)}); nothing was written")
            names = ["schema.py", "schema.yaml"]
        else:
            text = yaml_text if yaml_text is not None else dump_yaml(document, header=f"# {origin[0].upper()}{origin[1:]}.\n")
            (staged / "schema.yaml").write_text(text, encoding="utf-8")
            problems = check_location(document, staged / "schema.yaml", scratch)
            if problems:
                raise ImportFailed("; ".join(map(str, problems)))
            names = ["schema.yaml"]
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            os.replace(staged / name, folder / name)
            written.append(folder / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return written
