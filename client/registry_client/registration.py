"""``@register_dataframe_schema``: stamp a contract's identity onto a Pandera model.

The decorator is cheap and runs anywhere (a notebook, a test). The rules that tie
a contract to its place in the contracts tree — the folder path spells the dotted
name, the version folder spells the version — are enforced by
:func:`enforce_registry_rules`, which the exporter calls for every class it
exports. :func:`relaxed_registry_checks` lifts those rules for drafting.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from .identity import InvalidIdentityError, SchemaInfo, SchemaMeta
from .versions import InvalidVersionError, folder_to_version, version_to_folder

__all__ = [
    "ContractPathError",
    "RegistryConfig",
    "register_dataframe_schema",
    "relaxed_registry_checks",
    "enforce_registry_rules",
    "confirm_schema_name_matches_module",
    "confirm_schema_version_matches_module_version",
    "registered_info",
]

T = TypeVar("T", bound=type)


class ContractPathError(ValueError):
    """A registered contract that does not sit where its name and version say it should."""


class _RegistryConfig(threading.local):
    """Which placement rules are enforced (per thread, so a relaxed notebook cell affects no one else)."""

    def __init__(self) -> None:
        self.enforce_domain_name = True
        self.enforce_path_version = True


RegistryConfig = _RegistryConfig()


@contextmanager
def relaxed_registry_checks() -> Iterator[None]:
    """Lift the path rules, e.g. to draft and export a contract from a notebook."""
    saved = (RegistryConfig.enforce_domain_name, RegistryConfig.enforce_path_version)
    RegistryConfig.enforce_domain_name = False
    RegistryConfig.enforce_path_version = False
    try:
        yield
    finally:
        RegistryConfig.enforce_domain_name, RegistryConfig.enforce_path_version = saved


def register_dataframe_schema(
    *,
    domain: str,
    entity: str,
    version: str,
    subdomains: Sequence[str] = (),
    owner: str | None = None,
    description: str = "",
    meta: SchemaMeta | None = None,
) -> Callable[[T], T]:
    """Class decorator: give a pandera DataFrameModel its contract identity.

    Builds a frozen :class:`SchemaInfo` (which validates the name parts and the
    version) and stamps ``__schema_info__`` and ``__schema_meta__`` on the class.
    """
    if meta is not None and not isinstance(meta, SchemaMeta):
        raise InvalidIdentityError(f"meta must be a SchemaMeta, not {type(meta).__name__}")
    info = SchemaInfo(
        domain=domain,
        subdomains=tuple(subdomains or ()),
        entity=entity,
        version=version,
        owner=owner,
        description=description,
        schema_type="dataframe",
    )

    def _register(cls: T) -> T:
        import pandera.pandas as pa

        if not (isinstance(cls, type) and issubclass(cls, pa.DataFrameModel)):
            raise TypeError(f"@register_dataframe_schema decorates a pandera DataFrameModel, not {cls!r}")
        cls.__schema_info__ = info
        cls.__schema_meta__ = meta or SchemaMeta()
        return cls

    return _register


def registered_info(cls: type) -> SchemaInfo | None:
    """The SchemaInfo stamped on ``cls`` itself (not inherited from a registered parent)."""
    info = cls.__dict__.get("__schema_info__")
    return info if isinstance(info, SchemaInfo) else None


def _module_file(cls: type) -> Path | None:
    module = sys.modules.get(cls.__module__)
    filename = getattr(module, "__file__", None)
    return Path(filename).resolve() if filename else None


def _location(cls: type) -> tuple[Path, tuple[str, ...], str]:
    """(file, the folders between ``domains/`` and the version folder, the version folder)."""
    path = _module_file(cls)
    if path is None:
        raise ContractPathError(
            f"{cls.__qualname__} is defined in {cls.__module__!r}, which has no file; contracts are exported "
            "from <root>/domains/<domain>/<subdomains…>/<entity>/<vX_Y>/schema.py "
            "(use relaxed_registry_checks() to draft elsewhere)"
        )
    parts = path.parts
    if "domains" not in parts[:-1]:
        raise ContractPathError(
            f"{cls.__qualname__} is defined in {path}, which is not under a contracts 'domains/' folder "
            "(use relaxed_registry_checks() to draft elsewhere)"
        )
    start = len(parts) - 1 - parts[::-1].index("domains")
    between = parts[start + 1:-1]
    if len(between) < 2:
        raise ContractPathError(
            f"{path} is not at domains/<domain>/<subdomains…>/<entity>/<version folder>/{path.name}"
        )
    return path, tuple(between[:-1]), between[-1]


def confirm_schema_name_matches_module(cls: type, name: str) -> None:
    """Refuse a class whose folders under ``domains/`` do not spell its dotted name."""
    path, name_folders, _ = _location(cls)
    from_path = ".".join(name_folders)
    if from_path != name:
        expected = "/".join(("domains", *name.split(".")))
        raise ContractPathError(
            f"{cls.__qualname__} declares the name {name!r} but lives in {path}, whose folders spell "
            f"{from_path!r}; move it under {expected}/ or fix domain/subdomains/entity"
        )


def confirm_schema_version_matches_module_version(cls: type, version: str) -> None:
    """Refuse a class whose version folder does not encode its declared version."""
    path, _, folder = _location(cls)
    try:
        folder_version = folder_to_version(folder)
    except InvalidVersionError as exc:
        raise ContractPathError(f"{cls.__qualname__} lives in {path}: {exc}") from None
    if folder_version != version:
        raise ContractPathError(
            f"{cls.__qualname__} declares version {version!r} but lives in folder {folder!r} "
            f"(version {folder_version!r}); it belongs in {version_to_folder(version)}/"
        )


def enforce_registry_rules(cls: type) -> SchemaInfo:
    """The export-time placement rules, honouring :func:`relaxed_registry_checks`."""
    info = registered_info(cls)
    if info is None:
        raise ContractPathError(f"{cls.__qualname__} is not decorated with @register_dataframe_schema")
    if RegistryConfig.enforce_domain_name:
        confirm_schema_name_matches_module(cls, info.name)
    if RegistryConfig.enforce_path_version:
        confirm_schema_version_matches_module_version(cls, info.version)
    return info


