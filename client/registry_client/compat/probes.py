"""Probe documents for a pair of schemas: the generator behind witnesses and the test oracle.

A witness is a document valid under one version and invalid under the other. The probes are
built from the two schemas themselves (no random draws, so the same pair always yields the
same probes in the same order):

1. every constant in either schema, each numeric bound and its neighbours, strings, arrays and
   objects just inside and outside each length or count, and a fixed pool of common values;
2. documents built from each schema's structure (its required properties, or every declared
   one; tuple positions; a value inside its bounds), and one-key objects naming each property
   either schema mentions;
3. single-step mutations of given seeds, of the built documents and of the pool's containers: a value replaced, a key
   dropped or added, an item appended or dropped.

Every probe proves something only once a real validator has judged it under both versions.

Generation is lazy and bounded: documents come one at a time, each built document holds at
most MAX_NODES nodes, and with a `meter` (budget.Meter) every node built or copied is a step,
spent before the work is done; when the meter runs out, `budget.OutOfSteps` is raised from the
generator, so nothing is built past the budget and a budget of 0 builds nothing.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterable, Iterator

from .budget import Meter, OutOfSteps
from .engine.resources import follow_pointer

MAX_NODES = 2_000  # nodes in one built document: a wide $ref graph would otherwise build millions

BASE_VALUES = [
    None, True, False, 0, 1, 1.0, -1, 2, 3, 4, 5, 6, 7, 10, 11, 15, 50, 100, 2000, -5, 0.5, 1.5, 2.5, -0.5,
    "", "a", "b", "c", "x", "z", "A", "A1", "a1", "ab", "abc", "abcd", "abcde", "abcdefg", "123",
    "2024-01-31", "2024-01-31T10:00:00Z", "yesterday", "user@example.com", "https://example.com/a",
    [], [1], [1, 1], ["a"], ["a", 1], ["a", "b"], ["a", "a"], [1.5], {}, {"a": 1},
]
NAMES = ["a", "b", "c", "v", "x1", "x2", "x_1", "v_1", "z", "A", "abcd", "anything", "kind", "t", "value", "children", "next", "id", "ref"]


def _spend(meter: Meter | None, n: int = 1) -> None:
    if meter is not None and not meter.spend(n):
        raise OutOfSteps


def size_of(doc) -> int:
    """The number of nodes (containers and scalars) in a document."""
    count, stack = 0, [doc]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def walk_constants(node, out: list, names: set) -> None:
    """Collect the values a schema names (constants, bounds and their neighbours) and its property names."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("const",):
                out.append(v)
            elif k == "enum" and isinstance(v, list):
                out.extend(v)
            elif k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") and isinstance(v, int | float) and not isinstance(v, bool):
                out.extend([v, v - 1, v + 1, v - 0.5, v + 0.5, float(v)])
                if isinstance(v, float) and not v.is_integer():
                    out.extend([math.floor(v), math.ceil(v)])
            elif k == "multipleOf" and isinstance(v, int | float) and not isinstance(v, bool):
                out.extend([v, 2 * v, 3 * v, v / 2, v + 1])
            elif k in ("minLength", "maxLength") and isinstance(v, int):
                out.extend(["a" * max(0, v + d) for d in (-1, 0, 1)])
                names.update("n" * max(1, v + d) for d in (-1, 1))  # property names around a propertyNames length
            elif k in ("minItems", "maxItems") and isinstance(v, int):
                out.extend([[1] * max(0, v + d) for d in (-1, 0, 1)])
                out.extend([["a"] * max(0, v + d) for d in (-1, 0, 1)])
            elif k in ("minProperties", "maxProperties") and isinstance(v, int):
                out.extend([{f"k{i}": 1 for i in range(max(0, v + d))} for d in (-1, 0, 1)])
            elif k in ("properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies") and isinstance(v, dict):
                names.update(v)
            elif k == "required" and isinstance(v, list):
                names.update(x for x in v if isinstance(x, str))
            if isinstance(v, dict | list) and k not in ("enum", "const"):
                walk_constants(v, out, names)
    elif isinstance(node, list):
        for v in node:
            walk_constants(v, out, names)


