"""Contract documents as Open Data Contract Standard (ODCS v3.1.0) contracts, and back.

    from registry_client.odcs import to_odcs, from_odcs

    odcs = to_odcs(document)                 # the document alone (identity, schema, datasets)
    odcs = to_odcs(document, facts)          # plus what the registry knows (team, SLOs, consumers)
    imported = from_odcs(odcs)               # OdcsImport(document, notes)

The mapping, field by field and with what is lossy, is docs/odcs.md. Its rules:

1. Everything ODCS has a place for goes there (identity, team, columns as
   properties with logical and physical types, checks as logicalTypeOptions or
   quality rules, datasets as servers, the freshness SLO as an SLA property).
2. Whatever of the document ODCS cannot hold is carried in `customProperties`
   under a `registry…` key, so nothing is dropped: `from_odcs(to_odcs(d)) == d`
   for every document (tests/odcs/test_round_trip.py).
3. Registry state that is not part of a document (team members, SLOs,
   consumers, the compatibility mode) is exported but never imported: a
   document does not set it. `from_odcs` says so in its notes, with the path.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

from registry_client.dtypes import (
    CANONICAL_DTYPES,
    UnknownDtypeError,
    canonicalize_dtype,
    is_list_dtype,
    list_element,
)

__all__ = [
    "API_VERSION",
    "CUSTOM_KEYS",
    "DatasetFacts",
    "MemberFacts",
    "OdcsError",
    "OdcsImport",
    "RegistryFacts",
    "from_odcs",
    "portable_physical_type",
    "to_odcs",
]

API_VERSION = "v3.1.0"

# The custom-property keys this mapping writes (docs/odcs.md, "Custom properties").
SCHEMA_TYPE = "registrySchemaType"
META = "registryMeta"
CONSUMERS = "registryConsumers"
MODE = "registryCompatibilityMode"
CONFIG = "registryConfig"
COLUMN = "registryColumn"
JSON_SCHEMA = "registryJsonSchema"
SECTION = "registrySection"
DATASET = "registryDataset"
FRESHNESS = "registryFreshness"
CUSTOM_KEYS = (SCHEMA_TYPE, META, CONSUMERS, MODE, CONFIG, COLUMN, JSON_SCHEMA, SECTION, DATASET, FRESHNESS)


class OdcsError(ValueError):
    """An ODCS contract that cannot become a contract document; the message names the path.

    `problems` holds every problem found, each starting with its JSON path, so one
    import reports them all at once."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems) if problems else [message]
        super().__init__(message)


# --- what the registry knows beyond the document ---------------------------------


@dataclass(frozen=True)
class DatasetFacts:
    """A dataset the contract describes: named in its document, or bound to it in the registry."""

    namespace: str
    name: str
    in_document: bool = True
    max_age: timedelta | None = None
    warn_after: timedelta | None = None
    empty_write_counts: bool | None = None


@dataclass(frozen=True)
class MemberFacts:
    username: str
    name: str = ""
    role: str = "member"


@dataclass
class RegistryFacts:
    """Registry state that travels in an export but is not part of the document."""

    team_name: str | None = None
    team_description: str = ""
    members: list[MemberFacts] = field(default_factory=list)
    datasets: list[DatasetFacts] | None = None  # None: the document's `datasets:` section
    consumers: list[dict[str, Any]] = field(default_factory=list)  # {team, namespace, name, declared_columns}
    compatibility_mode: str | None = None
    published_at: datetime | None = None
    freshness_column: str | None = None  # the column ODCS measures freshness from


def _custom(key: str, value: Any) -> dict[str, Any]:
    return {"property": key, "value": value}


def _customs(element: dict) -> dict[str, Any]:
    return {c.get("property"): c.get("value") for c in element.get("customProperties") or [] if isinstance(c, dict)}


# --- dtypes -------------------------------------------------------------------------

# canonical dtype -> (logicalType, logicalTypeOptions.format, physicalType). physicalType is the
# portable SQL spelling of a table column holding the values, which is what the standard's
# tools compare with a server's columns; the pairs are one-to-one, so the dtype comes back.
_SCALAR_TYPES: dict[str, tuple[str, str | None, str]] = {
    "str": ("string", None, "varchar"),
    "int32": ("integer", "i32", "integer"),
    "int64": ("integer", "i64", "bigint"),
    "float32": ("number", "f32", "real"),
    "float64": ("number", "f64", "double"),
    "bool": ("boolean", None, "boolean"),
    "datetime64[ns]": ("timestamp", None, "timestamp"),
}
_BY_PHYSICAL = {physical: dtype for dtype, (_, _, physical) in _SCALAR_TYPES.items()}
_BY_LOGICAL = {
    ("string", None): "str", ("integer", None): "int64", ("integer", "i32"): "int32", ("integer", "i64"): "int64",
    ("number", None): "float64", ("number", "f32"): "float32", ("number", "f64"): "float64",
    ("boolean", None): "bool", ("timestamp", None): "datetime64[ns]", ("date", None): "datetime64[ns]",
}


