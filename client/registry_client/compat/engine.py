"""Change-by-change comparison of two JSON Schemas.

`compare(old, new)` walks both schemas side by side and emits one `Change` per
difference, each with the two directions it may break:

- breaks_backward: some document valid under `old` can fail `new`;
- breaks_forward: some document valid under `new` can fail `old`.

The rule that keeps the checker honest: a direction is only called safe when a
sufficient condition proves it (L(old) ⊆ L(new) for backward). Everything the
engine cannot prove counts as breaking, with a reason that says so. Precision
comes from reasoning about more keywords, never from guessing.

Where one side describes a finite set of values (const, enum, boolean/null-only
types) the question is decided exactly by validating each value with the real
validator, which removes most false alarms around enum and const.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import replace
from urllib.parse import unquote

from jsonschema import Draft202012Validator

from .model import Change

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

ALL_ATOMS = frozenset({"null", "boolean", "object", "array", "string", "integer", "fraction"})
NUMERIC = frozenset({"integer", "fraction"})
TYPE_ATOMS = {
    "null": frozenset({"null"}), "boolean": frozenset({"boolean"}), "object": frozenset({"object"}),
    "array": frozenset({"array"}), "string": frozenset({"string"}),
    "integer": frozenset({"integer"}), "number": NUMERIC,
}
FALSE: dict = {"not": {}}
ENUMERATION_LIMIT = 2000


# --------------------------------------------------------------------------- normalisation

def detect_draft(schema) -> str:
    """'7' for documents declaring Draft 4, 6 or 7 in `$schema` (their $ref siblings are ignored), else '2020'."""
    if isinstance(schema, dict):
        uri = str(schema.get("$schema", ""))
        if any(d in uri for d in DRAFT7_IDS):
            return "7"
    # Without $schema, validators (and so the checker) read 2020-12; Draft 7 spellings such as an
    # array `items` are still rewritten, but $ref siblings then count as 2020-12 says.
    return "2020"


def normalize(schema, draft: str | None = None):
    """Rewrite a Draft 4–7 or 2020-12 schema into the 2020-12 shape the engine reasons about.

    Keys keep their places so local `$ref` pointers still resolve (except into a
    Draft 7 `items` array, which becomes `prefixItems`).
    """
    draft = draft or detect_draft(schema)
    return _norm(schema, draft)


def _norm(node, draft: str):
    if node is True:
        return {}
    if node is False:
        return dict(FALSE)
    if not isinstance(node, dict):
        return node
    if draft == "7" and "$ref" in node:
        # Draft 7 ignores every sibling of $ref; definitions stay so pointers resolve.
        kept = {k: v for k, v in node.items() if k == "$ref" or k in DEFINITIONS}
        return {k: (_norm_map(v, draft) if k in DEFINITIONS else v) for k, v in kept.items()}
    out: dict = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties", "dependentSchemas") or key in DEFINITIONS:
            out[key] = _norm_map(value, draft) if isinstance(value, dict) else value
        elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
            out[key] = [_norm(v, draft) for v in value] if isinstance(value, list) else value
        elif key == "items":
            if isinstance(value, list):
                out["prefixItems"] = [_norm(v, draft) for v in value]
                if "additionalItems" in node:
                    out["items"] = _norm(node["additionalItems"], draft)
            else:
                out["items"] = _norm(value, draft)
        elif key == "additionalItems":
            continue  # meaningful only next to an array `items`, handled there
        elif key == "dependencies" and isinstance(value, dict):
            for prop, dep in value.items():
                if isinstance(dep, list):
                    out.setdefault("dependentRequired", {})[prop] = dep
                else:
                    out.setdefault("dependentSchemas", {})[prop] = _norm(dep, draft)
        elif key in ("additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
                     "unevaluatedProperties", "unevaluatedItems"):
            out[key] = _norm(value, draft)
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and bound in node:
                out[key] = node[bound]
        elif key in ("minimum", "maximum") and node.get("exclusive" + key[0].upper() + key[1:]) is True:
            continue  # a Draft 4 exclusive bound, rewritten above
        else:
            out[key] = value
    if draft == "7":
        out.pop("$schema", None)
    return out


def _norm_map(mapping: dict, draft: str) -> dict:
    return {k: _norm(v, draft) for k, v in mapping.items()}


# --------------------------------------------------------------------------- small helpers

def _key(value) -> str:
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
    return isinstance(s, dict) and s.get("not") == {} and all(k in ANNOTATIONS for k in s if k != "not")


def is_true(s) -> bool:
    return isinstance(s, dict) and all(k in ANNOTATIONS or k in DEFINITIONS for k in s)


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


_GROUP_KEYS = ("if", "then", "else")


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
    if any(k in a for k in _GROUP_KEYS) and any(k in b for k in _GROUP_KEYS):
        return fallback
    out = dict(a)
    for k, v in b.items():
        if k not in out or k in ANNOTATIONS:
            out.setdefault(k, v)
            continue
        cur = out[k]
        if _key(cur) == _key(v):
            continue
        if k == "required" and isinstance(cur, list) and isinstance(v, list):
            out[k] = list(dict.fromkeys([*cur, *v]))
        elif k == "type":
            joined = _declared_atoms({"type": cur}) & _declared_atoms({"type": v})
            if not joined:
                return dict(FALSE)
            t = _atoms_to_type(joined)
            if t is None:
                return fallback
            out[k] = t
        elif k == "properties" and isinstance(cur, dict) and isinstance(v, dict):
            props = dict(cur)
            for name, sub in v.items():
                props[name] = merge(props[name], sub) if name in props else sub
            out[k] = props
        elif k == "allOf":
            out[k] = [*cur, *v]
        elif k in ("minimum", "minLength", "minItems", "minProperties") and _num(cur) and _num(v):
            out[k] = max(cur, v)
        elif k in ("maximum", "maxLength", "maxItems", "maxProperties") and _num(cur) and _num(v):
            out[k] = min(cur, v)
        else:
            return fallback
    return out


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


# --------------------------------------------------------------------------- sides and context

class Side:
    """One schema document: its normalised root, refs resolved inside it, a validator for values."""

    def __init__(self, schema, label: str):
        self.label = label
        self.raw = schema
        self.root = normalize(schema)
        if not isinstance(self.root, dict):
            raise ValueError(f"the {label} schema must be a JSON object or a boolean, not {type(schema).__name__}")
        root_for_validation = {k: v for k, v in self.root.items() if k != "$schema"}
        self._validator = Draft202012Validator(root_for_validation, format_checker=Draft202012Validator.FORMAT_CHECKER)
        self._anchors: dict[str, dict] | None = None

    def resolve(self, ref: str) -> dict | None:
        if not isinstance(ref, str) or not ref.startswith("#"):
            base = self.root.get("$id")
            if isinstance(base, str) and isinstance(ref, str) and ref.startswith(base):
                ref = ref[len(base):] or "#"
                if not ref.startswith("#"):
                    return None
            else:
                return None
        fragment = unquote(ref[1:])
        if fragment == "":
            return self.root
        if not fragment.startswith("/"):
            return self._anchor(fragment)
        node = self.root
        for part in fragment[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node if isinstance(node, dict) else None

    def _anchor(self, name: str) -> dict | None:
        if self._anchors is None:
            self._anchors = {}
            stack = [self.root]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if isinstance(node.get("$anchor"), str):
                        self._anchors.setdefault(node["$anchor"], node)
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
        return self._anchors.get(name)

    def valid_or_none(self, value, schema: dict) -> bool | None:
        """Is `value` valid under `schema` (a part of this document)? None when the validator cannot say."""
        try:
            return self._validator.evolve(schema=schema).is_valid(value)
        except Exception:
            return None


class Ctx:
    """Which document each side of a comparison lives in, plus state shared by the whole walk.

    Reference pairs are decided as a greatest fixed point: every pair of references met
    starts out assumed compatible; each pair is then compared once with the pairs it meets
    inside read from the table (never expanded), and the table only ever moves towards
    "breaking"; the rounds repeat until nothing moves. That is the coinductive argument
    (documents are finite, so a recursive pair may be assumed while it is proved) without
    the exponential cost of expanding every path through mutually recursive definitions.
    """

    def __init__(self, left: Side, right: Side, shared: dict | None = None):
        self.left, self.right = left, right
        self.shared = shared if shared is not None else {
            "pairs": {},      # guard -> RefPair
            "memo": {},       # proven containments; cleared whenever a pair moves
            "final": False,   # the reporting walk: expand each differing pair once, in place
            "reported": {},   # guard -> path where the final walk reported it
            "proving": 0,     # depth of containment proofs (their wording is never shown)
        }

    @property
    def memo(self) -> dict:
        return self.shared["memo"]

    def swapped(self) -> Ctx:
        return Ctx(self.right, self.left, self.shared)


class RefPair:
    __slots__ = ("o", "n", "cx", "bb", "bf")

    def __init__(self, o: dict, n: dict, cx: Ctx):
        self.o, self.n, self.cx = o, n, cx
        self.bb = self.bf = False


def _resolve_refs(s: dict, side: Side) -> tuple[dict | None, str | None]:
    """Replace a $ref by the conjunction of its target and its siblings; follow chains."""
    seen = set()
    while isinstance(s, dict) and "$ref" in s:
        ref = s["$ref"]
        if ref in seen:
            return None, f"`$ref` {ref!r} refers to itself without describing any value"
        seen.add(ref)
        target = side.resolve(ref)
        if target is None:
            return None, f"`$ref` {ref!r} cannot be resolved inside the document (only local references are followed)"
        siblings = {k: v for k, v in s.items() if k != "$ref"}
        s = merge(target, siblings) if siblings else target
        if "allOf" in s and "$ref" not in s:
            break
    return s, None


# --------------------------------------------------------------------------- the walk

def compare(old, new) -> list[Change]:
    """Every difference between two JSON Schemas, each with the directions it may break."""
    left, right = Side(old, "old"), Side(new, "new")
    cx = Ctx(left, right)
    pairs = cx.shared["pairs"]
    while True:
        count = len(pairs)
        _diff(left.root, right.root, "", cx)  # meets the reference pairs reachable from the roots
        if len(pairs) == count:
            break
        moved = True
        while moved:
            count = len(pairs)
            moved = False
            for pair in list(pairs.values()):  # pairs met during a round join the next one
                found = _expand(pair)
                bb = pair.bb or any(c.breaks_backward for c in found)
                bf = pair.bf or any(c.breaks_forward for c in found)
                if (bb, bf) != (pair.bb, pair.bf):
                    pair.bb, pair.bf = bb, bf
                    cx.memo.clear()
                    moved = True
            moved = moved or len(pairs) != count
    cx.shared["final"] = True
    return _diff(left.root, right.root, "", cx)


def _expand(pair: RefPair, path: str = "") -> list[Change]:
    """Compare the two schemas a reference pair names (pairs met inside are read, not expanded)."""
    cx = pair.cx
    ro, err_o = _resolve_refs(pair.o, cx.left) if "$ref" in pair.o else (pair.o, None)
    rn, err_n = _resolve_refs(pair.n, cx.right) if "$ref" in pair.n else (pair.n, None)
    if err_o or err_n:
        return [Change(_ptr(path, "$ref"), "unresolvable_ref", True, True, (err_o or err_n) + "; treated as breaking both ways")]
    return _diff_resolved(ro, rn, path, cx)


def _sub(a: dict, b: dict, cx: Ctx) -> bool:
    """True only when every document valid under `a` (left side) is valid under `b` (right side)."""
    key = (id(cx.left), id(cx.right), _key(a), _key(b))
    if key in cx.memo:
        return cx.memo[key]
    cx.shared["proving"] += 1
    try:
        result = not any(c.breaks_backward for c in _diff(a, b, "", cx))
    finally:
        cx.shared["proving"] -= 1
    cx.memo[key] = result
    return result


def _diff(o, n, path: str, cx: Ctx) -> list[Change]:
    if not isinstance(o, dict) or not isinstance(n, dict):
        if _key(o) == _key(n):
            return []
        return [Change(path, "invalid_schema", True, True, "a schema here is neither an object nor a boolean, so the checker cannot compare it")]
    ko, kn = _key(o), _key(n)
    if ko == kn and _refless(ko):
        return []
    if "$ref" in o or "$ref" in n:
        guard = (id(cx.left), id(cx.right), ko, kn)
        pairs = cx.shared["pairs"]
        pair = pairs.get(guard)
        if pair is None:
            pair = pairs[guard] = RefPair(o, n, cx)
            for side, node in ((cx.left, o), (cx.right, n)):
                if "$ref" in node and _resolve_refs(node, side)[1]:
                    if ko == kn:
                        return []  # the same unresolvable reference on both sides
                    pair.bb = pair.bf = True
        if cx.shared["final"] and not cx.shared["proving"]:
            reported = cx.shared["reported"]
            if guard not in reported and (pair.bb or pair.bf):
                reported[guard] = path
                return _expand(pair, path)
            if guard in reported:
                return [Change(path, "reference_changed", pair.bb, pair.bf,
                               f"the referenced schemas differ as reported at {reported[guard] or '/'}")]
        if not (pair.bb or pair.bf):
            return []
        return [Change(path, "reference_changed", pair.bb, pair.bf, "the schemas the references name differ")]
    return _diff_resolved(o, n, path, cx)


def _diff_resolved(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    o, n = flatten(o), flatten(n)
    if "$ref" in o or "$ref" in n:  # a flattened allOf branch brought a $ref up
        return _diff(o, n, path, cx)

    if is_false(o) and is_false(n):
        return []
    if is_false(o):
        return [Change(path, "schema_opened", False, True, "nothing was valid here before; the new version accepts values the old one refuses")]
    if is_false(n):
        if not atoms(o):
            return []
        return [Change(path, "schema_closed", True, False, "the new version accepts nothing here, so any value the old one allowed now fails")]

    for kw in UNSUPPORTED_WHEN_PRESENT:
        if kw in o or kw in n:
            return [Change(_ptr(path, kw), "unsupported_keyword", True, True,
                           f"`{kw}` depends on every other keyword of the schema and the checker does not reason about it, so any change here is treated as breaking both ways")]

    ao, an = atoms(o), atoms(n)
    changes: list[Change] = []
    changes += _type_changes(o, n, path, ao, an)
    changes += _enum_changes(o, n, path, cx)
    changes += _gate(_numeric_changes(o, n, path, ao, an), NUMERIC, ao, an)
    changes += _gate(_string_changes(o, n, path), {"string"}, ao, an)
    changes += _gate(_object_changes(o, n, path, cx), {"object"}, ao, an)
    changes += _gate(_array_changes(o, n, path, cx), {"array"}, ao, an)
    changes += _other_keyword_changes(o, n, path)
    changes = _implied_by_conjunct(o, n, cx, changes)
    changes = _implied_by_alternatives(o, n, cx, changes)
    changes += _combinator_changes(o, n, path, cx)
    return _exact_override(o, n, path, cx, changes)


_COMBINATORS = ("allOf", "anyOf", "oneOf", "not", *_GROUP_KEYS)


def _implied_by_alternatives(o: dict, n: dict, cx: Ctx, changes: list[Change]) -> list[Change]:
    """When every alternative (anyOf/oneOf branch) of the old side implies the new side's own
    keywords, those keyword changes cannot break backward; the mirror image for forward."""
    if not changes:
        return changes
    bb_ok = bf_ok = False
    if any(c.breaks_backward for c in changes) and ("anyOf" in o or "oneOf" in o):
        n_base = {k: v for k, v in n.items() if k not in _COMBINATORS}
        bb_ok = all(_sub(u, n_base, cx) for u in _units(o)[0])
    if any(c.breaks_forward for c in changes) and ("anyOf" in n or "oneOf" in n):
        o_base = {k: v for k, v in o.items() if k not in _COMBINATORS}
        bf_ok = all(_sub(u, o_base, cx.swapped()) for u in _units(n)[0])
    if bb_ok or bf_ok:
        return _mask(changes, not bb_ok, not bf_ok)
    return changes


def _implied_by_conjunct(o: dict, n: dict, cx: Ctx, changes: list[Change]) -> list[Change]:
    """When one leftover allOf branch of the old side alone implies the new side's own keywords,
    those keyword changes cannot break backward (and the mirror image for forward)."""
    if not changes:
        return changes
    lo, ln = o.get("allOf") or [], n.get("allOf") or []
    n_base = {k: v for k, v in n.items() if k not in _COMBINATORS}
    o_base = {k: v for k, v in o.items() if k not in _COMBINATORS}
    bb_ok = bool(lo) and any(c.breaks_backward for c in changes) and any(_sub(a, n_base, cx) for a in lo)
    bf_ok = bool(ln) and any(c.breaks_forward for c in changes) and any(_sub(b, o_base, cx.swapped()) for b in ln)
    if bb_ok or bf_ok:
        return _mask(changes, not bb_ok, not bf_ok)
    return changes


def _gate(changes: list[Change], domain, ao: frozenset, an: frozenset) -> list[Change]:
    """Keywords that only constrain one JSON type cannot break a direction whose source excludes it."""
    bb_relevant = bool(ao & frozenset(domain))
    bf_relevant = bool(an & frozenset(domain))
    if bb_relevant and bf_relevant:
        return changes
    return [replace(c, breaks_backward=c.breaks_backward and bb_relevant,
                    breaks_forward=c.breaks_forward and bf_relevant) for c in changes]


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


def _exact_override(o: dict, n: dict, path: str, cx: Ctx, changes: list[Change]) -> list[Change]:
    """Where one side is a finite set of values, decide its direction by validating each value."""
    for direction in ("backward", "forward"):
        src, dst, s_side, d_side = (o, n, cx.left, cx.right) if direction == "backward" else (n, o, cx.right, cx.left)
        values = _finite_values(src)
        if values is None:
            continue
        verdicts = []
        for v in values:
            if s_side.valid_or_none(v, src) is not True:
                continue
            verdicts.append((v, d_side.valid_or_none(v, dst)))
        if any(ok is None for _, ok in verdicts):
            continue  # the validator could not decide: keep the reasoned answer
        failing = [v for v, ok in verdicts if not ok]
        attr = "breaks_" + direction
        if not failing:
            changes = [replace(c, **{attr: False}) for c in changes]
        elif not any(getattr(c, attr) for c in changes):
            which = "old" if direction == "backward" else "new"
            other = "new" if direction == "backward" else "old"
            changes.append(Change(path, "value_rejected", direction == "backward", direction == "forward",
                                  f"the value {json.dumps(failing[0])} is valid under the {which} version and fails the {other} one"))
    return changes


# --------------------------------------------------------------------------- keyword groups

def _describe_atoms(a: Iterable[str]) -> str:
    names = set(a)
    if NUMERIC <= names:
        names -= NUMERIC
        names.add("number")
    elif "fraction" in names:
        names.discard("fraction")
        names.add("non-integer number")
    return ", ".join(sorted(names)) or "nothing"


def _type_changes(o, n, path, ao, an) -> list[Change]:
    to, tn = _declared_atoms(o), _declared_atoms(n)
    if to == tn:
        return []
    lost = ao - tn
    gained = an - to
    bb, bf = bool(lost), bool(gained)
    if lost == {"null"} and not gained:
        kind, reason = "nullability_removed", "null is no longer allowed; documents with null here fail the new version"
    elif gained == {"null"} and not lost:
        kind, reason = "nullability_added", "null is now allowed; readers on the old version reject it"
    elif bb and bf:
        kind, reason = "type_changed", f"the type changed: {_describe_atoms(lost)} no longer allowed, {_describe_atoms(gained)} newly allowed"
    elif bb:
        kind, reason = "type_narrowed", f"the type narrowed: {_describe_atoms(lost)} no longer allowed"
    elif bf:
        kind, reason = "type_widened", f"the type widened: {_describe_atoms(gained)} newly allowed"
    else:
        kind, reason = "type_restated", "the type keyword changed without changing which values are allowed here"
    return [Change(_ptr(path, "type"), kind, bb, bf, reason)]


def _values(s: dict) -> dict | None:
    if "const" in s:
        return {_value_key(s["const"]): s["const"]}
    if isinstance(s.get("enum"), list):
        return {_value_key(v): v for v in s["enum"]}
    return None


def _enum_changes(o, n, path, cx) -> list[Change]:
    vo, vn = _values(o), _values(n)
    if vo is None and vn is None:
        return []
    where = _ptr(path, "const" if "const" in n or ("const" in o and "enum" not in n) else "enum")
    if vo is None:
        return [Change(where, "enum_added", True, False, f"values are now restricted to {_short(list(vn.values()))}; other values the old version allowed fail")]
    if vn is None:
        return [Change(where, "enum_removed", False, True, "the value restriction was removed; readers on the old version reject the new values")]
    out = []
    removed = [vo[k] for k in vo if k not in vn]
    added = [vn[k] for k in vn if k not in vo]
    if removed:
        out.append(Change(where, "enum_value_removed", True, False, f"{_short(removed)} no longer allowed"))
    if added:
        out.append(Change(where, "enum_value_added", False, True, f"{_short(added)} newly allowed; readers on the old version reject them"))
    if not removed and not added and _key(o.get("enum")) != _key(n.get("enum")):
        out.append(Change(where, "enum_restated", False, False, "the same values, written differently"))
    return out


def _short(values: list) -> str:
    text = ", ".join(json.dumps(v) for v in values[:5])
    return text + (f" and {len(values) - 5} more" if len(values) > 5 else "")


def _lower(s: dict):
    out = None
    if _num(s.get("minimum")):
        out = (s["minimum"], False)
    if _num(s.get("exclusiveMinimum")):
        x = s["exclusiveMinimum"]
        if out is None or x >= out[0]:
            out = (x, True)
    return out


def _upper(s: dict):
    out = None
    if _num(s.get("maximum")):
        out = (s["maximum"], False)
    if _num(s.get("exclusiveMaximum")):
        x = s["exclusiveMaximum"]
        if out is None or x <= out[0]:
            out = (x, True)
    return out


def _int_lower(b):
    return None if b is None else (math.floor(b[0]) + 1 if b[1] else math.ceil(b[0]), False)


def _int_upper(b):
    return None if b is None else (math.ceil(b[0]) - 1 if b[1] else math.floor(b[0]), False)


def _tighter_lower(new, old) -> bool:
    """Does the new lower bound refuse a number the old one allows?"""
    if new is None:
        return False
    if old is None:
        return True
    return new[0] > old[0] or (new[0] == old[0] and new[1] and not old[1])


def _tighter_upper(new, old) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    return new[0] < old[0] or (new[0] == old[0] and new[1] and not old[1])


def _bound_text(b, lower: bool) -> str:
    if b is None:
        return "none"
    sign = (">" if b[1] else "≥") if lower else ("<" if b[1] else "≤")
    return f"{sign} {b[0]}"


def _numeric_changes(o, n, path, ao, an) -> list[Change]:
    out = []
    only_int_o = (ao & NUMERIC) == {"integer"}
    only_int_n = (an & NUMERIC) == {"integer"}
    for lower in (True, False):
        get = _lower if lower else _upper
        bo, bn = get(o), get(n)
        if bo == bn:
            continue
        tighter = _tighter_lower if lower else _tighter_upper
        conv = _int_lower if lower else _int_upper
        bb = tighter(conv(bn), conv(bo)) if only_int_o else tighter(bn, bo)
        bf = tighter(conv(bo), conv(bn)) if only_int_n else tighter(bo, bn)
        name = "minimum" if lower else "maximum"
        keyword = ("exclusiveMinimum" if lower else "exclusiveMaximum") if (bn or bo)[1] else name
        if bo is None:
            kind = f"{name}_added"
        elif bn is None:
            kind = f"{name}_removed"
        elif bb and not bf:
            kind = f"{name}_tightened"
        elif bf and not bb:
            kind = f"{name}_relaxed"
        else:
            kind = f"{name}_restated"
        reason = f"the {'lower' if lower else 'upper'} bound changed from {_bound_text(bo, lower)} to {_bound_text(bn, lower)}"
        out.append(Change(_ptr(path, keyword), kind, bb, bf, reason))
    mo, mn = o.get("multipleOf"), n.get("multipleOf")
    if _key(mo) != _key(mn):
        bb = mn is not None and not (_divides(mn, mo) or (only_int_o and _is_int(mn) and int(mn) == 1))
        bf = mo is not None and not (_divides(mo, mn) or (only_int_n and _is_int(mo) and int(mo) == 1))
        kind = "multiple_of_added" if mo is None else "multiple_of_removed" if mn is None else "multiple_of_changed"
        reason = f"multipleOf changed from {mo} to {mn}"
        if bb:
            reason += "; a multiple of the old divisor need not be a multiple of the new one"
        if (mo is not None and not _is_int(mo)) or (mn is not None and not _is_int(mn)):
            reason += " (divisibility is only proved for integer divisors: validators divide non-integers in floating point)"
        out.append(Change(_ptr(path, "multipleOf"), kind, bb, bf, reason))
    return out


def _is_int(x) -> bool:
    return _num(x) and float(x).is_integer()


def _divides(divisor, value) -> bool:
    """Is every multiple of `value` a multiple of `divisor`? (value None: any number.)"""
    if value is None or divisor is None:
        return divisor is None
    if _is_int(divisor) and _is_int(value):
        return int(value) % int(divisor) == 0
    return _key(divisor) == _key(value)


def _int_bound_changes(o, n, path, lo_key, hi_key, noun) -> list[Change]:
    out = []
    for key, lower in ((lo_key, True), (hi_key, False)):
        vo, vn = o.get(key), n.get(key)
        if _key(vo) == _key(vn):
            continue
        if lower:
            vo_, vn_ = (vo or 0), (vn or 0)
            bb, bf = vn_ > vo_, vo_ > vn_
        else:
            inf = float("inf")
            vo_, vn_ = (inf if vo is None else vo), (inf if vn is None else vn)
            bb, bf = vn_ < vo_, vo_ < vn_
        kind = f"{key_to_snake(key)}_{'tightened' if bb else 'relaxed' if bf else 'restated'}"
        out.append(Change(_ptr(path, key), kind, bb, bf, f"{noun} {'at least' if lower else 'at most'}: {vo} → {vn}"))
    return out


def key_to_snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _string_changes(o, n, path) -> list[Change]:
    out = _int_bound_changes(o, n, path, "minLength", "maxLength", "string length")
    po, pn = o.get("pattern"), n.get("pattern")
    if po != pn:
        if po is None:
            out.append(Change(_ptr(path, "pattern"), "pattern_added", True, False, f"strings must now match {pn!r}"))
        elif pn is None:
            out.append(Change(_ptr(path, "pattern"), "pattern_removed", False, True, f"strings no longer need to match {po!r}; readers on the old version reject the others"))
        else:
            out.append(Change(_ptr(path, "pattern"), "pattern_changed", True, True,
                              f"the pattern changed from {po!r} to {pn!r}; two different regular expressions are not provably equal, so this is treated as breaking both ways"))
    fo, fn = o.get("format"), n.get("format")
    if fo != fn:
        if fo is None:
            out.append(Change(_ptr(path, "format"), "format_added", True, False, f"strings must now be a valid {fn}"))
        elif fn is None:
            out.append(Change(_ptr(path, "format"), "format_removed", False, True, f"strings no longer need to be a valid {fo}"))
        else:
            out.append(Change(_ptr(path, "format"), "format_changed", True, True, f"the format changed from {fo} to {fn}"))
    return out


def _effective(s: dict, name: str) -> dict:
    """The schema a property value must match: its `properties` entry and matching patterns, else additionalProperties."""
    parts = []
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    if name in props:
        parts.append(props[name])
    for pattern, sub in (s.get("patternProperties") or {}).items():
        try:
            if re.search(pattern, name):
                parts.append(sub)
        except re.error:
            return {"$unmatchable-pattern": pattern}
    if not parts:
        return s.get("additionalProperties", {})
    out = parts[0]
    for p in parts[1:]:
        out = merge(out, p)
    return out


def _governed_by(s: dict, name: str) -> str:
    for pattern in s.get("patternProperties") or {}:
        try:
            if re.search(pattern, name):
                return f"patternProperties {pattern!r}"
        except re.error:
            pass
    ap = s.get("additionalProperties", {})
    if is_false(ap):
        return "additionalProperties: false (it was refused)"
    return "additionalProperties"


def _mask(changes: list[Change], bb: bool, bf: bool) -> list[Change]:
    return [replace(c, breaks_backward=c.breaks_backward and bb, breaks_forward=c.breaks_forward and bf) for c in changes]


def _summary(path, kind, nested: list[Change], base_reason: str) -> Change:
    bb = any(c.breaks_backward for c in nested)
    bf = any(c.breaks_forward for c in nested)
    detail = "; ".join(c.reason for c in nested if c.breaks_backward or c.breaks_forward)[:300]
    return Change(path, kind, bb, bf, base_reason + (f" ({detail})" if detail else ""))


def _object_changes(o, n, path, cx) -> list[Change]:
    out: list[Change] = []
    ro = o.get("required") or []
    rn = n.get("required") or []
    for name in rn:
        if name not in ro:
            out.append(Change(_ptr(path, "required"), "required_added", True, False, f"{name!r} is now required; documents without it fail"))
    for name in ro:
        if name not in rn:
            out.append(Change(_ptr(path, "required"), "required_removed", False, True, f"{name!r} is no longer required; readers on the old version reject documents without it"))

    po = o.get("properties") if isinstance(o.get("properties"), dict) else {}
    pn = n.get("properties") if isinstance(n.get("properties"), dict) else {}
    pat_o = o.get("patternProperties") or {}
    pat_n = n.get("patternProperties") or {}
    ap_o = o.get("additionalProperties", {})
    ap_n = n.get("additionalProperties", {})
    for name in list(dict.fromkeys([*po, *pn])):
        eo, en = _effective(o, name), _effective(n, name)
        where = _ptr(path, "properties", name)
        if "$unmatchable-pattern" in eo or "$unmatchable-pattern" in en:
            out.append(Change(where, "unsupported_keyword", True, True, "a patternProperties regular expression cannot be evaluated"))
            continue
        nested = _diff(eo, en, where, cx)
        if name in po and name in pn:
            out += nested
        elif name in pn:
            out.append(_summary(where, "property_added", nested,
                                f"property {name!r} added; before, it fell under {_governed_by(o, name)}"))
        else:
            out.append(_summary(where, "property_removed", nested,
                                f"property {name!r} removed; it now falls under {_governed_by(n, name)}"))
    for pattern in dict.fromkeys([*pat_o, *pat_n]):
        where = _ptr(path, "patternProperties", pattern)
        if pattern in pat_o and pattern in pat_n:
            out += _diff(pat_o[pattern], pat_n[pattern], where, cx)
            continue
        if pattern in pat_n:
            others = [ap_o, *pat_o.values()]
            bb = not all(_sub(x, pat_n[pattern], cx) for x in others)
            bf = not all(_sub(pat_n[pattern], x, cx.swapped()) for x in others)
            out.append(Change(where, "pattern_properties_added", bb, bf, f"names matching {pattern!r} are now governed by their own schema"))
        else:
            others = [ap_n, *pat_n.values()]
            bb = not all(_sub(pat_o[pattern], x, cx) for x in others)
            bf = not all(_sub(x, pat_o[pattern], cx.swapped()) for x in others)
            out.append(Change(where, "pattern_properties_removed", bb, bf, f"names matching {pattern!r} now fall under the remaining rules"))
    nested = _diff(ap_o, ap_n, _ptr(path, "additionalProperties"), cx)
    if nested:
        where = _ptr(path, "additionalProperties")
        if is_false(ap_n) and not is_false(ap_o):
            out.append(_summary(where, "additional_properties_closed", nested, "the content model is now closed: properties not declared fail"))
        elif is_false(ap_o) and not is_false(ap_n):
            out.append(_summary(where, "additional_properties_opened", nested, "the content model is now open: undeclared properties are accepted, and readers on the old version reject them"))
        else:
            out += nested
    out += _int_bound_changes(o, n, path, "minProperties", "maxProperties", "number of properties")
    dro, drn = o.get("dependentRequired") or {}, n.get("dependentRequired") or {}
    for name in dict.fromkeys([*dro, *drn]):
        so, sn = dro.get(name, []), drn.get(name, [])
        added = [x for x in sn if x not in so]
        removed = [x for x in so if x not in sn]
        where = _ptr(path, "dependentRequired", name)
        if added:
            out.append(Change(where, "dependent_required_added", True, False, f"when {name!r} is present, {_short(added)} must now be present too"))
        if removed:
            out.append(Change(where, "dependent_required_removed", False, True, f"when {name!r} is present, {_short(removed)} no longer need be"))
    dso, dsn = o.get("dependentSchemas") or {}, n.get("dependentSchemas") or {}
    for name in dict.fromkeys([*dso, *dsn]):
        where = _ptr(path, "dependentSchemas", name)
        if name in dso and name in dsn:
            out += _diff(dso[name], dsn[name], where, cx)
        elif name in dsn:
            out.append(Change(where, "dependent_schema_added", not _sub(o, dsn[name], cx), False, f"when {name!r} is present, the object must now also match a further schema"))
        else:
            out.append(Change(where, "dependent_schema_removed", False, not _sub(n, dso[name], cx.swapped()), f"when {name!r} is present, a further schema no longer applies"))
    if "propertyNames" in o or "propertyNames" in n:
        out += _diff(o.get("propertyNames", {}), n.get("propertyNames", {}), _ptr(path, "propertyNames"), cx)
    return out


def _array_changes(o, n, path, cx) -> list[Change]:
    out: list[Change] = []
    pre_o = o.get("prefixItems") or []
    pre_n = n.get("prefixItems") or []
    it_o, it_n = o.get("items", {}), n.get("items", {})
    for k in range(max(len(pre_o), len(pre_n))):
        eo = pre_o[k] if k < len(pre_o) else it_o
        en = pre_n[k] if k < len(pre_n) else it_n
        where = _ptr(path, "prefixItems", k) if k < len(pre_n) or k < len(pre_o) else _ptr(path, "items")
        nested = _diff(eo, en, where, cx)
        if k < len(pre_o) and k < len(pre_n):
            out += nested
        elif nested:
            out.append(_summary(where, "prefix_item_added" if k < len(pre_n) else "prefix_item_removed", nested,
                                f"position {k} is now governed by {'its own schema' if k < len(pre_n) else 'items'}"))
    nested = _diff(it_o, it_n, _ptr(path, "items"), cx)
    if nested and is_false(it_n) and not is_false(it_o):
        out.append(_summary(_ptr(path, "items"), "items_closed", nested, "no items beyond the listed positions are accepted any more"))
    elif nested and is_false(it_o) and not is_false(it_n):
        out.append(_summary(_ptr(path, "items"), "items_opened", nested, "items beyond the listed positions are now accepted"))
    else:
        out += nested
    out += _int_bound_changes(o, n, path, "minItems", "maxItems", "number of items")
    uo, un = bool(o.get("uniqueItems")), bool(n.get("uniqueItems"))
    if uo != un:
        out.append(Change(_ptr(path, "uniqueItems"), "unique_items_added" if un else "unique_items_removed", un, uo,
                          "items must now be unique" if un else "items no longer need be unique"))
    co, cn = o.get("contains"), n.get("contains")
    if co is not None or cn is not None:
        where = _ptr(path, "contains")
        if co is not None and cn is not None:
            if _key(co) != _key(cn) or not _refless(_key(co)):
                bb = not _sub(co, cn, cx)
                bf = not _sub(cn, co, cx.swapped())
                if bb or bf:
                    out.append(Change(where, "contains_changed", bb, bf, "the schema some item must match changed"))
        elif cn is not None:
            out.append(Change(where, "contains_added", True, False, "some item must now match a schema"))
        else:
            out.append(Change(where, "contains_removed", False, True, "no item needs to match a schema any more"))
    for kw in ("minContains", "maxContains"):
        if _key(o.get(kw)) != _key(n.get(kw)):
            out.append(Change(_ptr(path, kw), "unsupported_keyword", True, True, f"`{kw}` changed; the checker does not reason about it, so it is treated as breaking both ways"))
    return out


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


def _combinator_changes(o, n, path, cx) -> list[Change]:
    out: list[Change] = []
    # allOf leftovers (the mergeable branches were folded in by flatten)
    lo, ln = o.get("allOf") or [], n.get("allOf") or []
    if lo or ln:
        base_o = {k: v for k, v in o.items() if k != "allOf"}
        base_n = {k: v for k, v in n.items() if k != "allOf"}
        for j, b in enumerate(ln):
            if not any(_sub(a, b, cx) for a in [*lo, base_o]):
                out.append(Change(_ptr(path, "allOf", j), "all_of_constraint_tightened", True, False,
                                  f"allOf branch {j} of the new version is not implied by the old version"))
        for i, a in enumerate(lo):
            if not any(_sub(b, a, cx.swapped()) for b in [*ln, base_n]):
                out.append(Change(_ptr(path, "allOf", i), "all_of_constraint_relaxed", False, True,
                                  f"allOf branch {i} of the old version is not implied by the new version"))
    for key in ("anyOf", "oneOf"):
        bo, bn = o.get(key), n.get(key)
        if bo is None and bn is None:
            continue
        if _key(bo) == _key(bn) and _refless(_key(bo)):
            continue
        out += _branch_changes(o, n, key, path, cx)
    out += _not_changes(o, n, path, cx)
    out += _conditional_changes(o, n, path, cx)
    return out


def _branch_changes(o, n, key, path, cx) -> list[Change]:
    out = []
    exclusive = key == "oneOf"
    bo, bn = o.get(key), n.get(key)
    if bn is not None:  # backward: every old alternative must land in the new ones
        units, source_key = _units(o)
        for i, u in enumerate(units):
            if not _lands(u, bn, exclusive, cx):
                where = _ptr(path, key, min(i, len(bn) - 1)) if bo is not None else _ptr(path, key)
                what = f"old {source_key} branch {i}" if source_key else "the old schema"
                how = "exactly one branch" if exclusive else "any branch"
                detail = _branch_detail(bo, bn, i, path, key, cx, backward=True)
                out.append(Change(where, f"{key_to_snake(key)}_branch_narrowed" if bo is not None else f"{key_to_snake(key)}_added", True, False,
                                  f"{what} is not accepted by {how} of the new {key}" + detail))
    if bo is not None:  # forward: every new alternative must land in the old ones
        units, source_key = _units(n)
        for j, u in enumerate(units):
            if not _lands(u, bo, exclusive, cx.swapped()):
                where = _ptr(path, key, min(j, len(bn) - 1)) if bn is not None else _ptr(path, key)
                what = f"new {source_key} branch {j}" if source_key else "the new schema"
                how = "exactly one branch" if exclusive else "any branch"
                detail = _branch_detail(bn, bo, j, path, key, cx.swapped(), backward=False)
                out.append(Change(where, f"{key_to_snake(key)}_branch_widened" if bn is not None else f"{key_to_snake(key)}_removed", False, True,
                                  f"{what} is not accepted by {how} of the old {key}" + detail))
    if not out and _key(bo) != _key(bn):
        out.append(Change(_ptr(path, key), f"{key_to_snake(key)}_restated", False, False, f"the {key} branches changed without changing which documents are valid"))
    return out


def _branch_detail(src, dst, i, path, key, cx, backward: bool) -> str:
    if cx.shared["proving"]:
        return ""  # inside a containment proof nobody reads the wording: skip the extra walk
    if not isinstance(src, list) or not isinstance(dst, list) or i >= len(src) or i >= len(dst):
        return ""
    a, b = (src[i], dst[i])
    nested = _diff(a, b, "", cx)
    reasons = [c.reason for c in nested if c.breaks_backward]
    return f" (against branch {i}: {reasons[0]})" if reasons else ""


def _lands(unit: dict, branches: list, exclusive: bool, cx: Ctx) -> bool:
    for j, b in enumerate(branches):
        if not _sub(unit, b, cx):
            continue
        if not exclusive:
            return True
        if all(_disjoint(unit, other, cx) for k, other in enumerate(branches) if k != j):
            return True
    return False


def _disjoint(a: dict, b: dict, cx: Ctx, depth: int = 0) -> bool:
    """True only when no document is valid under both (a on the left side, b on the right)."""
    if depth > 8:
        return False
    if "$ref" in a:
        a, err = _resolve_refs(a, cx.left)
        if err:
            return False
    if "$ref" in b:
        b, err = _resolve_refs(b, cx.right)
        if err:
            return False
    a, b = flatten(a), flatten(b)
    if is_false(a) or is_false(b):
        return True
    shared = atoms(a) & atoms(b)
    if not shared:
        return True
    for s, other, s_side, o_side in ((a, b, cx.left, cx.right), (b, a, cx.right, cx.left)):
        values = _finite_values(s)
        if values is not None:
            decided = []
            for v in values:
                if s_side.valid_or_none(v, s) is not True:
                    continue
                decided.append(o_side.valid_or_none(v, other))
            if all(ok is False for ok in decided):
                return True
    if shared <= {"object"}:
        req_a = set(a.get("required") or [])
        req_b = set(b.get("required") or [])
        for name in req_a | req_b:
            ea, eb = _effective(a, name), _effective(b, name)
            if name in req_a and name in req_b and _disjoint(ea, eb, cx, depth + 1):
                return True
            if name in req_a and is_false(eb) or name in req_b and is_false(ea):
                return True
    if shared <= NUMERIC:
        la, ua, lb, ub = _lower(a), _upper(a), _lower(b), _upper(b)
        if _below(ua, lb) or _below(ub, la):
            return True
    return False


def _below(upper, lower) -> bool:
    if upper is None or lower is None:
        return False
    return upper[0] < lower[0] or (upper[0] == lower[0] and (upper[1] or lower[1]))


def _not_changes(o, n, path, cx) -> list[Change]:
    no, nn = o.get("not"), n.get("not")
    if no is None and nn is None:
        return []
    where = _ptr(path, "not")
    if no is not None and nn is not None:
        if _key(no) == _key(nn) and _refless(_key(no)):
            return []
        bb = not _sub(nn, no, cx.swapped())
        bf = not _sub(no, nn, cx)
        if not bb and not bf:
            return []
        return [Change(where, "not_changed", bb, bf, "the schema documents must not match changed" + (
            "; documents the old version allowed can match the new excluded schema" if bb else ""))]
    if nn is not None:
        rest = {k: v for k, v in o.items() if k != "not"}
        bb = not _disjoint(rest, nn, cx)
        return [Change(where, "not_added", bb, False, "documents matching a further schema are now refused")]
    rest = {k: v for k, v in n.items() if k != "not"}
    bf = not _disjoint(rest, no, cx.swapped())
    return [Change(where, "not_removed", False, bf, "documents matching the formerly excluded schema are now accepted")]


def _conditional_changes(o, n, path, cx) -> list[Change]:
    if not any(k in o or k in n for k in _GROUP_KEYS):
        return []
    io, in_ = o.get("if"), n.get("if")
    then_o, then_n = o.get("then", {}), n.get("then", {})
    else_o, else_n = o.get("else", {}), n.get("else", {})
    if io is not None and in_ is not None and _key(io) == _key(in_) and _refless(_key(io)):
        return _diff(then_o, then_n, _ptr(path, "then"), cx) + _diff(else_o, else_n, _ptr(path, "else"), cx)
    out = []
    if in_ is not None:
        rest_o = {k: v for k, v in o.items() if k not in _GROUP_KEYS}
        bb = not (_sub(rest_o, then_n, cx) and _sub(rest_o, else_n, cx))
        if io is not None:
            bb = True
        out.append(Change(_ptr(path, "if"), "conditional_added" if io is None else "conditional_changed", bb, io is not None,
                          "an if/then/else condition was " + ("added" if io is None else "changed; differing conditions are treated as breaking both ways")))
        return out
    if io is not None:
        rest_n = {k: v for k, v in n.items() if k not in _GROUP_KEYS}
        bf = not (_sub(rest_n, then_o, cx.swapped()) and _sub(rest_n, else_o, cx.swapped()))
        out.append(Change(_ptr(path, "if"), "conditional_removed", False, bf, "an if/then/else condition was removed"))
    return out


def _other_keyword_changes(o, n, path) -> list[Change]:
    out = []
    for k in dict.fromkeys([*o, *n]):
        if k in HANDLED and k not in ANNOTATIONS:
            continue
        if k in DEFINITIONS:
            continue
        if _key(o.get(k)) == _key(n.get(k)):
            continue
        if k in ANNOTATIONS or k.startswith("x-"):
            out.append(Change(_ptr(path, k), "annotation_changed", False, False, f"`{k}` is an annotation; it never changes which documents are valid"))
        else:
            out.append(Change(_ptr(path, k), "unsupported_keyword", True, True,
                              f"`{k}` differs; the checker does not reason about it, so it is treated as breaking both ways"))
    return out
