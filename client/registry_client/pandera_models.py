"""Live Pandera models rebuilt from published contract YAML.

Each column becomes an annotation (`Series[<dtype>]`, `Optional[...]` when the
column is not required) and a `pa.Field` carrying nullable/coerce/unique and
the checks as Field kwargs; the `config` section becomes the model's Config.
Because published dtypes are guaranteed canonical, the annotation lookup is
one flat table with no fallbacks.
"""

from __future__ import annotations

import keyword
import re
from typing import Any, List, Optional  # noqa: UP035 - pandera reads typing.List generics

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from registry_client.errors import InvalidContract

SCALARS: dict[str, Any] = {
    "str": str,
    "int32": np.int32,
    "int64": np.int64,
    "float32": np.float32,
    "float64": np.float64,
    "bool": bool,
    "datetime64[ns]": pd.Timestamp,
}
_LIST_ELEMENTS: dict[str, Any] = {
    "str": str, "int32": int, "int64": int, "float32": float, "float64": float, "bool": bool,
}
LISTS: dict[str, Any] = {f"List[{name}]": List[element] for name, element in _LIST_ELEMENTS.items()}  # noqa: UP006
ANNOTATIONS: dict[str, Any] = {**SCALARS, **LISTS}
CANONICAL_DTYPES = frozenset(ANNOTATIONS)

# Spellings an author might write, for the "not canonical, re-export" message only.
_ALIASES = {
    "int": "int64", "integer": "int64", "float": "float64", "double": "float64", "string": "str",
    "boolean": "bool", "datetime": "datetime64[ns]", "timestamp": "datetime64[ns]", "date": "datetime64[ns]",
    "np.float64": "float64", "np.int64": "int64", "np.int32": "int32", "np.float32": "float32",
    "object": "str", "datetime64": "datetime64[ns]",
}


def canonical_dtype_hint(dtype: Any) -> str | None:
    """The canonical spelling of a known non-canonical dtype, else None."""
    if not isinstance(dtype, str):
        return None
    text = dtype.strip()
    match = re.fullmatch(r"(?:typing\.)?[Ll]ist\[(.+)\]", text)
    if match:
        inner = canonical_dtype_hint(match.group(1)) or (match.group(1) if match.group(1) in SCALARS else None)
        return f"List[{inner}]" if inner else None
    lowered = text.lower()
    if lowered in SCALARS and lowered != text:
        return lowered
    return _ALIASES.get(lowered)


_FIELD_CHECKS = {
    "gt", "ge", "lt", "le", "eq", "ne", "isin", "notin", "str_matches", "str_startswith",
    "str_endswith", "str_contains", "str_length", "unique_values_eq",
}
# Two bounds of one kind on one column combine into the tighter one.
_TIGHTER = {"gt": max, "ge": max, "lt": min, "le": min}
_CONFIG_KEYS = ("strict", "coerce", "drop_invalid_rows", "ordered", "unique", "name", "title", "description")
_RESERVED = set(dir(pa.DataFrameModel)) | {"Config"}


def field_kwargs(column: dict, contract: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "nullable": bool(column.get("nullable", False)),
        "unique": bool(column.get("unique", False)),
    }
    if "coerce" in column:
        kwargs["coerce"] = bool(column["coerce"])
    if column.get("description"):
        kwargs["description"] = column["description"]
    if column.get("title"):
        kwargs["title"] = column["title"]
    for check in column.get("checks") or []:
        if not isinstance(check, dict) or len(check) != 1:
            raise InvalidContract(f"{contract}: column {column['name']!r} has a malformed check {check!r}")
        (kind, value), = check.items()
        if kind not in _FIELD_CHECKS:
            raise InvalidContract(f"{contract}: column {column['name']!r} has an unknown check {kind!r}")
        if kind == "str_length":
            value = {k: value.get(k) for k in ("min_value", "max_value")}
        if kind in kwargs:
            if kind not in _TIGHTER:
                raise InvalidContract(f"{contract}: column {column['name']!r} repeats the check {kind!r}")
            value = _TIGHTER[kind](kwargs[kind], value)
        kwargs[kind] = value
    return kwargs


def _class_name(document: dict) -> str:
    schema = document.get("schema") or {}
    entity = str(schema.get("entity") or "Contract")
    version = str(schema.get("version") or "").replace(".", "_")
    return "".join(p.capitalize() for p in entity.split("_")) + (f"_v{version}" if version else "")


def build_model(document: dict) -> type[pa.DataFrameModel]:
    """Build a live DataFrameModel class from a dataframe contract document."""
    schema = document.get("schema") or {}
    name = schema.get("name", "<unnamed>")
    if schema.get("schema_type") != "dataframe":
        raise InvalidContract(
            f"{name} is a {schema.get('schema_type')!r} contract; only dataframe contracts become Pandera models "
            "(use get_schema() for its JSON Schema sections)."
        )
    annotations: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    for index, column in enumerate(document.get("columns") or []):
        col_name = column.get("name")
        dtype = column.get("dtype")
        if dtype not in ANNOTATIONS:
            raise InvalidContract(f"{name}: column {col_name!r} has dtype {dtype!r}, which is not canonical")
        annotation = Series[ANNOTATIONS[dtype]]
        if column.get("required", True) is False:
            annotation = Optional[annotation]  # noqa: UP045 - pandera reads typing.Optional
        kwargs = field_kwargs(column, name)
        attr = col_name
        if not (isinstance(col_name, str) and col_name.isidentifier()) or keyword.iskeyword(col_name) or col_name in _RESERVED or col_name.startswith("_"):
            # Pandera maps an alias back to the real column name.
            attr = f"column_{index}"
            kwargs["alias"] = col_name
        annotations[attr] = annotation
        attrs[attr] = pa.Field(**kwargs)
    config = {k: v for k, v in (document.get("config") or {}).items() if k in _CONFIG_KEYS}
    config.setdefault("name", name)
    attrs["Config"] = type("Config", (), config)
    attrs["__annotations__"] = annotations
    attrs["__module__"] = __name__
    attrs["__doc__"] = schema.get("description") or f"{name} {schema.get('version')}"
    model = type(_class_name(document), (pa.DataFrameModel,), attrs)
    model.__contract__ = document  # type: ignore[attr-defined]
    return model


def contract_header(document: dict) -> dict[str, str]:
    """The flat `contract.*` key/value header that travels with data (Parquet metadata)."""
    schema = document.get("schema") or {}
    meta = document.get("meta") or {}
    header = {
        "contract.name": str(schema.get("name", "")),
        "contract.domain": str(schema.get("domain", "")),
        "contract.subdomains": ",".join(schema.get("subdomains") or []),
        "contract.entity": str(schema.get("entity", "")),
        "contract.version": str(schema.get("version", "")),
        "contract.schema_type": str(schema.get("schema_type", "")),
        "contract.owner": str(schema.get("owner") or ""),
    }
    for key, value in meta.items():
        if value is not None:
            header[f"contract.meta.{key}"] = ",".join(value) if isinstance(value, list) else str(value)
    return header