def _type_fields(dtype: str, physical: str | None = None) -> dict[str, Any]:
    """logicalType, physicalType (the column's own, else the portable spelling) and format."""
    if is_list_dtype(dtype):
        element = list_element(dtype)
        item = _type_fields(element)
        return {"logicalType": "array", "physicalType": physical or f"array<{item['physicalType']}>",
                "items": {k: v for k, v in item.items()}}
    logical, fmt, default = _SCALAR_TYPES[dtype]
    fields: dict[str, Any] = {"logicalType": logical, "physicalType": physical or default}
    if fmt:
        fields["logicalTypeOptions"] = {"format": fmt}
    return fields


def portable_physical_type(dtype: str) -> str:
    """The physicalType the export writes for a canonical dtype when its column has no
    `physical_type` of its own (a `physical_type` equal to it says nothing more)."""
    return _type_fields(dtype)["physicalType"]


def _dtype_of_physical(physical: Any) -> str | None:
    if not isinstance(physical, str):
        return None
    lowered = physical.strip().lower()
    if lowered in _BY_PHYSICAL:
        return _BY_PHYSICAL[lowered]
    match = re.fullmatch(r"array<(.+)>", lowered)
    if match and match.group(1) in _BY_PHYSICAL:
        dtype = f"List[{_BY_PHYSICAL[match.group(1)]}]"
        return dtype if dtype in CANONICAL_DTYPES else None
    try:
        return canonicalize_dtype(lowered)
    except UnknownDtypeError:
        return None


def _dtype_of(prop: dict, path: str) -> str:
    """The canonical dtype of a property: by its logicalType (and format); by its physicalType
    only when it has no logicalType. The physical type itself is the warehouse's, kept as is."""
    physical = prop.get("physicalType")
    logical = prop.get("logicalType")
    if logical is None:
        dtype = _dtype_of_physical(physical)
        if dtype is not None:
            return dtype
    if logical == "array":
        items = prop.get("items")
        if not isinstance(items, dict):
            raise OdcsError(f"{path}: an array property needs `items` with a logicalType")
        dtype = f"List[{_dtype_of(items, path + '.items')}]"
        if dtype not in CANONICAL_DTYPES:
            raise OdcsError(f"{path}: {dtype} is not in the dtype vocabulary (lists hold str, int64, float64 or bool)")
        return dtype
    fmt = (prop.get("logicalTypeOptions") or {}).get("format")
    dtype = _BY_LOGICAL.get((logical, fmt)) or _BY_LOGICAL.get((logical, None))
    if dtype is None:
        shown = f"logicalType {logical!r}" if logical else "no logicalType"
        raise OdcsError(f"{path}: {shown} (physicalType {physical!r}) has no dtype in the contract format; "
                        f"it takes string, integer, number, boolean, timestamp, date and arrays of them")
    return dtype


# --- checks -------------------------------------------------------------------------

# pandera's Field builds its checks in this order, so an exported document lists them so.
_CHECK_ORDER = ("eq", "ne", "gt", "ge", "lt", "le", "isin", "notin", "str_contains", "str_endswith", "str_matches",
                "str_length", "str_startswith", "unique_values_eq")
_BOUNDS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
_BOUND_KEYS = {option: key for key, option in _BOUNDS.items()}
_LENGTHS = {"min_value": "minLength", "max_value": "maxLength"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _map_checks(dtype: str, checks: list[dict]) -> tuple[dict, list[dict], list[dict]]:
    """(logicalTypeOptions, quality rules, entries carried as they are) for a column's checks."""
    logical = _type_fields(dtype)["logicalType"]
    options: dict[str, Any] = {}
    quality: list[dict] = []
    carried: list[dict] = []
    for entry in checks:
        ((key, value),) = entry.items()
        if key in _BOUNDS and _BOUNDS[key] not in options and (
                (logical in ("integer", "number") and _is_number(value))
                or (logical == "timestamp" and isinstance(value, str))):
            options[_BOUNDS[key]] = value
        elif (key == "str_matches" and logical == "string" and isinstance(value, str) and value.startswith("^")
              and "pattern" not in options):
            # pandera matches from the start of the value; a pattern anchored there means the same to both
            options["pattern"] = value
        elif (key == "str_length" and logical == "string" and set(value) <= set(_LENGTHS)
              and not set(_LENGTHS.values()) & set(options)
              and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value.values())):
            options.update({_LENGTHS[k]: v for k, v in value.items()})
        elif key == "isin" and logical != "array" and not any(q["metric"] == "invalidValues" for q in quality):
            quality.append({"type": "library", "metric": "invalidValues", "arguments": {"validValues": list(value)},
                            "mustBe": 0, "description": "every value is one of validValues"})
        else:
            carried.append(entry)
    return options, quality, carried


