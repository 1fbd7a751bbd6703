"""An event or api contract's JSON Schemas as tables of their properties, the way a
dataframe contract is a table of its columns: one row per property, nested objects and
array items indented beneath their parent.

Only what a reader needs to see is turned into words (type, required, constraints,
description); the raw YAML stays on the page for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 8  # deeper nesting is left to the raw YAML beside the table

# Keywords shown in the Type column or walked into; every other keyword is a constraint.
_STRUCTURE = {
    "type", "format", "properties", "required", "items", "prefixItems", "description", "title",
    "$schema", "$id", "$defs", "definitions", "$comment", "examples", "additionalProperties",
}


@dataclass(frozen=True)
class PropertyRow:
    name: str
    depth: int
    type: str
    required: bool | None  # None: not a property of an object (array items, a definition)
    constraints: tuple[str, ...] = ()
    description: str = ""


@dataclass
class SchemaTable:
    """One section (`payload`, `request`, `response`, a callback) as rows."""

    name: str
    schema: Any
    rows: list[PropertyRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def type_text(schema: Any) -> str:
    """`string (date-time)`, `integer | null`, `→ #/$defs/Line`, `enum`, `any`."""
    if schema is True or schema == {}:
        return "any"
    if schema is False:
        return "nothing"
    if not isinstance(schema, dict):
        return "?"
    if isinstance(schema.get("$ref"), str):
        return "→ " + schema["$ref"]
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " | ".join(_value(k) for k in kind)
    elif isinstance(kind, str):
        text = kind
    elif "enum" in schema:
        text = "enum"
    elif "const" in schema:
        text = "const"
    else:
        branches = next((schema[k] for k in ("oneOf", "anyOf") if isinstance(schema.get(k), list)), None)
        text = " | ".join(type_text(b) for b in branches) if branches else "any"
    if kind == "array" and isinstance(schema.get("items"), dict):
        text = f"array of {type_text(schema['items'])}"
    if isinstance(schema.get("format"), str):
        text += f" ({schema['format']})"
    return text


def constraints_of(schema: Any) -> tuple[str, ...]:
    """The schema's own rules in short words: `≥ 0`, `length ≤ 36`, `one of web, app, store`."""
    if not isinstance(schema, dict):
        return ()
    out: list[str] = []
    words = {
        "minimum": "≥ {}", "exclusiveMinimum": "> {}", "maximum": "≤ {}", "exclusiveMaximum": "< {}",
        "minLength": "length ≥ {}", "maxLength": "length ≤ {}", "minItems": "at least {} items",
        "maxItems": "at most {} items", "minProperties": "at least {} properties",
        "maxProperties": "at most {} properties", "multipleOf": "multiple of {}", "pattern": "matches {}",
        "default": "default {}",
    }
    for key, value in schema.items():
        if key in _STRUCTURE or key == "$ref":
            continue
        if key in words and not isinstance(value, bool | dict | list):
            out.append(words[key].format(_value(value)))
        elif key == "enum" and isinstance(value, list):
            out.append("one of " + ", ".join(_value(v) for v in value))
        elif key == "const":
            out.append(f"= {_value(value)}")
        elif key == "uniqueItems" and value is True:
            out.append("unique items")
        elif key in ("oneOf", "anyOf", "allOf") and isinstance(value, list) and not isinstance(schema.get("type"), str | list):
            continue  # named in the Type column
        else:
            out.append(f"{key}: {_value(value)}")
    if schema.get("additionalProperties") is False and isinstance(schema.get("properties"), dict):
        out.append("no other properties")
    return tuple(out)


def _description(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    return str(schema.get("description") or schema.get("title") or "")


def _walk(schema: Any, depth: int, rows: list[PropertyRow]) -> None:
    """Rows for what sits beneath `schema`: its properties, or its array items."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return
    properties = schema.get("properties")
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    if isinstance(properties, dict):
        for name, sub in properties.items():
            rows.append(PropertyRow(str(name), depth, type_text(sub), name in required,
                                    constraints_of(sub), _description(sub)))
            _walk(sub, depth + 1, rows)
    for branch in schema.get("allOf") or []:
        _walk(branch, depth, rows)  # allOf's properties belong to this object
    items = schema.get("items")
    if isinstance(items, dict) and (isinstance(items.get("properties"), dict) or isinstance(items.get("items"), dict)):
        rows.append(PropertyRow("[items]", depth, type_text(items), None, constraints_of(items), _description(items)))
        _walk(items, depth + 1, rows)


def schema_table(name: str, schema: Any) -> SchemaTable:
    table = SchemaTable(name=name, schema=schema)
    if not isinstance(schema, dict):
        table.rows.append(PropertyRow("(the whole document)", 0, type_text(schema), None))
        return table
    if not isinstance(schema.get("properties"), dict):
        # Not an object of named properties (an array, a $ref, a oneOf): the root is the one row.
        table.rows.append(PropertyRow("(the whole document)", 0, type_text(schema), None,
                                      constraints_of(schema), _description(schema)))
    elif schema.get("additionalProperties") is False:
        table.notes.append("Closed: a document with a property not listed here is refused.")
    _walk(schema, 0, table.rows)
    for key in ("$defs", "definitions"):
        for def_name, sub in (schema.get(key) or {}).items() if isinstance(schema.get(key), dict) else ():
            table.rows.append(PropertyRow(f"#/{key}/{def_name}", 0, type_text(sub), None,
                                          constraints_of(sub), _description(sub)))
            _walk(sub, 1, table.rows)
    return table


def contract_tables(document: dict) -> list[SchemaTable]:
    """An event contract's payload; an api contract's request, response and each callback."""
    tables = [schema_table(key, document[key]) for key in ("payload", "request", "response") if key in document]
    callbacks = document.get("callbacks")
    if isinstance(callbacks, dict):
        tables += [schema_table(f"callback {name}", sub) for name, sub in callbacks.items()]
    return tables
