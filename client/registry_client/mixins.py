"""ContractMixin: what every authored contract class can tell about itself.

Identity travels with the data: :meth:`ContractMixin.contract_header` flattens the
contract into string key/value pairs (``contract.name``, ``contract.version`` …)
for Parquet file metadata, and :func:`read_contract_header` reads them back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .identity import SchemaInfo, SchemaMeta

__all__ = ["HEADER_PREFIX", "ContractMixin", "contract_header", "read_contract_header"]

HEADER_PREFIX = "contract."
_LIST_KEYS = frozenset({"subdomains", "meta.source_system"})


def contract_header(info: SchemaInfo, meta: SchemaMeta | None = None) -> dict[str, str]:
    """A flat ``contract.*`` string header. List values are JSON arrays; unset values are left out."""
    header: dict[str, str] = {}
    for key, value in info.to_dict().items():
        if value is None or value == "":
            continue
        header[HEADER_PREFIX + key] = json.dumps(value) if isinstance(value, list) else str(value)
    for key, value in (meta or SchemaMeta()).to_dict().items():
        header[f"{HEADER_PREFIX}meta.{key}"] = json.dumps(value) if isinstance(value, list) else str(value)
    return header


def read_contract_header(metadata: Mapping[Any, Any]) -> tuple[SchemaInfo, SchemaMeta] | None:
    """Read back a header written by :func:`contract_header`.

    Accepts str or bytes keys and values (pyarrow's ``schema.metadata`` is bytes).
    Returns None when the metadata carries no contract header.
    """
    flat: dict[str, str] = {}
    for key, value in (metadata or {}).items():
        k = key.decode() if isinstance(key, bytes) else str(key)
        if k.startswith(HEADER_PREFIX):
            flat[k[len(HEADER_PREFIX):]] = value.decode() if isinstance(value, bytes) else str(value)
    if not flat:
        return None
    section: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for key, value in flat.items():
        target, field = (meta, key[len("meta."):]) if key.startswith("meta.") else (section, key)
        if key in _LIST_KEYS and value.startswith("["):
            target[field] = json.loads(value)
        else:
            target[field] = value
    return SchemaInfo.from_dict(section), SchemaMeta.from_dict(meta)


class ContractMixin:
    """Mixed into every authored contract, before the pandera base model."""

    @classmethod
    def schema_info(cls) -> SchemaInfo:
        info = getattr(cls, "__schema_info__", None)
        if not isinstance(info, SchemaInfo):
            raise TypeError(f"{cls.__qualname__} is not decorated with @register_dataframe_schema")
        return info

    @classmethod
    def schema_meta(cls) -> SchemaMeta:
        meta = getattr(cls, "__schema_meta__", None)
        return meta if isinstance(meta, SchemaMeta) else SchemaMeta()

    @classmethod
    def contract_name(cls) -> str:
        return cls.schema_info().name

    @classmethod
    def contract_version(cls) -> str:
        return cls.schema_info().version

    @classmethod
    def contract_header(cls) -> dict[str, str]:
        """Flat ``contract.*`` strings for Parquet metadata: which contract and version produced a file."""
        return contract_header(cls.schema_info(), cls.schema_meta())
