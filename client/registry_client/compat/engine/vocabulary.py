"""The keyword sets and type atoms the engine reasons with."""

from __future__ import annotations

import jsonschema

# `$schema` URIs and the dialects they name; a document without one (or with an unknown one)
# is read as Draft 2020-12, as validators read it.
DRAFT_IDS = (("draft-03", "3"), ("draft-04", "4"), ("draft-06", "6"), ("draft-07", "7"),
             ("2019-09", "2019"), ("2020-12", "2020"))
DRAFT_NAMES = {"3": "Draft 3", "4": "Draft 4", "6": "Draft 6", "7": "Draft 7", "2019": "Draft 2019-09", "2020": "Draft 2020-12"}
# Drafts whose `$ref` replaces the whole schema object (its siblings, `$id` included, are ignored).
LEGACY_REF = frozenset({"3", "4", "6", "7"})
_VALIDATORS = {"3": jsonschema.Draft3Validator, "4": jsonschema.Draft4Validator, "6": jsonschema.Draft6Validator,
               "7": jsonschema.Draft7Validator, "2019": jsonschema.Draft201909Validator,
               "2020": jsonschema.Draft202012Validator}
# The keywords each draft's validator gives a meaning (the reference is jsonschema's validator of
# that draft), plus those read by another keyword (exclusive bounds beside minimum/maximum in
# Drafts 3-4, then/else beside if, minContains/maxContains beside contains). Anything else in a
# schema of that draft is an annotation there.
VOCABULARIES = {
    draft: frozenset(cls.VALIDATORS) | {
        "3": {"exclusiveMinimum", "exclusiveMaximum"}, "4": {"exclusiveMinimum", "exclusiveMaximum"},
        "6": set(), "7": {"then", "else"}, "2019": {"then", "else", "minContains", "maxContains"},
        "2020": {"then", "else", "minContains", "maxContains"},
    }[draft]
    for draft, cls in _VALIDATORS.items()
}
# The formats each draft's validator asserts (its format checker's; `regex` read as ECMA-262). A
# format its draft does not know is not checked there: an annotation, like an unknown keyword.
FORMATS = {draft: frozenset(cls.FORMAT_CHECKER.checkers) | {"regex"} for draft, cls in _VALIDATORS.items()}
# Keywords of the registry's own (contract documents' whole-frame rules): they assert something
# the checker does not reason about, in every draft.
REGISTRY_PREFIX = "dataframe"
# Where keywords a draft does not define are kept (as annotations) in the normalised schema.
IGNORED = "$ignored"
# Drafts 3 and 4 count only numbers written without a fraction part as integers (1.0 is not one):
# their `type: integer` carries this marker, which the validator and the comparison honour.
INTEGER_ONLY = "$integerOnly"

ANNOTATIONS = frozenset({
    "title", "description", "examples", "$comment", "default", "deprecated", "readOnly",
    "writeOnly", "contentMediaType", "contentEncoding", "contentSchema", "$schema", "$id",
    "$anchor", "$dynamicAnchor", "$vocabulary", "$recursiveAnchor", IGNORED,
})
# Containers of subschemas that only matter when a $ref points into them.
DEFINITIONS = frozenset({"$defs", "definitions"})
UNSUPPORTED_WHEN_PRESENT = ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef")
HANDLED = frozenset({
    "$ref", "type", INTEGER_ONLY, "enum", "const",
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