def _unmap_checks(prop: dict, carried: list[dict], order: list[str] | None, path: str,
                  notes: list[str] | None = None) -> list[dict]:
    notes = [] if notes is None else notes
    options = prop.get("logicalTypeOptions") or {}
    pool: dict[str, list[dict]] = {}
    for option, key in _BOUND_KEYS.items():
        if option in options:
            pool.setdefault(key, []).append({key: options[option]})
    if "pattern" in options:
        pool.setdefault("str_matches", []).append({"str_matches": options["pattern"]})
    lengths = {k: options[o] for k, o in _LENGTHS.items() if o in options}
    if lengths:
        pool.setdefault("str_length", []).append({"str_length": lengths})
    for index, rule in enumerate(prop.get("quality") or []):
        valid = (rule.get("arguments") or {}).get("validValues") if rule.get("metric") == "invalidValues" else None
        if valid is not None and rule.get("mustBe") == 0:
            pool.setdefault("isin", []).append({"isin": list(valid)})
        else:
            notes.append(f"{path}.quality[{index}]: not imported; only `invalidValues` with validValues and "
                         "mustBe: 0 becomes a check (isin)")
    for entry in carried:
        ((key, _),) = entry.items()
        pool.setdefault(key, []).append(entry)
    if order is None:
        order = [key for key in _CHECK_ORDER for _ in pool.get(key, [])]
        order += [key for key in pool if key not in _CHECK_ORDER for _ in pool[key]]
    checks = []
    for key in order:
        if not pool.get(key):
            raise OdcsError(f"{path}: customProperties {COLUMN}.checkOrder names {key!r} more often than it has checks")
        checks.append(pool[key].pop(0))
    left = [key for key, entries in pool.items() if entries]
    if left:
        raise OdcsError(f"{path}: customProperties {COLUMN}.checkOrder leaves out {', '.join(left)}")
    return checks


# --- columns ------------------------------------------------------------------------


def _column_property(column: dict) -> dict[str, Any]:
    dtype = column["dtype"]
    prop: dict[str, Any] = {"name": column["name"]}
    if column.get("title"):
        prop["businessName"] = column["title"]
    if column.get("description"):
        prop["description"] = column["description"]
    prop.update(_type_fields(dtype, column.get("physical_type")))
    options, quality, carried = _map_checks(dtype, column.get("checks") or [])
    if options:
        prop["logicalTypeOptions"] = {**prop.get("logicalTypeOptions", {}), **options}
    # ODCS `required` means "holds no nulls"; a column that may be missing altogether is ours alone.
    prop["required"] = not column["nullable"]
    prop["unique"] = bool(column["unique"])
    if quality:
        prop["quality"] = quality
    extra: dict[str, Any] = {}
    if column.get("required", True) is not True:
        extra["required"] = False
    if column.get("coerce"):
        extra["coerce"] = True
    if carried:
        extra["checks"] = carried
    rebuilt = _unmap_checks(prop, carried, None, "")
    if rebuilt != (column.get("checks") or []):
        extra["checkOrder"] = [next(iter(e)) for e in column.get("checks") or []]
    if extra:
        prop["customProperties"] = [_custom(COLUMN, extra)]
    return prop


_PROPERTY_KEYS = {"name", "businessName", "description", "logicalType", "physicalType", "logicalTypeOptions",
                  "required", "unique", "quality", "customProperties", "items", "primaryKey", "primaryKeyPosition",
                  "physicalName"}


def _column_of(prop: dict, path: str, notes: list[str]) -> dict[str, Any]:
    if not isinstance(prop, dict) or not isinstance(prop.get("name"), str) or not prop["name"]:
        raise OdcsError(f"{path}: a property needs a name")
    _note_unknown(prop, _PROPERTY_KEYS, path, notes)
    if prop.get("physicalName") not in (None, prop["name"]):
        notes.append(f"{path}.physicalName: {prop['physicalName']!r} not imported; the column keeps the name "
                     f"{prop['name']!r} (map it in an integration spec's field_to_source)")
    extra = _customs(prop).get(COLUMN) or {}
    dtype = _dtype_of(prop, path)
    nullable = not bool(prop.get("required", False))
    unique = bool(prop.get("unique", False))
    if prop.get("primaryKey"):
        nullable = False
        notes.append(f"{path}.primaryKey: imported as a column that is not nullable"
                     + ("" if unique else " (a composite key's uniqueness is config.unique)"))
    column: dict[str, Any] = {"name": prop["name"], "dtype": dtype}
    physical = prop.get("physicalType")
    if physical is not None and not (isinstance(physical, str) and physical.strip()):
        raise OdcsError(f"{path}.physicalType: {physical!r} is not a type name")
    if physical is not None and physical != _type_fields(dtype)["physicalType"]:
        # the warehouse's own spelling (INT, DECIMAL(10, 2), …), exported back unchanged
        column["physical_type"] = physical
    items = prop.get("items")
    if (is_list_dtype(dtype) and isinstance(items, dict) and items.get("physicalType") is not None
            and items["physicalType"] != _type_fields(list_element(dtype))["physicalType"]):
        notes.append(f"{path}.items.physicalType: {items['physicalType']!r} not imported; the column's own "
                     "physicalType is kept, its items' is the portable one")
    column.update({"nullable": nullable, "coerce": bool(extra.get("coerce", False)),
                   "required": bool(extra.get("required", True)), "unique": unique})
    if prop.get("businessName"):
        column["title"] = prop["businessName"]
    if prop.get("description"):
        column["description"] = prop["description"]
    options = dict(prop.get("logicalTypeOptions") or {})
    fmt = options.pop("format", None)
    expected_fmt = (_type_fields(dtype).get("logicalTypeOptions") or {}).get("format")
    if fmt is not None and fmt != expected_fmt:
        notes.append(f"{path}.logicalTypeOptions.format: {fmt!r} not imported (dtype {dtype})")
    known = set(_BOUND_KEYS) | {"pattern", "minLength", "maxLength"}
    for option in sorted(set(options) - known):
        notes.append(f"{path}.logicalTypeOptions.{option}: not imported; the contract format has no such check")
    column["checks"] = _unmap_checks({**prop, "logicalTypeOptions": {k: options[k] for k in options if k in known}},
                                     list(extra.get("checks") or []), extra.get("checkOrder"), path, notes)
    return column


