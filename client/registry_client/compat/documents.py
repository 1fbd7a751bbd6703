"""Contract documents as JSON Schema, so every schema_type goes through one engine.

- a plain JSON Schema (no `schema:` header section) is returned unchanged;
- event: the `payload` schema;
- api: one object schema whose properties are `request`, `response` and
  `callbacks` (local `$ref`s are re-pointed to their new place);
- dataframe: one row as an object, one property per column (see docs/compat.md
  for the mapping and its limits).
"""

from __future__ import annotations

import copy
import re

SCHEMA_TYPES = ("dataframe", "event", "api")

INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}
FLOAT32_MAX = 3.4028234663852886e38
LIST_DTYPE = re.compile(r"^List\[(.+)\]$")


class DocumentError(ValueError):
    """The input is neither a JSON Schema nor a contract document the checker understands."""


def is_contract_document(document) -> bool:
    return isinstance(document, dict) and isinstance(document.get("schema"), dict) and "schema_type" in document["schema"]


def document_version(document) -> str | None:
    if is_contract_document(document):
        version = document["schema"].get("version")
        return None if version is None else str(version)
    return None


def to_json_schema(document) -> dict | bool:
    """The JSON Schema the checker compares for a contract document of any schema_type, or a plain schema."""
    if isinstance(document, bool):
        return document
    if not isinstance(document, dict):
        raise DocumentError(f"expected a JSON Schema or a contract document (a mapping), got {type(document).__name__}")
    if not is_contract_document(document):
        if "schema" in document and isinstance(document["schema"], dict) and "name" in document["schema"]:
            raise DocumentError("the contract document has no schema.schema_type (expected one of dataframe, event, api)")
        return document
    schema_type = document["schema"].get("schema_type")
    if schema_type == "event":
        payload = document.get("payload")
        if not isinstance(payload, dict | bool):
            raise DocumentError("an event contract needs a `payload` section holding a JSON Schema")
        return payload
    if schema_type == "api":
        return _api_schema(document)
    if schema_type == "dataframe":
        return dataframe_json_schema(document)
    raise DocumentError(f"unknown schema_type {schema_type!r}; expected one of {', '.join(SCHEMA_TYPES)}")


def _api_schema(document: dict) -> dict:
    parts = {}
    for section in ("request", "response"):
        if section in document:
            if not isinstance(document[section], dict | bool):
                raise DocumentError(f"the api contract's `{section}` must be a JSON Schema")
            parts[section] = _rebase(document[section], f"#/properties/{section}")
    callbacks = document.get("callbacks") or {}
    if not isinstance(callbacks, dict):
        raise DocumentError("the api contract's `callbacks` must map names to JSON Schemas")
    if not parts and not callbacks:
        raise DocumentError("an api contract needs a `request` or `response` section holding a JSON Schema")
    if callbacks:
        parts["callbacks"] = {
            "type": "object",
            "properties": {name: _rebase(s, f"#/properties/callbacks/properties/{_escape(name)}") for name, s in callbacks.items()},
        }
    return {"type": "object", "properties": parts}


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _rebase(schema, prefix: str):
    """Copy a schema, re-pointing its local `#/...` references below `prefix`."""
    def walk(node):
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k == "$ref" and isinstance(v, str) and (v == "#" or v.startswith("#/")):
                    out[k] = prefix + v[1:]
                else:
                    out[k] = walk(v)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(copy.deepcopy(schema))


# --------------------------------------------------------------------------- dataframe

def _scalar_schema(dtype: str, where: str) -> dict:
    d = dtype.strip()
    if d in ("str", "string", "object"):
        return {"type": "string"}
    if d in INT_BOUNDS:
        lo, hi = INT_BOUNDS[d]
        return {"type": "integer", "minimum": lo, "maximum": hi}
    if d in ("int", "integer"):
        return {"type": "integer", "minimum": INT_BOUNDS["int64"][0], "maximum": INT_BOUNDS["int64"][1]}
    if d == "float32":
        return {"type": "number", "minimum": -FLOAT32_MAX, "maximum": FLOAT32_MAX}
    if d in ("float64", "float", "number"):
        return {"type": "number"}
    if d in ("bool", "boolean"):
        return {"type": "boolean"}
    if d.startswith("datetime64") or d in ("datetime", "Timestamp"):
        return {"type": "string", "format": "date-time"}
    if d in ("date",):
        return {"type": "string", "format": "date"}
    m = LIST_DTYPE.match(d)
    if m:
        return {"type": "array", "items": _scalar_schema(m.group(1), where)}
    raise DocumentError(f"{where}: dtype {dtype!r} has no JSON Schema mapping")


