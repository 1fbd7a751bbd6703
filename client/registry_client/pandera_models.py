"""Live Pandera models rebuilt from published contract YAML (the consumer side).

Each column becomes an annotation (`Series[<dtype>]`, `Optional[...]` when the
column is not required) and a `pa.Field` carrying nullable/coerce/unique and
the checks as Field kwargs; the `config` section becomes the model's Config.
Because published dtypes are guaranteed canonical, the annotation lookup is
one flat table with no fallbacks.
"""

from __future__ import annotations

import keyword
from typing import Any, Optional

import pandera.pandas as pa
from pandera.typing import Series

from registry_client.checks import UnserializableCheck
from registry_client.checks import field_kwargs as check_kwargs
from registry_client.dtypes import (
    CANONICAL_DTYPES,
    UnknownDtypeError,
    is_list_dtype,
    list_element,
    pandera_annotation,
)
from registry_client.errors import InvalidContract

__all__ = ["CANONICAL_DTYPES", "build_model", "contract_header", "field_kwargs", "pandera_json_schema", "pandera_yaml"]

_CONFIG_KEYS = (
    "strict", "coerce", "drop_invalid_rows", "ordered", "unique", "add_missing_columns", "unique_column_names",
    "name", "title", "description",
)
_RESERVED = set(dir(pa.DataFrameModel)) | {"Config"}


def field_kwargs(column: dict, contract: str) -> dict[str, Any]:
    """`pa.Field` kwargs for one column: its flags, description and checks."""
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
    try:
        kwargs.update(check_kwargs(column.get("checks")))
    except UnserializableCheck as exc:
        raise InvalidContract(f"{contract}: column {column.get('name')!r}: {exc}") from None
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
        try:
            annotation = Series[pandera_annotation(dtype)]
        except UnknownDtypeError as exc:
            raise InvalidContract(f"{name}: column {col_name!r}: {exc}") from None
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
    """The flat `contract.*` header that travels with data (Parquet metadata),
    in the same shape ContractMixin.contract_header() gives an authored class."""
    from registry_client.identity import SchemaInfo, SchemaMeta
    from registry_client.mixins import contract_header as header_for

    meta = {k: v for k, v in (document.get("meta") or {}).items() if v is not None}
    return header_for(SchemaInfo.from_dict(document.get("schema") or {}), SchemaMeta.from_dict(meta))


def pandera_yaml(document: dict) -> str:
    """pandera's own YAML (`DataFrameSchema.to_yaml`) of the rebuilt model: what
    `pandera.pandas.DataFrameSchema.from_yaml` (pandera.io.pandas_io.from_yaml) reads.

    pandera writes a list column's dtype as `list[str]` and cannot read that back (0.35),
    so such a document's YAML says so in a comment above pandera's text."""
    text = build_model(document).to_schema().to_yaml()
    lists = [c["name"] for c in document.get("columns") or [] if str(c.get("dtype", "")).startswith("List[")]
    if lists:
        text = (f"# pandera's from_yaml cannot read back the list dtypes it writes here (columns: {', '.join(lists)}); "
                "see docs/odcs.md\n" + text)
    return text


# The JSON types of the list elements a published document may use (dtypes.CANONICAL_LIST_ELEMENTS).
_LIST_ITEM_TYPES = {"str": "string", "int64": "integer", "float64": "number", "bool": "boolean"}


def pandera_json_schema(document: dict) -> dict[str, Any]:
    """pandera's own JSON Schema (`DataFrameModel.to_json_schema`) of the rebuilt model:
    the frame as records of columns, the shape FastAPI and OpenAPI tools read.

    pandera cannot write a list column there (0.35 casts an empty frame to each
    dtype, and `list` is none): such columns are left out of what pandera writes
    and added in the same shape, an array of each row's list."""
    columns = document.get("columns") or []
    lists = {c["name"]: c["dtype"] for c in columns if is_list_dtype(str(c.get("dtype", "")))}
    if not lists:
        return build_model(document).to_json_schema()
    schema = build_model({**document, "columns": [c for c in columns if c["name"] not in lists]}).to_json_schema()
    written = schema.get("properties", {})
    properties = {"index": written["index"]} if "index" in written else {}
    for name in (c["name"] for c in columns):
        if name in lists:
            item = _LIST_ITEM_TYPES.get(list_element(lists[name]))
            properties[name] = {"type": "array", "items": {"type": "array", "items": {"type": item} if item else {}}}
        elif name in written:
            properties[name] = written[name]
    schema["properties"] = properties
    return schema