def _note_unknown(element: dict, known: set[str], path: str, notes: list[str]) -> None:
    for key in element:
        if key not in known:
            notes.append(f"{path}.{key}: not imported; the contract format has no place for it")
    for key in _customs(element):
        if key not in CUSTOM_KEYS:
            notes.append(f"{path}.customProperties[{key}]: not imported (not one of the registry's keys)")


# --- JSON Schema sections (event and api contracts) --------------------------------

_JS_SCALARS = {"string", "integer", "number", "boolean"}
_JS_OPTIONS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("minItems", "maxItems", "uniqueItems"),
    "object": (),
    "boolean": (),
}


def _js_kind(schema: dict, lenient: bool) -> Any:
    kind = schema.get("type")
    if not lenient:
        return kind
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        kind = others[0] if len(others) == 1 else None
    if kind is None and isinstance(schema.get("enum"), list) and schema["enum"]:
        values = schema["enum"]
        kind = ("string" if all(isinstance(v, str) for v in values)
                else "integer" if all(isinstance(v, int) and not isinstance(v, bool) for v in values) else None)
    if kind is None and isinstance(schema.get("properties"), dict):
        kind = "object"
    return kind


def _js_property(name: str | None, schema: Any, required: bool, *, lenient: bool = False) -> dict[str, Any] | None:
    """An ODCS property for one JSON Schema, or None when the standard cannot hold it.

    `lenient` keeps what the standard can say and leaves out the rest (the exact schema
    then travels as registryJsonSchema beside it)."""
    if not isinstance(schema, dict):
        return {"name": name} if lenient and name is not None else None
    kind = _js_kind(schema, lenient)
    if not isinstance(kind, str) or kind not in _JS_OPTIONS:
        if not lenient:
            return None
        prop = {"name": name} if name is not None else {}
        if schema.get("description"):
            prop["description"] = schema["description"]
        if name is not None:
            prop["required"] = required
        return prop
    allowed = {"type", "title", "description", "enum", *_JS_OPTIONS[kind]}
    if kind == "array":
        allowed.add("items")
    if kind == "object":
        allowed |= {"properties", "required"}
    if set(schema) - allowed and not lenient:
        return None
    prop: dict[str, Any] = {} if name is None else {"name": name}
    if schema.get("title"):
        prop["businessName"] = schema["title"]
    if schema.get("description"):
        prop["description"] = schema["description"]
    prop["logicalType"] = kind
    options = {k: schema[k] for k in _JS_OPTIONS[kind] if k in schema}
    if options:
        prop["logicalTypeOptions"] = options
    if name is not None:
        prop["required"] = required
    if kind == "array":
        if "items" in schema:
            item = _js_property(None, schema["items"], False, lenient=lenient)
            if item is None:
                return None
            prop["items"] = item
    if kind == "object":
        properties = _js_properties(schema, lenient=lenient)
        if properties is None:
            return None
        prop["properties"] = properties
    if "enum" in schema:
        if not isinstance(schema["enum"], list) or kind not in _JS_SCALARS:
            if not lenient:
                return None
        else:
            prop["quality"] = [{"type": "library", "metric": "invalidValues",
                                "arguments": {"validValues": schema["enum"]}, "mustBe": 0}]
    return prop


def _js_properties(schema: dict, *, lenient: bool = False) -> list[dict] | None:
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if set(required) - set(properties) and not lenient:
        return None
    out = []
    for name, sub in properties.items():
        prop = _js_property(name, sub, name in required, lenient=lenient)
        if prop is None:
            return None
        out.append(prop)
    return out


def _js_schema_of(prop: dict, path: str, notes: list[str], *, top: bool = False) -> dict[str, Any]:
    """The JSON Schema an ODCS property (or a schema object, with top=True) describes."""
    kind = "object" if top else prop.get("logicalType")
    if kind is None and prop.get("properties"):
        kind = "object"
    if not isinstance(kind, str) or kind not in _JS_OPTIONS:
        if kind in ("date", "timestamp", "time"):
            kind = "string"
            notes.append(f"{path}.logicalType: {prop.get('logicalType')} imported as a JSON string")
        else:
            raise OdcsError(f"{path}: logicalType {kind!r} has no JSON Schema type here")
    schema: dict[str, Any] = {}
    if not top and prop.get("businessName"):
        schema["title"] = prop["businessName"]
    if not top and prop.get("description"):
        schema["description"] = prop["description"]
    schema["type"] = kind
    options = prop.get("logicalTypeOptions") or {}
    for key, value in options.items():
        if key in _JS_OPTIONS[kind]:
            schema[key] = value
        else:
            notes.append(f"{path}.logicalTypeOptions.{key}: not imported for a {kind}")
    if kind == "array" and isinstance(prop.get("items"), dict):
        schema["items"] = _js_schema_of(prop["items"], path + ".items", notes)
    if kind == "object":
        properties, required = {}, []
        for index, sub in enumerate(prop.get("properties") or []):
            sub_path = f"{path}.properties[{index}]"
            if not isinstance(sub, dict) or not sub.get("name"):
                raise OdcsError(f"{sub_path}: a property needs a name")
            properties[sub["name"]] = _js_schema_of(sub, sub_path, notes)
            if sub.get("required"):
                required.append(sub["name"])
        schema["properties"] = properties
        if required:
            schema["required"] = required
    for index, rule in enumerate(prop.get("quality") or []):
        valid = (rule.get("arguments") or {}).get("validValues") if rule.get("metric") == "invalidValues" else None
        if valid is not None and rule.get("mustBe") == 0:
            schema["enum"] = list(valid)
        else:
            notes.append(f"{path}.quality[{index}]: not imported; only invalidValues with validValues becomes enum")
    return schema


