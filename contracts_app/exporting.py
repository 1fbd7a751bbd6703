"""Export: authored Pandera contracts -> canonical ``schema.yaml`` documents.

For every ``<root>/domains/**/v*/schema.py``:

1. import it under a module name unique to its path (so two ``schema.py`` files
   never collide in ``sys.modules``), inside synthetic packages that mirror the
   folders, so relative imports inside a schema file keep working;
2. find the DataFrameModel it registers with ``@register_dataframe_schema``
   (exactly one per file: one folder is one version of one contract);
3. enforce the placement rules (folders spell the dotted name, the version
   folder spells the version);
4. build the document (dtypes through ``canonicalize_dtype``, checks through
   the shared check vocabulary; unrepresentable checks are skipped with a
   warning naming the contract, the column and the check);
5. run the gates on it, and write ``schema.yaml`` beside ``schema.py`` when its
   bytes differ (or, with ``check=True``, only report that they differ).

The output is deterministic: the same classes always give the same bytes.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandera.pandas as pa
from registry_client.checks import (
    SkippedCheckWarning,
    UnserializableCheck,
    describe_check,
    serialize_check,
)
from registry_client.dtypes import UnknownDtypeError, canonicalize_dtype
from registry_client.mixins import ContractMixin
from registry_client.odcs import portable_physical_type
from registry_client.registration import ContractPathError, enforce_registry_rules, registered_info

from .gates import check_location, validate_document, walk_contract_files
from .yamlio import GENERATED_HEADER, ContractYamlError, dump_yaml, load_yaml

__all__ = [
    "ExportError",
    "ExportResult",
    "ExportReport",
    "discover_schema_sources",
    "import_schema_module",
    "registered_models",
    "build_document",
    "render_document",
    "export_tree",
]


class ExportError(Exception):
    """A schema.py that cannot be exported; the message says what and where."""


@dataclass
class ExportResult:
    source: Path  # schema.py
    relative: str  # schema.py relative to the root
    status: str  # written | unchanged | stale | missing | error
    name: str | None = None
    version: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def target(self) -> Path:
        return self.source.with_name("schema.yaml")


@dataclass
class ExportReport:
    root: Path
    results: list[ExportResult] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)  # generated YAML whose schema.py is gone

    def with_status(self, *statuses: str) -> list[ExportResult]:
        return [r for r in self.results if r.status in statuses]

    @property
    def ok(self) -> bool:
        return not self.with_status("error", "stale", "missing") and not self.orphans


# --- discovery and import ---------------------------------------------------

def discover_schema_sources(root: Path) -> list[Path]:
    """Every ``<root>/domains/**/v*/schema.py``, sorted, skipping hidden and cache folders."""
    domains = Path(root) / "domains"
    if not domains.is_dir():
        raise ExportError(f"no contracts under {root}: expected a 'domains' folder there")
    return [p for p in walk_contract_files(domains, "schema.py") if p.parent.name.startswith("v")]


def _tree_package(root: Path) -> str:
    # one synthetic top-level package per contracts root, so two roots never collide either
    digest = hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:12]
    return f"_contract_tree_{digest}"


def _forget_tree(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def _ensure_package(name: str, directory: Path) -> None:
    if name in sys.modules:
        return
    init = directory / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(directory)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        module = types.ModuleType(name)
        module.__path__ = [str(directory)]
        module.__package__ = name
        sys.modules[name] = module


def _module_name(path: Path, root: Path) -> tuple[str, list[tuple[str, Path]]]:
    relative = path.resolve().relative_to(Path(root).resolve())
    top = _tree_package(root)
    packages = [(top, Path(root).resolve())]
    name = top
    directory = Path(root).resolve()
    for part in relative.parts[:-1]:
        name += "." + part
        directory = directory / part
        packages.append((name, directory))
    return f"{name}.{path.stem}", packages


def import_schema_module(path: Path, root: Path) -> types.ModuleType:
    """Import one schema.py afresh under a name unique to its path.

    The source is compiled from the file each time (no bytecode cache), so an
    edited file is never exported from a stale ``.pyc``.
    """
    path = Path(path).resolve()
    module_name, packages = _module_name(path, root)
    importlib.invalidate_caches()
    for package_name, directory in packages:
        _ensure_package(package_name, directory)
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = module_name.rpartition(".")[0]
    sys.modules[module_name] = module
    try:
        code = compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - executing the author's contract is the point
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def registered_models(module: types.ModuleType) -> list[type]:
    """Registered contract classes defined in ``module`` itself (not imported into it)."""
    found = []
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, pa.DataFrameModel)
            and value.__module__ == module.__name__
            and registered_info(value) is not None
        ):
            found.append(value)
    return sorted(found, key=lambda cls: cls.__qualname__)


# --- the document -----------------------------------------------------------

def _unique_columns(value: Any) -> list[str] | None:
    """pandera takes ``unique = "a"`` or ``unique = ["a", "b"]``; the document always writes a list."""
    if not value:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _datasets_section(value: Any) -> list[dict[str, str]]:
    """A schema.py's module-level DATASETS as the document's `datasets:` section."""
    if not isinstance(value, list | tuple) or not all(
            isinstance(d, dict) and isinstance(d.get("namespace"), str) and isinstance(d.get("name"), str)
            for d in value):
        raise ExportError('DATASETS must be a list of {"namespace": ..., "name": ...} mappings (strings)')
    return [{"namespace": d["namespace"], "name": d["name"]} for d in value]


def build_document(model: type, *, on_warning: Callable[[str], None] | None = None,
                   datasets: Any = None) -> dict[str, Any]:
    """The canonical contract document for one registered DataFrameModel.

    `datasets` is the schema.py's module-level ``DATASETS`` (the datasets the
    contract describes, bound when a version is published), or None.

    Enforces the placement rules (unless relaxed). Unrepresentable checks are
    reported through ``on_warning`` (default: a :class:`SkippedCheckWarning`).
    Raises :class:`ExportError` when the class cannot be exported at all.
    """
    def warn(message: str) -> None:
        if on_warning is None:
            warnings.warn(message, SkippedCheckWarning, stacklevel=3)
        else:
            on_warning(message)

    if not issubclass(model, ContractMixin):
        raise ExportError(f"{model.__qualname__} must mix in ContractMixin (class X(ContractMixin, BaseDataFrameSchema))")
    try:
        info = enforce_registry_rules(model)
    except ContractPathError as exc:
        raise ExportError(str(exc)) from None
    if info.owner is None:
        raise ExportError(f"{info.name}: declare owner=<team slug> in @register_dataframe_schema")
    meta = model.schema_meta()
    try:
        schema = model.to_schema()
    except Exception as exc:  # pandera reports a bad model only when it builds the schema
        raise ExportError(f"{info.name}: pandera cannot build {model.__qualname__}: {exc}") from None

    section = info.to_dict()
    if not section["description"]:
        section["description"] = inspect.cleandoc(model.__dict__.get("__doc__") or "") or None

    config = {
        "strict": schema.strict,
        "coerce": bool(schema.coerce),
        "drop_invalid_rows": bool(schema.drop_invalid_rows),
        "ordered": bool(schema.ordered),
        "unique": _unique_columns(schema.unique),
        "add_missing_columns": bool(getattr(schema, "add_missing_columns", False)),
        "unique_column_names": bool(getattr(schema, "unique_column_names", False)),
    }
    if schema.index is not None:
        warn(f"{info.name}: the index of {model.__qualname__} is not part of the contract format; skipped")
    for check in schema.checks:
        warn(
            f"{info.name}: dataframe-wide check {describe_check(check)!r} has no representation in the "
            "contract format; skipped"
        )

    columns = []
    for name, column in schema.columns.items():
        if not isinstance(name, str):
            raise ExportError(f"{info.name}: column {name!r} is not named by a string")
        if getattr(column, "regex", False):
            raise ExportError(f"{info.name}: column {name!r} is a regex column, which the contract format cannot express")
        try:
            dtype = canonicalize_dtype(column.dtype)
        except UnknownDtypeError as exc:
            raise ExportError(f"{info.name}: column {name!r}: {exc}") from None
        entry: dict[str, Any] = {"name": name, "dtype": dtype}
        physical = (getattr(column, "metadata", None) or {}).get("physical_type")
        if physical is not None:
            if not isinstance(physical, str) or not physical.strip():
                raise ExportError(f"{info.name}: column {name!r}: metadata physical_type must be a type name (a string)")
            if physical != portable_physical_type(dtype):  # the portable spelling is what the export writes anyway
                entry["physical_type"] = physical
        entry.update({
            "nullable": bool(column.nullable),
            "coerce": bool(column.coerce),
            "required": bool(column.required),
            "unique": bool(column.unique),
        })
        if getattr(column, "title", None):
            entry["title"] = column.title
        if column.description:
            entry["description"] = column.description
        checks: list[dict[str, Any]] = []
        for check in column.checks:
            try:
                checks.extend(serialize_check(check))
            except UnserializableCheck as exc:
                warn(f"{info.name}: column {name!r}: check {describe_check(check)!r} skipped: {exc}")
        entry["checks"] = checks
        columns.append(entry)

    document: dict[str, Any] = {"schema": section}
    meta_section = meta.to_dict()
    if meta_section:
        document["meta"] = meta_section
    if datasets is not None:
        document["datasets"] = _datasets_section(datasets)
    document["config"] = config
    document["columns"] = columns
    return document


def render_document(document: dict[str, Any]) -> str:
    return dump_yaml(document, header=GENERATED_HEADER)


# --- the tree ---------------------------------------------------------------

def _describe_import_error(path: Path, exc: BaseException) -> str:
    """The exception and the line of the schema file that raised it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path.resolve()]
    where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    return f"import failed{where}: {type(exc).__name__}: {exc}"