def dedupe(values: Iterable) -> list:
    seen, out = set(), []
    for v in values:
        key = json.dumps(v, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _paths(doc, prefix=()):
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value):
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def mutations(doc, pool: list, names: list, limit: int, meter: Meter | None = None) -> Iterator:
    """Single-step variations of a document, one at a time; each costs the document's size
    in steps of `meter` (it is a copy), spent before it is made."""
    size = size_of(doc)
    _spend(meter, size)  # the walk over its places
    for path, value in list(_paths(doc)):
        if len(path) > 6:
            continue
        for v in pool:
            _spend(meter, size)
            yield _set(doc, path, v)
        if isinstance(value, dict):
            for k in value:
                _spend(meter, size)
                yield _set(doc, path, {kk: vv for kk, vv in value.items() if kk != k})
            for name in names:
                for v in pool[: max(6, limit // 4)]:
                    _spend(meter, size)
                    yield _set(doc, path, {**value, name: v})
                _spend(meter, 2 * size)
                yield _set(doc, path, {**value, name: copy.deepcopy(doc) if len(path) == 0 and isinstance(doc, dict) else {}})
        if isinstance(value, list):
            for v in pool:
                _spend(meter, size)
                yield _set(doc, path, [*value, v])
            if value:
                for variant in ([*value, value[0]], value[:-1], value[1:]):
                    _spend(meter, size)
                    yield _set(doc, path, variant)


def pool_and_names(old, new, pool_limit: int = 60, meter: Meter | None = None) -> tuple[list, list]:
    _spend(meter, size_of(old) + size_of(new))  # one walk over both schemas
    constants: list = []
    names: set = set(NAMES)
    walk_constants([old, new], constants, names)
    return dedupe(constants + BASE_VALUES)[:pool_limit], sorted(names)[:40]


_END = object()


def _key(doc) -> str:
    return json.dumps(doc, sort_keys=True, default=str)


def probe_documents(old, new, seeds: Iterable = (), pool_limit: int = 60, meter: Meter | None = None) -> Iterator:
    """The probes for a pair, in a fixed order: `seeds` first, then targeted values, then mutations.
    Lazy: each document is built when asked for (see the module's note on `meter`)."""
    given: list = []
    seen: set = set()
    for seed in itertools.chain(seeds, _built_seeds(old, new, meter=meter)):
        key = _key(seed)
        if key not in seen:
            seen.add(key)
            given.append(seed)
            yield seed
    seen.clear()
    pool, name_list = pool_and_names(old, new, pool_limit, meter)
    yield from pool
    for name in name_list:
        for v in pool[:12]:
            yield {name: v}
    # Round robin over the seeds' mutations, so that a probe budget reaches every seed's
    # neighbourhood instead of spending itself on the first seed's.
    streams = [mutations(seed, pool, name_list, pool_limit, meter) for seed in given]
    streams += [mutations(seed, pool, name_list, pool_limit, meter) for seed in pool if isinstance(seed, dict | list)]
    while streams:
        alive = []
        for stream in streams:
            probe = next(stream, _END)
            if probe is not _END:
                yield probe
                alive.append(stream)
        streams = alive


# --------------------------------------------------------------------------- documents built from a schema
# Probes from the pool rarely reach a nested property; a document built from the schema's own
# structure (its required properties, tuple positions, bounds) gets there, and the mutations of
# it vary one place at a time. Nothing here needs to be valid: every probe is judged anyway.

_FORMAT_SAMPLES = {"date": "2024-01-31", "date-time": "2024-01-31T10:00:00Z", "email": "user@example.com",
                   "uri": "https://example.com/a", "uuid": "00000000-0000-4000-8000-000000000000",
                   "ipv4": "192.0.2.1", "hostname": "example.com", "time": "10:00:00Z"}


def _pointer(root, ref: str):
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    return follow_pointer(root, ref[1:] if ref[1:].startswith("/") else "")


def _first_type(s: dict):
    t = s.get("type")
    names = [x for x in (t if isinstance(t, list) else [t]) if isinstance(x, str)]
    names = [x for x in names if x != "null"] or names
    if names:
        return names[0]
    if any(k in s for k in ("properties", "required", "additionalProperties", "patternProperties", "dependencies",
                            "dependentRequired", "dependentSchemas", "propertyNames", "minProperties", "maxProperties")):
        return "object"
    if any(k in s for k in ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")):
        return "array"
    if any(k in s for k in ("minLength", "maxLength", "pattern", "format")):
        return "string"
    if any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return None


def _number(s: dict, integer: bool):
    lo = s.get("minimum")
    xlo = s.get("exclusiveMinimum")
    value = 0
    if isinstance(lo, int | float) and not isinstance(lo, bool):
        value = lo
    if isinstance(xlo, int | float) and not isinstance(xlo, bool):
        value = max(value, xlo + 1) if lo is not None else xlo + 1
    if isinstance(s.get("maximum"), int | float) and not isinstance(s.get("maximum"), bool) and value > s["maximum"]:
        value = s["maximum"]
    step = s.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
        value = math.ceil(value / step) * step
    return int(math.ceil(value)) if integer else value


class _Cap:
    """The nodes one document may still take, each a step of the meter (spent before it is built)."""

    __slots__ = ("left", "meter")

    def __init__(self, nodes: int = MAX_NODES, meter: Meter | None = None):
        self.left, self.meter = nodes, meter

    def take(self) -> bool:
        _spend(self.meter)
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def build(schema, root=None, full: bool = False, depth: int = 0, cap: _Cap | None = None):
    """A document shaped by `schema`: its required properties (every declared one when `full`),
    its tuple positions and minimum counts, a value inside its bounds; at most MAX_NODES nodes
    (`cap`), so a wide graph of references yields a truncated document, not millions of nodes."""
    root = schema if root is None else root
    cap = _Cap() if cap is None else cap
    if depth > 6 or not isinstance(schema, dict) or not cap.take():
        return None
    if "$ref" in schema:
        target = _pointer(root, schema["$ref"])
        return build(target, root, full, depth + 1, cap) if isinstance(target, dict) else {}
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return copy.deepcopy(schema["enum"][0])
    for key in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and isinstance(branches[0], dict):
            rest = {k: v for k, v in schema.items() if k != key}
            if key == "allOf":
                merged = dict(rest)
                for b in branches:
                    if isinstance(b, dict):
                        merged.update({k: v for k, v in b.items() if k not in merged})
                return build(merged, root, full, depth + 1, cap)
            return build({**rest, **branches[0]}, root, full, depth + 1, cap)
    kind = _first_type(schema)
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        names = list(props) if full else []
        names += [r for r in schema.get("required") or [] if isinstance(r, str) and r not in names]
        out = {}
        for name in names:
            if cap.left <= 0:
                break  # the document is full: the rest of its properties stay out
            sub = props.get(name, schema.get("additionalProperties", {}))
            value = build(sub if isinstance(sub, dict) else {}, root, full, depth + 1, cap)
            out[name] = "a" if value is None else value
        return out
    if kind == "array":
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        if isinstance(schema.get("items"), list):
            prefix = schema["items"]
        out = [build(p, root, full, depth + 1, cap) for p in prefix]
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        want = schema.get("minItems") if isinstance(schema.get("minItems"), int) else 0
        while len(out) < max(want, 1 if full and items else 0) and cap.left > 0:
            out.append(build(items, root, full, depth + 1, cap))
        return out
    if kind == "string":
        if isinstance(schema.get("format"), str) and schema["format"] in _FORMAT_SAMPLES:
            return _FORMAT_SAMPLES[schema["format"]]
        length = schema.get("minLength") if isinstance(schema.get("minLength"), int) else 1
        return "a" * max(length, 0)
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return None


_ALTERNATIVES = ("if", "then", "else", "not", "anyOf", "oneOf", "allOf", "dependentSchemas")


def _alternatives(s, root, out: list, depth: int = 0) -> None:
    """The subschemas a document may be shaped by at the top: conditions, branches, dependencies."""
    if depth > 2 or not isinstance(s, dict):
        return
    for key in _ALTERNATIVES:
        value = s.get(key)
        subs = value if isinstance(value, list) else list(value.values()) if key == "dependentSchemas" and isinstance(value, dict) else [value]
        for sub in subs:
            if isinstance(sub, dict):
                out.append({**{k: v for k, v in s.items() if k not in _ALTERNATIVES}, **sub})
                _alternatives(sub, root, out, depth + 1)


def built_seeds(*schemas, limit: int = 24, meter: Meter | None = None) -> list:
    """Documents built from each schema (required properties only, and every declared one), and
    from each condition, branch or dependent schema beside the rest of its schema."""
    return list(_built_seeds(*schemas, limit=limit, meter=meter))


def _built_seeds(*schemas, limit: int = 24, meter: Meter | None = None) -> Iterator:
    """`built_seeds`, one document at a time (the first `limit` distinct ones)."""
    seen: set = set()
    for s in schemas:
        if not isinstance(s, dict):
            continue
        shapes = [s]
        _alternatives(s, s, shapes)
        for shape in shapes:
            for full in (False, True):
                doc = build(shape, root=s, full=full, cap=_Cap(MAX_NODES, meter))
                _spend(meter, size_of(doc))  # its canonical text, to tell it from the others
                key = _key(doc)
                if key in seen:
                    continue
                seen.add(key)
                yield doc
                if len(seen) >= limit:
                    return


# --------------------------------------------------------------------------- probes aimed at a place
# A change's path says where the versions differ. The probes below put local candidates (values
# built from, and around, the two subschemas found there) at the matching place of a document
# built from the rest of the schema: `{"v": {"b": [1, 1]}}` for a change at
# /properties/v/properties/b/uniqueItems. They only aim; the caller judges every one.

_SAME_PLACE = ("allOf", "anyOf", "oneOf", "if", "then", "else", "not", "dependentSchemas", "dependencies")


def _deref(node, root, depth: int = 0):
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 12:
        target = _pointer(root, node["$ref"])
        if not isinstance(target, dict | bool):
            return node
        siblings = {k: v for k, v in node.items() if k not in ("$ref", "$defs", "definitions", "$schema")}
        target = {} if target is True else {"not": {}} if target is False else target
        if siblings:  # 2019-09 and later apply the siblings too: shape by both
            props = {**(target.get("properties") or {}), **(siblings.get("properties") or {})}
            target = {**target, **siblings, **({"properties": props} if props else {})}
        node, depth = target, depth + 1
    return {} if node is True else {"not": {}} if node is False else node


def _name_for(pattern: str, taken) -> str | None:
    from . import ecma  # the pattern is ECMA-262

    literal = "".join(ch for ch in pattern if ch.isalnum() or ch in "_-")
    for name in [literal, literal + "1", *NAMES, "x_1", "v_1", "n_1", "a1"]:
        try:
            if name and name not in taken and ecma.search(pattern, name):
                return name
        except (ValueError, TypeError):
            return None
    return None


def _place(schema, path: str):
    """Walk a change's path through a raw schema: the instance steps (keys, indexes) to reach
    the place, the schema governing each level on the way, and the subschema found there."""
    root = schema
    node = _deref(schema, root)
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]] if path else []
    steps: list = []  # (level schema, key or index)
    i = 0
    while i < len(tokens) and isinstance(node, dict):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if t == "properties" and nxt is not None:
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            steps.append((node, nxt))
            node, i = _deref(props.get(nxt, node.get("additionalProperties", {})), root), i + 2
        elif t == "patternProperties" and nxt is not None:
            pats = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
            name = _name_for(nxt, set(node.get("properties") or {}))
            if name is None or nxt not in pats:
                break
            steps.append((node, name))
            node, i = _deref(pats[nxt], root), i + 2
        elif t == "additionalProperties":
            taken = set(node.get("properties") or {}) if isinstance(node.get("properties"), dict) else set()
            steps.append((node, next(n for n in ("zz", "extra_1", "q9") if n not in taken)))
            node, i = _deref(node.get("additionalProperties", {}), root), i + 1
        elif t in ("prefixItems", "items") and nxt is not None and nxt.isdigit():
            tuple_ = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else node.get("items")
            k = int(nxt)
            if not isinstance(tuple_, list):
                break
            steps.append((node, k))
            rest = node.get("items") if isinstance(node.get("prefixItems"), list) else node.get("additionalItems", {})
            node, i = _deref(tuple_[k] if k < len(tuple_) else rest, root), i + 2
        elif t == "items":
            tuple_ = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else node.get("items")
            k = len(tuple_) if isinstance(tuple_, list) else 0
            rest = node.get("additionalItems", {}) if isinstance(node.get("items"), list) else node.get("items", {})
            steps.append((node, k))
            node, i = _deref(rest, root), i + 1
        elif t in _SAME_PLACE:
            sub = node.get(t)
            if isinstance(sub, list) and nxt is not None and nxt.isdigit() and int(nxt) < len(sub):
                node, i = _deref(sub[int(nxt)], root), i + 2
            elif isinstance(sub, dict) and t in ("dependentSchemas", "dependencies") and nxt in sub:
                # the dependent schema applies when its trigger is present: shape the document so
                dep = _deref(sub[nxt], root)
                dep = dep if isinstance(dep, dict) else {}
                node = {**node, **dep, "required": [*(dep.get("required") or []), nxt]}
                node.pop(t, None)
                i += 2
            elif isinstance(sub, dict) and t not in ("dependentSchemas", "dependencies"):
                target = _deref(sub, root)
                if t == "then" and isinstance(node.get("if"), dict) and isinstance(target, dict):
                    target = {**_deref(node["if"], root), **target}  # then applies where if holds
                node, i = target, i + 1
            else:
                break
        else:
            break
    return steps, node


def _embed(steps: list, root, leaf, cap: _Cap | None = None):
    """`leaf` at the end of `steps`, inside containers built from each level's schema."""
    if not steps:
        return leaf
    cap = _Cap() if cap is None else cap
    (level, key), rest = steps[0], steps[1:]
    inner = _embed(rest, root, leaf, cap)
    if isinstance(key, int):
        base = build(level, root, cap=cap)
        out = list(base) if isinstance(base, list) else []
        tuple_ = level.get("prefixItems") if isinstance(level.get("prefixItems"), list) else level.get("items")
        while len(out) <= key:
            j = len(out)
            sub = tuple_[j] if isinstance(tuple_, list) and j < len(tuple_) else {}
            value = build(_deref(sub, root), root, cap=cap)
            out.append("a" if value is None else value)
        out[key] = inner
        return out
    base = build(level, root, cap=cap)
    out = dict(base) if isinstance(base, dict) else {}
    out[key] = inner
    return out


def _drops(doc, meter: Meter | None = None):
    """The document with one key dropped or one item removed, at any depth (one copy at a time)."""
    size = size_of(doc)
    _spend(meter, size)
    for path, value in list(_paths(doc)):
        if isinstance(value, dict):
            for k in value:
                _spend(meter, size)
                yield _set(doc, path, {kk: vv for kk, vv in value.items() if kk != k})
        elif isinstance(value, list) and value:
            _spend(meter, size)
            yield _set(doc, path, value[:-1])


def directed_documents(old, new, paths, per_path: int = 120, meter: Meter | None = None) -> Iterator[tuple[str, object]]:
    """Probes aimed at each of `paths` (change paths), in both versions' shapes, as (path, document).

    Lazy: the candidates for a place are made one at a time, each only when the one before it
    has been used, so a caller that stops (a budget, enough witnesses) stops the building too."""
    for path in dict.fromkeys(paths):
        placed = [(s, *_place(s, path)) for s in (old, new) if isinstance(s, dict)]
        if not placed:
            continue
        subs = [sub for _, _, sub in placed]
        for leaf in _candidates(subs, per_path, meter):
            for root, steps, _ in placed:
                doc = _embed(steps, root, leaf, _Cap(MAX_NODES, meter))
                yield path, doc


def _candidates(subs: list, per_path: int, meter: Meter | None) -> Iterator:
    """The local candidates for one place, distinct, at most per_path * 5: documents built from
    the subschemas found there, the values they name, then single-step variations of those."""
    seen: set = set()
    local: list = []
    built: list = []

    def fresh(doc) -> bool:
        _spend(meter, size_of(doc))  # its canonical text
        key = _key(doc)
        if key in seen:
            return False
        seen.add(key)
        return True

    limit = per_path * 5
    for doc in _built_seeds(*subs, meter=meter):
        built.append(doc)
        if fresh(doc):
            local.append(doc)
            yield doc
            if len(seen) >= limit:
                return
    pool, names = pool_and_names(subs[0], subs[-1], 80, meter)
    for doc in pool:
        if fresh(doc):
            local.append(doc)
            yield doc
            if len(seen) >= limit:
                return
    more = itertools.chain(
        (d for seed in built for d in _drops(seed, meter)),
        (m for seed in local[:6] for m in itertools.islice(mutations(seed, pool, names[:12], 20, meter), per_path * 3)),
    )
    for doc in more:
        if fresh(doc):
            yield doc
            if len(seen) >= limit:
                return