def _section_object(name: str, section: str, schema: Any, *, section_key: bool) -> dict[str, Any]:
    """One JSON Schema section as a schema object: properties when the standard can hold the
    schema exactly, and the schema itself under registryJsonSchema when it cannot."""
    element: dict[str, Any] = {"name": name, "logicalType": "object"}
    customs = []
    if isinstance(schema, dict) and schema.get("description"):
        element["description"] = schema["description"]
    properties = None
    if isinstance(schema, dict) and schema.get("type") == "object" and not set(schema) - {
            "type", "properties", "required", "description"}:
        properties = _js_properties(schema)
    if properties is not None:
        element["properties"] = properties
        lost: list[str] = []
        if _section_of(element, "", lost) != schema or lost:
            # the standard's properties would not give this schema back: carry it whole
            properties = None
    if properties is None:
        element.pop("properties", None)
        if isinstance(schema, dict) and _js_kind(schema, True) == "object":
            lenient = _js_properties(schema, lenient=True)
            if lenient:
                element["properties"] = lenient
        customs.append(_custom(JSON_SCHEMA, schema))
    if section_key:
        customs.append(_custom(SECTION, section))
    if customs:
        element["customProperties"] = customs
    return element


def _section_of(element: dict, path: str, notes: list[str]) -> Any:
    customs = _customs(element)
    if JSON_SCHEMA in customs:
        return customs[JSON_SCHEMA]
    schema = _js_schema_of(element, path, notes, top=True)
    if element.get("description"):
        schema["description"] = element["description"]
    return schema


# --- servers ----------------------------------------------------------------------


