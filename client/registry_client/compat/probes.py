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
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator

from .engine.resources import follow_pointer

BASE_VALUES = [
    None, True, False, 0, 1, 1.0, -1, 2, 3, 4, 5, 6, 7, 10, 11, 15, 50, 100, 2000, -5, 0.5, 1.5, 2.5, -0.5,
    "", "a", "b", "c", "x", "z", "A", "A1", "a1", "ab", "abc", "abcd", "abcde", "abcdefg", "123",
    "2024-01-31", "2024-01-31T10:00:00Z", "yesterday", "user@example.com", "https://example.com/a",
    [], [1], [1, 1], ["a"], ["a", 1], ["a", "b"], ["a", "a"], [1.5], {}, {"a": 1},
]
NAMES = ["a", "b", "c", "v", "x1", "x2", "x_1", "v_1", "z", "A", "abcd", "anything", "kind", "t", "value", "children", "next", "id", "ref"]


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


def mutations(doc, pool: list, names: list, limit: int) -> Iterator:
    """Single-step variations of a document."""
    for path, value in list(_paths(doc)):
        if len(path) > 6:
            continue
        for v in pool:
            yield _set(doc, path, v)
        if isinstance(value, dict):
            for k in value:
                yield _set(doc, path, {kk: vv for kk, vv in value.items() if kk != k})
            for name in names:
                for v in pool[: max(6, limit // 4)]:
                    yield _set(doc, path, {**value, name: v})
                yield _set(doc, path, {**value, name: copy.deepcopy(doc) if len(path) == 0 and isinstance(doc, dict) else {}})
        if isinstance(value, list):
            for v in pool:
                yield _set(doc, path, [*value, v])
            if value:
                yield _set(doc, path, [*value, value[0]])
                yield _set(doc, path, value[:-1])
                yield _set(doc, path, value[1:])


def pool_and_names(old, new, pool_limit: int = 60) -> tuple[list, list]:
    constants: list = []
    names: set = set(NAMES)
    walk_constants([old, new], constants, names)
    return dedupe(constants + BASE_VALUES)[:pool_limit], sorted(names)[:40]


_END = object()


def probe_documents(old, new, seeds: Iterable = (), pool_limit: int = 60) -> Iterator:
    """The probes for a pair, in a fixed order: `seeds` first, then targeted values, then mutations."""
    seeds = dedupe([*seeds, *built_seeds(old, new)])
    pool, name_list = pool_and_names(old, new, pool_limit)
    yield from seeds
    yield from pool
    for name in name_list:
        for v in pool[:12]:
            yield {name: v}
    # Round robin over the seeds' mutations, so that a probe budget reaches every seed's
    # neighbourhood instead of spending itself on the first seed's.
    streams = [mutations(seed, pool, name_list, pool_limit) for seed in seeds]
    streams += [mutations(seed, pool, name_list, pool_limit) for seed in pool if isinstance(seed, dict | list)]
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


def build(schema, root=None, full: bool = False, depth: int = 0):
    """A document shaped by `schema`: its required properties (every declared one when `full`),
    its tuple positions and minimum counts, a value inside its bounds."""
    root = schema if root is None else root
    if depth > 6 or not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        target = _pointer(root, schema["$ref"])
        return build(target, root, full, depth + 1) if isinstance(target, dict) else {}
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
                return build(merged, root, full, depth + 1)
            return build({**rest, **branches[0]}, root, full, depth + 1)
    kind = _first_type(schema)
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        names = list(props) if full else []
        names += [r for r in schema.get("required") or [] if isinstance(r, str) and r not in names]
        out = {}
        for name in names:
            sub = props.get(name, schema.get("additionalProperties", {}))
            value = build(sub if isinstance(sub, dict) else {}, root, full, depth + 1)
            out[name] = "a" if value is None else value
        return out
    if kind == "array":
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        if isinstance(schema.get("items"), list):
            prefix = schema["items"]
        out = [build(p, root, full, depth + 1) for p in prefix]
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        want = schema.get("minItems") if isinstance(schema.get("minItems"), int) else 0
        while len(out) < max(want, 1 if full and items else 0):
            out.append(build(items, root, full, depth + 1))
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


def built_seeds(*schemas, limit: int = 24) -> list:
    """Documents built from each schema (required properties only, and every declared one), and
    from each condition, branch or dependent schema beside the rest of its schema."""
    out = []
    for s in schemas:
        if not isinstance(s, dict):
            continue
        shapes = [s]
        _alternatives(s, s, shapes)
        out += [build(shape, root=s, full=full) for shape in shapes for full in (False, True)]
    return dedupe(out)[:limit]


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


def _embed(steps: list, root, leaf):
    """`leaf` at the end of `steps`, inside containers built from each level's schema."""
    if not steps:
        return leaf
    (level, key), rest = steps[0], steps[1:]
    inner = _embed(rest, root, leaf)
    if isinstance(key, int):
        base = build(level, root)
        out = list(base) if isinstance(base, list) else []
        tuple_ = level.get("prefixItems") if isinstance(level.get("prefixItems"), list) else level.get("items")
        while len(out) <= key:
            j = len(out)
            sub = tuple_[j] if isinstance(tuple_, list) and j < len(tuple_) else {}
            value = build(_deref(sub, root), root)
            out.append("a" if value is None else value)
        out[key] = inner
        return out
    base = build(level, root)
    out = dict(base) if isinstance(base, dict) else {}
    out[key] = inner
    return out


def _drops(doc):
    """The document with one key dropped or one item removed, at any depth."""
    for path, value in list(_paths(doc)):
        if isinstance(value, dict):
            for k in value:
                yield _set(doc, path, {kk: vv for kk, vv in value.items() if kk != k})
        elif isinstance(value, list) and value:
            yield _set(doc, path, value[:-1])


def directed_documents(old, new, paths, per_path: int = 120) -> Iterator[tuple[str, object]]:
    """Probes aimed at each of `paths` (change paths), in both versions' shapes, as (path, document)."""
    for path in dict.fromkeys(paths):
        placed = [(s, *_place(s, path)) for s in (old, new) if isinstance(s, dict)]
        if not placed:
            continue
        subs = [sub for _, _, sub in placed]
        built = built_seeds(*subs)
        pool, names = pool_and_names(subs[0], subs[-1], 80)
        local = dedupe([*built, *pool])
        more = [d for seed in built for d in _drops(seed)]
        for seed in local[:6]:
            for i, m in enumerate(mutations(seed, pool, names[:12], 20)):
                if i >= per_path * 3:
                    break
                more.append(m)
        candidates = dedupe([*local, *more])[:per_path * 5]
        for leaf in candidates:
            for root, steps, _ in placed:
                yield path, _embed(steps, root, leaf)