def export_file(path: Path, root: Path, *, check: bool = False) -> ExportResult:
    """Export one schema.py; never raises for a problem in the contract, it reports it."""
    root = Path(root)
    result = ExportResult(source=path, relative=str(path.relative_to(root)), status="error")
    try:
        module = import_schema_module(path, root)
    except Exception as exc:
        result.error = _describe_import_error(path, exc)
        return result
    models = registered_models(module)
    if not models:
        result.error = "defines no contract: decorate one DataFrameModel with @register_dataframe_schema"
        return result
    if len(models) > 1:
        names = ", ".join(m.__qualname__ for m in models)
        result.error = f"defines {len(models)} contracts ({names}); one version folder holds exactly one"
        return result
    model = models[0]
    try:
        document = build_document(model, on_warning=result.warnings.append, datasets=getattr(module, "DATASETS", None))
    except ExportError as exc:
        result.error = str(exc)
        return result
    result.name, result.version = document["schema"]["name"], document["schema"]["version"]
    target = result.target
    problems = validate_document(document, result.relative) + check_location(document, target, root)
    if problems:
        result.error = "the exported document fails the gates:\n    " + "\n    ".join(str(p) for p in problems)
        return result

    text = render_document(document)
    current = target.read_bytes() if target.exists() else None
    if current == text.encode("utf-8"):
        result.status = "unchanged"
    elif check:
        result.status = "missing" if current is None else "stale"
    else:
        # write beside the target and rename, so an interrupted export never leaves half a YAML
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
        result.status = "written"
    return result


def _orphans(root: Path) -> list[str]:
    """Generated YAML files left behind after their schema.py was removed."""
    found = []
    for path in walk_contract_files(Path(root) / "domains", "schema.yaml"):
        if path.with_name("schema.py").exists():
            continue
        try:
            head = path.read_text(encoding="utf-8")
            if head.startswith(GENERATED_HEADER) and isinstance(load_yaml(head), dict):
                found.append(str(path.relative_to(root)))
        except (OSError, ContractYamlError):
            continue
    return found


def export_tree(
    root: Path,
    *,
    check: bool = False,
    progress: Callable[[int, int, ExportResult], None] | None = None,
) -> ExportReport:
    """Export (or, with ``check``, only compare) every contract under ``root``."""
    root = Path(root).resolve()
    sources = discover_schema_sources(root)
    report = ExportReport(root=root)
    package = _tree_package(root)
    _forget_tree(package)  # a fresh import of every file, even when run twice in one process
    try:
        for index, path in enumerate(sources, start=1):
            result = export_file(path, root, check=check)
            report.results.append(result)
            if progress:
                progress(index, len(sources), result)
    finally:
        _forget_tree(package)
    report.orphans = _orphans(root)
    return report
