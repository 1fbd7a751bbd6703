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
    STRING_STORAGES,
    UnknownDtypeError,
    is_list_dtype,
    list_element,
    pandera_annotation,
)
from registry_client.errors import InvalidContract

__all__ = ["CANONICAL_DTYPES", "NOT_A_PANDERA_SCHEMA", "STRING_STORAGES", "build_model", "contract_header", "field_kwargs",
           "pandera_json", "pandera_json_schema", "pandera_serialized", "pandera_yaml"]

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
    if column.get("physical_type"):
        # the warehouse's own type name; pandera keeps it beside the column without acting on it
        kwargs["metadata"] = {"physical_type": column["physical_type"]}
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




def pandera_serialized(document: dict, strings: str = "python") -> dict[str, Any]:
    """pandera's own serialized schema (`pandera.io.serialize_schema`) of the rebuilt model, with
    string columns spelled `str`, which any pandera reads.

    pandera writes the dtype pandas picked for a string column, `string[pyarrow]` where pyarrow is
    installed, and a reader without pyarrow cannot build that. `strings="pyarrow"` asks for it
    anyway (every reader then needs pyarrow). Other dtypes are written as pandera writes them."""
    from pandera.io import pandas_io

    if strings not in STRING_STORAGES:
        raise ValueError(f"strings: {strings!r} is not one of {', '.join(STRING_STORAGES)}")
    serialized = pandas_io.serialize_schema(build_model(document).to_schema())
    dtypes = {c["name"]: c["dtype"] for c in document.get("columns") or []}
    for name, column in (serialized.get("columns") or {}).items():
        if dtypes.get(name) == "str":
            column["dtype"] = "string[pyarrow]" if strings == "pyarrow" else "str"
    return serialized


def _list_columns(document: dict) -> list[str]:
    return [c["name"] for c in document.get("columns") or [] if str(c.get("dtype", "")).startswith("List[")]


def pandera_yaml(document: dict, strings: str = "python") -> str:
    """pandera's own YAML (`DataFrameSchema.to_yaml`) of the rebuilt model: what
    `pandera.pandas.DataFrameSchema.from_yaml` (pandera.io.pandas_io.from_yaml) reads, with
    dtypes it reads without optional extras (see `pandera_serialized`).

    pandera writes a list column's dtype as `list[str]` and cannot read that back (0.35),
    so such a document's YAML says so in a comment above pandera's text."""
    import yaml

    text = yaml.safe_dump(pandera_serialized(document, strings), sort_keys=False)
    lists = _list_columns(document)
    if lists:
        text = (f"# pandera's from_yaml cannot read back the list dtypes it writes here (columns: {', '.join(lists)}); "
                "see docs/odcs.md\n" + text)
    return text


def pandera_json(document: dict, strings: str = "python") -> dict[str, Any]:
    """pandera's own JSON (`DataFrameSchema.to_json`) of the rebuilt model, as a mapping: what
    `pandera.pandas.DataFrameSchema.from_json` (pandera.io.pandas_io.from_json) reads. Like the
    YAML, a list column's dtype (`list[str]`) is one pandera cannot read back (0.35)."""
    return pandera_serialized(document, strings)


# Where pandera's from_json / from_yaml look for a frame-wide dtype. The JSON Schema export is a
# different document that pandera's readers would silently take for an empty schema accepting any
# frame; this keyword (an annotation to JSON Schema tools, which ignore it) makes them fail saying why.
NOT_A_PANDERA_SCHEMA = ("not a pandera schema: this is the JSON Schema of the frame's records; validate records "
                        "with a JSON Schema validator, or read ?format=pandera-json with pandera's from_json")


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
        return _finished(build_model(document).to_json_schema())
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
    return _finished(schema)


def _finished(schema: dict[str, Any]) -> dict[str, Any]:
    """pandera's JSON Schema made one that JSON Schema tools take and pandera's readers refuse.

    pandera types a timestamp column's items `datetime`, a Table Schema type that is no JSON
    Schema type: they are the ISO 8601 strings a frame's records hold."""
    for column in (schema.get("properties") or {}).values():
        items = column.get("items") if isinstance(column, dict) else None
        if isinstance(items, dict) and items.get("type") == "datetime":
            column["items"] = {"type": "string", "format": "date-time"}
    schema["dtype"] = NOT_A_PANDERA_SCHEMA
    return schema
