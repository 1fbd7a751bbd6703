"""Schemas as values: equality keys, the JSON types a schema admits, conjunction, alternatives."""

from __future__ import annotations

import json
import math
import re

from .normalize import normalize
from .vocabulary import (
    ALL_ATOMS,
    ANNOTATIONS,
    DEFINITIONS,
    ENUMERATION_LIMIT,
    FALSE,
    GROUP_KEYS,
    NUMERIC,
    TYPE_ATOMS,
    UNSUPPORTED_WHEN_PRESENT,
)


def _key(value) -> str:
    """A canonical text of `value` (json.dumps's, sorted keys), without the
    encoder for the scalars most keys are: an absent bound is asked about
    far more often than any schema."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return int.__repr__(value)
    return json.dumps(value, sort_keys=True, default=str)


def _refless(key: str) -> bool:
    """Two equal texts mean equal schemas only when nothing in them points elsewhere."""
    return not any(word in key for word in ('"$ref"', '"$dynamicRef"', '"$recursiveRef"'))


def _value_key(value) -> str:
    """Equality as JSON Schema sees it: 1 == 1.0, but true != 1."""
    def canon(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [canon(x) for x in v]
        if isinstance(v, dict):
            return {k: canon(x) for k, x in v.items()}
        return v
    return json.dumps(canon(value), sort_keys=True)


def is_false(s) -> bool:
    """True only when no document is valid under `s` (false, or a conjunct that is)."""
    if not isinstance(s, dict):
        return False
    if "not" in s and admits_everything(s["not"]):
        return True
    one = s.get("oneOf")
    if isinstance(one, list) and one and (sum(1 for b in one if admits_everything(b)) >= 2 or all(is_false(b) for b in one)):
        return True  # two branches everything matches: no document matches exactly one
    alternatives = s.get("anyOf")
    if isinstance(alternatives, list) and alternatives and all(is_false(b) for b in alternatives):
        return True
    conjuncts = s.get("allOf")
    if isinstance(conjuncts, list) and any(is_false(b) for b in conjuncts):
        return True
    return isinstance(s.get("enum"), list) and not s["enum"]


def is_true(s) -> bool:
    return s is True or (isinstance(s, dict) and all(k in ANNOTATIONS or k in DEFINITIONS for k in s))


def admits_everything(s) -> bool:
    """True only when every document is valid under `s`: every keyword it holds is trivially met
    (`properties` whose schemas are all true, `required: []`, `minItems: 0` …)."""
    return s is True or (isinstance(s, dict) and all(_trivial(k, v) for k, v in s.items()))


_SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_SUBSCHEMAS = ("additionalProperties", "items", "propertyNames", "unevaluatedProperties", "unevaluatedItems")
_ZERO_COUNTS = ("minLength", "minItems", "minProperties", "minContains")


def _trivial(k: str, v) -> bool:
    if k in ANNOTATIONS or k in DEFINITIONS:
        return True
    if k in _SUBSCHEMA_MAPS:
        return isinstance(v, dict) and all(admits_everything(x) for x in v.values())
    if k in _SUBSCHEMAS:
        return admits_everything(v)
    if k in ("allOf", "prefixItems"):
        return isinstance(v, list) and all(admits_everything(x) for x in v)
    if k in ("required",):
        return v == []
    if k in _ZERO_COUNTS:
        return _num(v) and v == 0
    return False


def _ptr(path: str, *parts) -> str:
    for part in parts:
        path += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return path


def _value_atoms(value) -> frozenset:
    if value is None:
        return frozenset({"null"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int):
        return frozenset({"integer"})
    if isinstance(value, float):
        return frozenset({"integer"}) if value.is_integer() else frozenset({"fraction"})
    if isinstance(value, str):
        return frozenset({"string"})
    if isinstance(value, list):
        return frozenset({"array"})
    return frozenset({"object"})


def _declared_atoms(s: dict) -> frozenset:
    t = s.get("type")
    if t is None:
        return ALL_ATOMS
    names = t if isinstance(t, list) else [t]
    out: frozenset = frozenset()
    for name in names:
        out |= TYPE_ATOMS.get(name, frozenset())
    return out


def atoms(s: dict) -> frozenset:
    """An over-approximation of the JSON types a document valid under `s` can have."""
    if not isinstance(s, dict):
        return ALL_ATOMS
    if is_false(s):
        return frozenset()
    out = _declared_atoms(s)
    excluded = s.get("not")
    if isinstance(excluded, dict) and isinstance(excluded.get("not"), dict) and "$ref" not in excluded["not"] \
            and all(k == "not" or k in ANNOTATIONS for k in excluded):
        out &= atoms(excluded["not"])  # not (not X) is X
    elif isinstance(excluded, dict):
        branches = [excluded]
        if isinstance(excluded.get("anyOf"), list) and all(k == "anyOf" or k in ANNOTATIONS for k in excluded):
            branches = excluded["anyOf"]
        for b in branches:
            if isinstance(b, dict) and "type" in b:
                out -= _pure_atoms(b)  # `not: {type: …}` removes the types it refuses whole
    if "const" in s:
        out &= _value_atoms(s["const"])
    if _is_int(s.get("multipleOf")):
        out -= {"fraction"}  # x % k == 0 with an integer k makes x integral
    if isinstance(s.get("enum"), list):
        found: frozenset = frozenset()
        for v in s["enum"]:
            found |= _value_atoms(v)
        out &= found
    for b in s.get("allOf", []) if isinstance(s.get("allOf"), list) else []:
        if isinstance(b, dict) and "$ref" not in b:
            out &= atoms(b)
    for key in ("anyOf", "oneOf"):
        branches = s.get(key)
        if isinstance(branches, list) and all(isinstance(b, dict) and "$ref" not in b for b in branches):
            found = frozenset()
            for b in branches:
                found |= atoms(b)
            out &= found
    return out - _contradicted(s)


# The JSON types each keyword constrains; beside `type`, a keyword leaves the other types whole.
_KEYWORD_DOMAINS = {
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), NUMERIC),
    **dict.fromkeys(("minLength", "maxLength", "pattern", "format"), frozenset({"string"})),
    **dict.fromkeys(("properties", "patternProperties", "additionalProperties", "required", "minProperties",
                     "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames"), frozenset({"object"})),
    **dict.fromkeys(("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains",
                     "maxContains"), frozenset({"array"})),
}


def _pure_atoms(b: dict) -> frozenset:
    """The types `b` admits whole: named by its `type`, and constrained by none of its other keywords."""
    out = _declared_atoms(b)
    for k in b:
        if k == "type" or k in ANNOTATIONS:
            continue
        domain = _KEYWORD_DOMAINS.get(k)
        if domain is None:
            return frozenset()  # a keyword that may constrain any type
        out -= domain
    return out


def _contradicted(s: dict) -> frozenset:
    """The JSON types for which `s` contradicts itself: bounds that cross, a required property
    that can hold no value, a tuple shorter than its minimum. A document of such a type cannot
    be valid, so the schema admits nothing of it (and nothing at all when every type is gone)."""
    out: set = set()
    lower, upper = _bound(s, "minimum", "exclusiveMinimum", max), _bound(s, "maximum", "exclusiveMaximum", min)
    if lower is not None and upper is not None:
        if upper[0] < lower[0] or (upper[0] == lower[0] and (upper[1] or lower[1])):
            out |= NUMERIC
        elif math.ceil(lower[0]) > math.floor(upper[0]) or (
                # no integer strictly inside (l, u) when l and u are consecutive integers
                _is_int(lower[0]) and _is_int(upper[0]) and upper[0] - lower[0] == 1 and lower[1] and upper[1]):
            out.add("integer")
    if _crossed(s, "minLength", "maxLength"):
        out.add("string")
    cap = array_cap(s)
    if _crossed(s, "minItems", "maxItems") or (cap is not None and _count(s.get("minItems")) > cap):
        out.add("array")
    contains = s.get("contains")
    if isinstance(contains, dict) and (is_false(contains) or not atoms(contains)) and s.get("minContains", 1) != 0:
        out.add("array")  # an item must match a schema nothing matches
    prefix = s.get("prefixItems") if isinstance(s.get("prefixItems"), list) else []
    if any(is_false(p) for p in prefix[:_count(s.get("minItems"))]):
        out.add("array")  # a position every array has, whose schema admits nothing
    required = [r for r in s.get("required") or [] if isinstance(r, str)] if isinstance(s.get("required"), list) else []
    if _crossed(s, "minProperties", "maxProperties") or (_num(s.get("maxProperties")) and len(set(required)) > s["maxProperties"]):
        out.add("object")
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    for name in required:
        if name in props:
            if is_false(props[name]):
                out.add("object")
        elif not s.get("patternProperties") and is_false(s.get("additionalProperties", {})):
            out.add("object")  # required, but undeclared names are refused
    return frozenset(out)


def _bound(s: dict, inclusive: str, exclusive: str, pick):
    found = []
    if _num(s.get(inclusive)):
        found.append((s[inclusive], False))
    if _num(s.get(exclusive)):
        found.append((s[exclusive], True))
    if not found:
        return None
    best = pick(v for v, _ in found)
    return best, any(x for v, x in found if v == best)


def _count(v) -> int:
    return int(v) if _num(v) and v >= 0 else 0


def _crossed(s: dict, lo: str, hi: str) -> bool:
    return _num(s.get(lo)) and _num(s.get(hi)) and s[lo] > s[hi]


def array_cap(s: dict) -> int | None:
    """The most items an array valid under `s` can hold (maxItems, or the tuple's length when
    `items` is false), or None when unbounded."""
    caps = []
    if _num(s.get("maxItems")) and s["maxItems"] >= 0:
        caps.append(int(s["maxItems"]))
    if "items" in s and is_false(s["items"]):
        caps.append(len(s["prefixItems"]) if isinstance(s.get("prefixItems"), list) else 0)
    return min(caps) if caps else None


# In-place applicators: the keywords whose subschemas evaluate properties or items of the same
# instance, which `unevaluated*` would have to see through. Without them, what `unevaluated*`
# applies to is exactly what `additional*` would.
_IN_PLACE = ("allOf", "anyOf", "oneOf", "if", "then", "else", "dependentSchemas", "$ref", "$dynamicRef", "$recursiveRef")


def lower_unevaluated(s: dict) -> dict:
    """`unevaluatedProperties`/`unevaluatedItems` rewritten where their meaning is local.

    With no in-place applicator beside them, the properties left unevaluated are exactly those
    `properties` and `patternProperties` do not name, as for `additionalProperties` (so the keyword
    is `additionalProperties`, or has no effect when that is present); the items left unevaluated
    are those past `prefixItems`, as for `items` (and `contains` evaluates items too, so it keeps
    the keyword as it is)."""
    if not isinstance(s, dict) or not ("unevaluatedProperties" in s or "unevaluatedItems" in s):
        return s
    if any(k in s for k in _IN_PLACE):
        return s
    out = dict(s)
    if "unevaluatedProperties" in out:
        value = out.pop("unevaluatedProperties")
        out.setdefault("additionalProperties", value)
    if "unevaluatedItems" in out and "contains" not in out:
        value = out.pop("unevaluatedItems")
        out.setdefault("items", value)
    return out


def _atoms_to_type(a: frozenset):
    names = []
    for name in ("null", "boolean", "object", "array", "string"):
        if name in a:
            names.append(name)
    if NUMERIC <= a:
        names.append("number")
    elif "integer" in a:
        names.append("integer")
    elif "fraction" in a:
        return None  # not expressible with `type`
    return names[0] if len(names) == 1 else names


def merge(a: dict, b: dict) -> dict:
    """The conjunction of two schemas, as one schema object when that keeps the meaning, else allOf."""
    if is_true(a):
        return b
    if is_true(b):
        return a
    if is_false(a) or is_false(b):
        return dict(FALSE)
    fallback = {"allOf": [a, b]}
    if _interacts(a, b) or _interacts(b, a):
        return fallback
    if any(k in a for k in GROUP_KEYS) and any(k in b for k in GROUP_KEYS):
        return fallback
    out = dict(a)
    for k, v in b.items():
        if k not in out or k in ANNOTATIONS:
            out.setdefault(k, v)
            continue
        cur = out[k]
        if _key(cur) == _key(v):
            continue
        joined = _merge_keyword(k, cur, v)
        if joined is _UNSATISFIABLE:
            return dict(FALSE)
        if joined is _INEXPRESSIBLE:
            return fallback
        out[k] = joined
    return out


# What _merge_keyword answers when the two values do not fold into one.
_UNSATISFIABLE = object()  # no value satisfies both: the conjunction is false
_INEXPRESSIBLE = object()  # the conjunction is not one value of the keyword: keep the allOf

_LOWER_COUNTS = ("minimum", "minLength", "minItems", "minProperties")
_UPPER_COUNTS = ("maximum", "maxLength", "maxItems", "maxProperties")


def _merge_keyword(k: str, cur, v):
    """The value keyword `k` takes in the conjunction of a schema giving it `cur` and one giving it `v`."""
    if k == "required" and isinstance(cur, list) and isinstance(v, list):
        return list(dict.fromkeys([*cur, *v]))
    if k == "type":
        return _merge_type(cur, v)
    if k == "properties" and isinstance(cur, dict) and isinstance(v, dict):
        props = dict(cur)
        for name, sub in v.items():
            props[name] = merge(props[name], sub) if name in props else sub
        return props
    if k == "allOf":
        return [*cur, *v]
    if k in _LOWER_COUNTS and _num(cur) and _num(v):
        return max(cur, v)
    if k in _UPPER_COUNTS and _num(cur) and _num(v):
        return min(cur, v)
    return _INEXPRESSIBLE


def _merge_type(cur, v):
    joined = _declared_atoms({"type": cur}) & _declared_atoms({"type": v})
    if not joined:
        return _UNSATISFIABLE
    t = _atoms_to_type(joined)
    return _INEXPRESSIBLE if t is None else t


def _num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _interacts(a: dict, b: dict) -> bool:
    if "additionalProperties" in a and ("properties" in b or "patternProperties" in b):
        return True
    if "items" in a and "prefixItems" in b:
        return True
    if any(k in a for k in UNSUPPORTED_WHEN_PRESENT):
        return True
    return False


def flatten(s: dict) -> dict:
    """Fold allOf branches into the schema object wherever that keeps the meaning."""
    if not isinstance(s, dict) or not isinstance(s.get("allOf"), list):
        return s
    cur = {k: v for k, v in s.items() if k != "allOf"}
    rest = []
    for branch in s["allOf"]:
        if not isinstance(branch, dict):
            rest.append(branch)
            continue
        branch = flatten(branch)
        merged = merge(cur, branch)
        if "allOf" in merged and merged.get("allOf") == [cur, branch]:
            rest.append(branch)
        else:
            cur = merged
    if rest:
        cur = dict(cur)
        cur["allOf"] = [*cur.get("allOf", []), *rest]
    return cur


def _is_int(x) -> bool:
    return _num(x) and float(x).is_integer()


def key_to_snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _units(s: dict) -> tuple[list[dict], str | None]:
    """The schema split into alternatives a valid document must satisfy one of."""
    for key in ("oneOf", "anyOf"):
        branches = s.get(key)
        if isinstance(branches, list) and branches:
            rest = {k: v for k, v in s.items() if k != key}
            return [merge(rest, b if isinstance(b, dict) else normalize(b)) for b in branches], key
    types = s.get("type")
    if isinstance(types, list) and len(types) > 1 and all(isinstance(t, str) for t in types):
        # a document has one JSON type, so a type list is a set of alternatives too
        return [{**s, "type": t} for t in types], None
    return [s], None


def _finite_values(s: dict) -> list | None:
    if is_false(s):
        return []
    if "const" in s:
        return [s["const"]]
    if isinstance(s.get("enum"), list) and len(s["enum"]) <= ENUMERATION_LIMIT:
        return list(s["enum"])
    a = atoms(s)
    if a <= {"null", "boolean"}:
        return [v for v, t in ((None, "null"), (True, "boolean"), (False, "boolean")) if t in a]
    return None