def _check_keywords(check: dict, base: dict, where: str) -> dict:
    if not isinstance(check, dict) or len(check) != 1:
        raise DocumentError(f"{where}: a check must be a one-key mapping, got {check!r}")
    (name, value), = check.items()
    numeric_or_text = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}
    if name in numeric_or_text:
        if base.get("type") == "string" and base.get("format") == "date-time":
            return {"dataframeDateBound": {name: value}}
        return {numeric_or_text[name]: value}
    if name == "eq":
        return {"const": value}
    if name == "ne":
        return {"not": {"const": value}}
    if name == "isin":
        return {"enum": list(value)}
    if name == "notin":
        return {"not": {"enum": list(value)}}
    if name == "str_matches":
        return {"pattern": f"^(?:{value})"}
    if name == "str_startswith":
        return {"pattern": "^" + re.escape(value)}
    if name == "str_endswith":
        return {"pattern": re.escape(value) + "$"}
    if name == "str_contains":
        return {"pattern": value}
    if name == "str_length":
        value = value or {}
        out = {}
        if value.get("min_value") is not None:
            out["minLength"] = value["min_value"]
        if value.get("max_value") is not None:
            out["maxLength"] = value["max_value"]
        return out
    if name == "in_range":
        value = value or {}
        out = {}
        if value.get("min_value") is not None:
            out["exclusiveMinimum" if value.get("include_min") is False else "minimum"] = value["min_value"]
        if value.get("max_value") is not None:
            out["exclusiveMaximum" if value.get("include_max") is False else "maximum"] = value["max_value"]
        return out
    # Column-level checks (unique_values_eq, …) cannot be said about one row: they become a
    # keyword the engine does not know, so any change to them counts as breaking both ways.
    return {"dataframeCheck": {name: value}}


def _column_schema(column: dict, where: str) -> dict:
    dtype = column.get("dtype")
    if not isinstance(dtype, str):
        raise DocumentError(f"{where}: every column needs a string `dtype`")
    base = _scalar_schema(dtype, where)
    value = dict(base)
    extra: list[dict] = []
    for check in column.get("checks") or []:
        keywords = _check_keywords(check, base, where)
        if "not" in keywords:
            extra.append(keywords)
            continue
        for k, v in keywords.items():
            if k in ("minimum", "minLength") and k in value:
                value[k] = max(value[k], v)  # both apply; the tighter one says it all
            elif k in ("maximum", "maxLength") and k in value:
                value[k] = min(value[k], v)
            elif k in value and k not in ("type", "format"):
                extra.append({k: v})
            else:
                value[k] = v
    if extra:
        value["allOf"] = extra
    if column.get("unique"):
        value["dataframeUniqueColumn"] = True
    if column.get("description"):
        value["description"] = column["description"]
    if column.get("nullable"):
        # Pandera checks ignore nulls. Bounds, lengths and patterns already skip a JSON null;
        # value lists must name it explicitly.
        value["type"] = [base["type"], "null"]
        for part in [value, *value.get("allOf", [])]:
            if "const" in part:
                part["enum"] = [part.pop("const"), None]
            elif "enum" in part and None not in part["enum"]:
                part["enum"] = [*part["enum"], None]
    return value


def dataframe_json_schema(document: dict) -> dict:
    """One row of the frame as a JSON object (see docs/compat.md for the mapping and its limits)."""
    name = document.get("schema", {}).get("name", "<unnamed>")
    columns = document.get("columns")
    if not isinstance(columns, list):
        raise DocumentError(f"{name}: a dataframe contract needs a `columns` list")
    config = document.get("config") or {}
    properties: dict = {}
    required: list[str] = []
    for i, column in enumerate(columns):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            raise DocumentError(f"{name}: column {i} needs a `name`")
        where = f"{name}: column {column['name']!r}"
        if column["name"] in properties:
            raise DocumentError(f"{where} is declared twice")
        properties[column["name"]] = _column_schema(column, where)
        if column.get("required", True):
            required.append(column["name"])
    schema: dict = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if config.get("strict") is True:
        schema["additionalProperties"] = False
    # Whole-frame rules have no row-level meaning: engine-unknown keywords, so a change
    # to any of them is reported as breaking both ways.
    if config.get("ordered"):
        schema["dataframeOrdered"] = [c["name"] for c in columns]
    if config.get("unique"):
        schema["dataframeUnique"] = list(config["unique"])
    if "coerce" in config and config.get("coerce") is False:
        schema["dataframeNoCoerce"] = True
    if config.get("drop_invalid_rows"):
        schema["dataframeDropInvalidRows"] = True
    return schema
