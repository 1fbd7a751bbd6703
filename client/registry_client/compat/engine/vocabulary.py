"""The keyword sets and type atoms the engine reasons with."""

from __future__ import annotations

DRAFT7_IDS = ("draft-07", "draft-06", "draft-04", "draft-03")

ANNOTATIONS = frozenset({
    "title", "description", "examples", "$comment", "default", "deprecated", "readOnly",
    "writeOnly", "contentMediaType", "contentEncoding", "contentSchema", "$schema", "$id",
    "$anchor", "$dynamicAnchor", "$vocabulary",
})
# Containers of subschemas that only matter when a $ref points into them.
DEFINITIONS = frozenset({"$defs", "definitions"})
UNSUPPORTED_WHEN_PRESENT = ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef")
HANDLED = frozenset({
    "$ref", "type", "enum", "const",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "format",
    "required", "properties", "patternProperties", "additionalProperties",
    "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames",
    "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
}) | DEFINITIONS | ANNOTATIONS

# Atoms are JSON types with numbers split in two (integral or not), so that both
# `integer` and `number` are sets of atoms.
ALL_ATOMS = frozenset({"null", "boolean", "object", "array", "string", "integer", "fraction"})
NUMERIC = frozenset({"integer", "fraction"})
TYPE_ATOMS = {
    "null": frozenset({"null"}), "boolean": frozenset({"boolean"}), "object": frozenset({"object"}),
    "array": frozenset({"array"}), "string": frozenset({"string"}),
    "integer": frozenset({"integer"}), "number": NUMERIC,
}
FALSE: dict = {"not": {}}
ENUMERATION_LIMIT = 2000

GROUP_KEYS = ("if", "then", "else")
COMBINATORS = ("allOf", "anyOf", "oneOf", "not", *GROUP_KEYS)