def _server_id(dataset: DatasetFacts, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", dataset.name).strip("-") or "dataset"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def _iso_duration(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    time = "".join(f"{n}{u}" for n, u in ((hours, "H"), (minutes, "M"), (seconds, "S")) if n)
    return "P" + (f"{days}D" if days else "") + (f"T{time}" if time else "") if (days or time) else "PT0S"


def _server(dataset: DatasetFacts, server_id: str) -> tuple[dict[str, Any], str | None]:
    """(the server, the table it holds or None), by the OpenLineage naming of the dataset."""
    parts = urlsplit(dataset.namespace)
    server: dict[str, Any] = {"server": server_id}
    table = None
    names = dataset.name.split(".")
    if parts.scheme in ("postgres", "postgresql") and parts.hostname and len(names) == 3:
        server.update(type="postgres", host=parts.hostname, port=parts.port or 5432, database=names[0],
                      schema=names[1])
        table = names[2]
    elif parts.scheme in ("s3", "s3a") and parts.netloc:
        server.update(type="s3", location=f"s3://{parts.netloc}/{dataset.name.lstrip('/')}")
    elif parts.scheme == "kafka" and parts.netloc:
        server.update(type="kafka", host=parts.netloc)
        table = dataset.name
    else:
        server.update(type="custom")
    identity: dict[str, Any] = {"namespace": dataset.namespace, "name": dataset.name}
    if not dataset.in_document:
        identity["inDocument"] = False
    customs = [_custom(DATASET, identity)]
    slo: dict[str, Any] = {}
    if dataset.max_age is not None:
        slo["maxAge"] = _iso_duration(dataset.max_age)
    if dataset.warn_after is not None:
        slo["warnAfter"] = _iso_duration(dataset.warn_after)
    if dataset.empty_write_counts is not None and slo:
        slo["emptyWriteCounts"] = dataset.empty_write_counts
    if slo:
        customs.append(_custom(FRESHNESS, slo))
    server["customProperties"] = customs
    return server, table


def _freshness_sla(max_age: timedelta, element: str | None) -> dict[str, Any]:
    seconds = int(max_age.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            sla: dict[str, Any] = {"property": "freshness", "value": seconds // size, "unit": unit}
            break
    else:
        sla = {"property": "freshness", "value": _iso_duration(max_age)}
    if element:
        sla["element"] = element
    sla["description"] = "the strictest freshness SLO of the datasets: the newest row is at most this old"
    return sla


def _dataset_of_server(server: dict, table: str | None, path: str, notes: list[str]) -> dict[str, str] | None:
    identity = _customs(server).get(DATASET)
    if isinstance(identity, dict) and isinstance(identity.get("namespace"), str) and isinstance(identity.get("name"), str):
        if identity.get("inDocument") is False:
            return None
        return {"namespace": identity["namespace"], "name": identity["name"]}
    kind = server.get("type")
    if kind in ("postgres", "postgresql") and server.get("host") and table:
        return {"namespace": f"postgres://{server['host']}:{server.get('port') or 5432}",
                "name": f"{server.get('database')}.{server.get('schema')}.{table}"}
    if kind == "s3" and str(server.get("location", "")).startswith("s3://"):
        bucket, _, key = str(server["location"])[5:].partition("/")
        return {"namespace": f"s3://{bucket}", "name": key}
    if kind == "kafka" and server.get("host") and table:
        return {"namespace": f"kafka://{server['host']}", "name": table}
    notes.append(f"{path}: a {kind!r} server has no OpenLineage dataset name here; not imported as a dataset")
    return None


# --- export -------------------------------------------------------------------------


def _status(version: str) -> str:
    try:
        return "draft" if Version(version).is_prerelease else "active"
    except InvalidVersion:
        return "draft"


def to_odcs(document: dict, facts: RegistryFacts | None = None) -> dict[str, Any]:
    """The ODCS v3.1.0 contract of one contract document (and what the registry knows of it)."""
    facts = facts or RegistryFacts()
    schema = document["schema"]
    schema_type = schema["schema_type"]
    odcs: dict[str, Any] = {
        "apiVersion": API_VERSION, "kind": "DataContract", "id": schema["name"], "name": schema["name"],
        "version": str(schema["version"]), "status": _status(str(schema["version"])), "domain": schema["domain"],
    }
    if schema.get("description"):
        odcs["description"] = {"purpose": schema["description"]}
    team: dict[str, Any] = {"name": schema["owner"]}
    if facts.team_description:
        team["description"] = facts.team_description
    if facts.members:
        team["members"] = [{"username": m.username, **({"name": m.name} if m.name else {}), "role": m.role}
                           for m in facts.members]
    odcs["team"] = team

    datasets = facts.datasets
    if datasets is None:
        datasets = [DatasetFacts(d["namespace"], d["name"]) for d in document.get("datasets") or []]
    servers, tables, taken = [], [], set()
    for dataset in datasets:
        server, table = _server(dataset, _server_id(dataset, taken))
        servers.append(server)
        if table:
            tables.append(table)

    entity = schema["entity"]
    if schema_type == "dataframe":
        element: dict[str, Any] = {"name": entity, "logicalType": "object", "physicalType": "table"}
        if len(set(tables)) == 1:
            element["physicalName"] = tables[0]
        element["properties"] = [_column_property(c) for c in document.get("columns") or []]
        config = dict(document.get("config") or {})
        unique = config.pop("unique", None)
        if unique:
            element["quality"] = [{"type": "library", "metric": "duplicateValues", "arguments": {"properties": unique},
                                   "mustBe": 0, "description": "these columns are unique together"}]
        element["customProperties"] = [_custom(CONFIG, config)]
        objects = [element]
    elif schema_type == "event":
        element = _section_object(entity, "payload", document.get("payload"), section_key=False)
        if len(set(tables)) == 1:
            element["physicalName"] = tables[0]
        element["physicalType"] = "topic"
        objects = [element]
    else:
        objects = [_section_object("request", "request", document.get("request"), section_key=False),
                   _section_object("response", "response", document.get("response"), section_key=False)]
        for callback, body in (document.get("callbacks") or {}).items():
            objects.append(_section_object(f"callback_{callback}", f"callbacks.{callback}", body, section_key=True))
    odcs["schema"] = objects

    max_ages = [d.max_age for d in datasets if d.max_age is not None]
    if max_ages:
        element_name = f"{entity}.{facts.freshness_column}" if facts.freshness_column and schema_type == "dataframe" else None
        odcs["slaProperties"] = [_freshness_sla(min(max_ages), element_name)]
    if servers:
        odcs["servers"] = servers

    customs = [_custom(SCHEMA_TYPE, schema_type)]
    if document.get("meta"):
        customs.append(_custom(META, document["meta"]))
    if facts.compatibility_mode:
        customs.append(_custom(MODE, facts.compatibility_mode))
    if facts.consumers:
        customs.append(_custom(CONSUMERS, facts.consumers))
    odcs["customProperties"] = customs
    if facts.published_at is not None:
        odcs["contractCreatedTs"] = facts.published_at.isoformat()
    # a plain copy: values shared with the document would come out as YAML anchors and aliases
    return json.loads(json.dumps(odcs))


# --- import -------------------------------------------------------------------------


@dataclass
class OdcsImport:
    document: dict[str, Any]
    notes: list[str]  # what was not imported, or imported by a rule of thumb, each with its path


_ROOT_KEYS = {"apiVersion", "kind", "id", "name", "version", "status", "domain", "description", "team", "schema",
              "servers", "slaProperties", "customProperties", "contractCreatedTs", "slaDefaultElement", "tags"}
_STATE = "not part of a contract document; the registry keeps it"


# The name parts and version the contract format takes (its templates say the same).
_PART = re.compile(r"[^./\\\s-]+")
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?((a|b|rc)(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?")


def _name_parts(name: str, where: str = "id") -> tuple[str, list[str], str]:
    parts = name.split(".")
    if len(parts) < 2 or not all(_PART.fullmatch(p) for p in parts):
        hint = "; name the contract with --id domain.entity" if where == "id" else ""
        raise OdcsError(f"{where}: {name!r} is not a dotted contract name (domain.sub….entity, each part without "
                        f"'.', '/', '-', '\\' or spaces){hint}")
    return parts[0], parts[1:-1], parts[-1]


def _infer_schema_type(odcs: dict, notes: list[str]) -> str:
    objects = odcs.get("schema") or []
    if not isinstance(objects, list) or not all(isinstance(o, dict) for o in objects):
        return "dataframe"  # the schema section's own problem is reported where it is read
    tables = all(str(o.get("physicalType", "")).lower() in ("table", "view") for o in objects)
    if (len(objects) == 1 or (objects and tables)) and all(
            isinstance(p, dict) and p.get("logicalType") not in ("object",) and not p.get("properties")
            for p in objects[0].get("properties") or []):
        kind = "dataframe"
    else:
        kind = "event" if len(objects) == 1 else "api"
    notes.append(f"customProperties[{SCHEMA_TYPE}]: missing; imported as a {kind} contract by its shape")
    return kind


def from_odcs(odcs: Any, *, name: str | None = None, team: str | None = None) -> OdcsImport:
    """The contract document an ODCS v3 contract describes, with notes on what did not fit.

    `name` (a dotted contract name) and `team` (the owner team's slug) fill in what the
    contract lacks, or stand in for what it says (a note keeps what was replaced).

    Raises OdcsError when it cannot become a document at all; its `problems` list every
    problem found, each with its JSON path."""
    if not isinstance(odcs, dict):
        raise OdcsError("the file is not a YAML mapping")
    if odcs.get("kind") != "DataContract" or not str(odcs.get("apiVersion", "")).startswith("v3."):
        raise OdcsError(f"apiVersion/kind: expected an ODCS v3 DataContract, got apiVersion "
                        f"{odcs.get('apiVersion')!r} kind {odcs.get('kind')!r}")
    notes: list[str] = []
    problems: list[str] = []
    _note_unknown(odcs, _ROOT_KEYS, "", notes)
    notes[:] = [n.lstrip(".") for n in notes]
    customs = _customs(odcs)
    given = odcs.get("id") or odcs.get("name")
    domain, subdomains, entity = "", [], ""
    if name is not None:
        try:
            domain, subdomains, entity = _name_parts(name, "--id")
        except OdcsError as exc:
            problems.append(str(exc))
        if given not in (None, name):
            notes.append(f"id: {given!r} not imported; the contract is named {name!r} (--id)")
    elif not isinstance(given, str):
        problems.append("id: missing; the contract's dotted name goes there (or name it with --id)")
    else:
        name = given
        if odcs.get("name") not in (None, name):
            notes.append(f"name: {odcs['name']!r} not imported; the contract is named by its id {name!r}")
        try:
            domain, subdomains, entity = _name_parts(name)
        except OdcsError as exc:
            problems.append(str(exc))
    if domain and odcs.get("domain") not in (None, domain) and given != name:
        notes.append(f"domain: {odcs['domain']!r} not imported; the contract's domain is {domain!r} (--id)")
    elif domain and odcs.get("domain") not in (None, domain):
        problems.append(f"domain: {odcs['domain']!r} disagrees with the contract name {name!r} (domain {domain!r})")
    version = odcs.get("version")
    if not isinstance(version, str | int | float) or isinstance(version, bool):
        problems.append("version: missing")
    elif not _VERSION.fullmatch(str(version)):
        problems.append(f"version: {str(version)!r} is not a contract version (MAJOR.MINOR[.PATCH][aN|bN|rcN][.devN])")
    section_team = odcs.get("team")
    owner = section_team.get("name") if isinstance(section_team, dict) else None
    if team is not None:
        if owner not in (None, team):
            notes.append(f"team.name: {owner!r} not imported; the owner team is {team!r} (--team)")
        owner = team
    elif not owner or not isinstance(owner, str):
        problems.append("team.name: missing; it names the owner team (its slug), or give one with --team")
    if isinstance(section_team, dict):
        for key in section_team:
            if key != "name":
                notes.append(f"team.{key}: {_STATE} (team membership)")
    elif isinstance(section_team, list):
        notes.append(f"team: a list of members; {_STATE} (team membership)")
    description = odcs.get("description")
    purpose = description.get("purpose") if isinstance(description, dict) else None
    if isinstance(description, dict):
        for key in description:
            if key != "purpose":
                notes.append(f"description.{key}: not imported; the document has one description (purpose)")

    schema_type = customs.get(SCHEMA_TYPE) or _infer_schema_type(odcs, notes)
    section: dict[str, Any] = {
        "name": name, "domain": domain, "subdomains": subdomains, "entity": entity, "version": str(version),
        "owner": owner, "schema_type": schema_type, "description": purpose,
    }
    if purpose is None and schema_type != "dataframe":
        del section["description"]  # the exporter always writes it; authors of event and api documents may not
    document: dict[str, Any] = {"schema": section}
    if customs.get(META):
        document["meta"] = customs[META]
    for key, what in ((MODE, "the contract's compatibility mode"), (CONSUMERS, "consumer registrations")):
        if key in customs:
            notes.append(f"customProperties[{key}]: {_STATE} ({what})")
    for key in ("contractCreatedTs", "slaDefaultElement", "tags"):
        if key in odcs:
            notes.append(f"{key}: {_STATE}" if key != "tags" else "tags: not imported; meta is customProperties[registryMeta]")
    for index, _ in enumerate(odcs.get("slaProperties") or []):
        notes.append(f"slaProperties[{index}]: {_STATE} (a dataset's freshness SLO: set it on the dataset page)")

    try:
        _schema_sections(odcs, document, schema_type, notes, problems)
    except OdcsError as exc:
        problems.extend(exc.problems)
    if problems:
        raise OdcsError(f"{len(problems)} problem(s):\n  " + "\n  ".join(problems), problems)
    return OdcsImport(document=document, notes=notes)


def _schema_sections(odcs: dict, document: dict, schema_type: str, notes: list[str], problems: list[str]) -> None:
    """The datasets and the schema sections of the document, every problem added to `problems`."""
    objects = odcs.get("schema") or []
    if not isinstance(objects, list) or not objects:
        raise OdcsError("schema: missing; a contract describes at least one schema object")
    tables = [o.get("physicalName") or o.get("name") for o in objects if isinstance(o, dict)]
    datasets = []
    for index, server in enumerate(odcs.get("servers") or []):
        path = f"servers[{index}]"
        if FRESHNESS in _customs(server):
            notes.append(f"{path}.customProperties[{FRESHNESS}]: {_STATE} (the dataset's freshness SLO)")
        dataset = _dataset_of_server(server, tables[0] if len(tables) == 1 else None, path, notes)
        if dataset is not None:
            datasets.append(dataset)
    if datasets:
        document["datasets"] = datasets

    if schema_type == "dataframe":
        if len(objects) != 1:
            problems.append(f"schema: a dataframe contract has one schema object (a table), this has {len(objects)}; "
                            "import each table as a contract of its own")
        element = objects[0]
        _note_unknown(element, {"name", "logicalType", "physicalType", "physicalName", "properties", "quality",
                                "customProperties", "description"}, "schema[0]", notes)
        config = dict(_customs(element).get(CONFIG) or {})
        if not config:
            config = {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False,
                      "add_missing_columns": False, "unique_column_names": False}
            notes.append(f"schema[0].customProperties[{CONFIG}]: missing; the registry's defaults apply "
                         "(strict: filter, coerce: true)")
        unique = None
        for index, rule in enumerate(element.get("quality") or []):
            columns = (rule.get("arguments") or {}).get("properties")
            if rule.get("metric") == "duplicateValues" and rule.get("mustBe") == 0 and isinstance(columns, list):
                unique = list(columns)
            else:
                notes.append(f"schema[0].quality[{index}]: not imported; only duplicateValues over properties "
                             "(config.unique) has a place")
        document["config"] = {
            "strict": config.get("strict", "filter"), "coerce": config.get("coerce", True),
            "drop_invalid_rows": config.get("drop_invalid_rows", False), "ordered": config.get("ordered", False),
            "unique": unique, "add_missing_columns": config.get("add_missing_columns", False),
            "unique_column_names": config.get("unique_column_names", False),
        }
        document["columns"] = []
        for number, table in enumerate(objects):  # every table's problems, though only one can be imported
            for index, prop in enumerate(table.get("properties") or [] if isinstance(table, dict) else []):
                try:
                    column = _column_of(prop, f"schema[{number}].properties[{index}]", [] if number else notes)
                except OdcsError as exc:
                    problems.extend(exc.problems)
                    continue
                if number == 0:
                    document["columns"].append(column)
        if not document["columns"] and not problems:
            problems.append("schema[0].properties: missing; a table has at least one column")
    elif schema_type == "event":
        if len(objects) != 1:
            raise OdcsError(f"schema: an event contract has one schema object (its payload), this has {len(objects)}")
        document["payload"] = _section_of(objects[0], "schema[0]", notes)
    elif schema_type == "api":
        callbacks: dict[str, Any] = {}
        for index, element in enumerate(objects):
            where = _customs(element).get(SECTION) or element.get("name")
            try:
                body = _section_of(element, f"schema[{index}]", notes)
            except OdcsError as exc:
                problems.extend(exc.problems)
                continue
            if where in ("request", "response"):
                document[where] = body
            elif isinstance(where, str) and where.startswith(("callbacks.", "callback_")):
                callbacks[where.split(".", 1)[1] if where.startswith("callbacks.") else where[len("callback_"):]] = body
            else:
                problems.append(f"schema[{index}]: an api contract's schema objects are request, response and "
                                f"callback_<name>; {where!r} is none of them")
        if callbacks:
            document["callbacks"] = callbacks
    else:
        problems.append(f"customProperties[{SCHEMA_TYPE}]: {schema_type!r} is not dataframe, event or api")
