"""Probe documents for a pair of schemas: the generator behind witnesses and the test oracle.

A witness is a document valid under one version and invalid under the other. The probes are
built from the two schemas themselves (no random draws, so the same pair always yields the
same probes in the same order):

1. every constant in either schema, each numeric bound and its neighbours, strings, arrays and
   objects just inside and outside each length or count, and a fixed pool of common values;
2. one-key objects naming each property either schema mentions;
3. single-step mutations of given seeds and of the pool's containers: a value replaced, a key
   dropped or added, an item appended or dropped.

Every probe proves something only once a real validator has judged it under both versions.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator

BASE_VALUES = [
    None, True, False, 0, 1, -1, 2, 3, 4, 5, 6, 7, 10, 11, 15, 50, 100, 2000, -5, 0.5, 1.5, 2.5, -0.5,
    "", "a", "b", "c", "x", "z", "A", "A1", "a1", "ab", "abc", "abcd", "abcde", "abcdefg", "123",
    "2024-01-31", "2024-01-31T10:00:00Z", "yesterday", "user@example.com", "https://example.com/a",
    [], [1], [1, 1], ["a"], ["a", 1], ["a", "b"], [1.5], {}, {"a": 1},
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
                out.extend([v, v - 1, v + 1, v - 0.5, v + 0.5])
                if isinstance(v, float) and not v.is_integer():
                    out.extend([math.floor(v), math.ceil(v)])
            elif k == "multipleOf" and isinstance(v, int | float) and not isinstance(v, bool):
                out.extend([v, 2 * v, 3 * v, v / 2, v + 1])
            elif k in ("minLength", "maxLength") and isinstance(v, int):
                out.extend(["a" * max(0, v + d) for d in (-1, 0, 1)])
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


def probe_documents(old, new, seeds: Iterable = (), pool_limit: int = 60) -> Iterator:
    """The probes for a pair, in a fixed order: `seeds` first, then targeted values, then mutations."""
    seeds = list(seeds)
    pool, name_list = pool_and_names(old, new, pool_limit)
    yield from seeds
    yield from pool
    for name in name_list:
        for v in pool[:12]:
            yield {name: v}
    for seed in seeds:
        yield from mutations(seed, pool, name_list, pool_limit)
    for seed in pool:
        if isinstance(seed, dict | list):
            yield from mutations(seed, pool, name_list, pool_limit)
