"""Large generated schemas with wide `$ref` graphs, deep nesting and large enums.

Real contracts that hurt a checker look like this: a draft-04 document whose `definitions`
reference each other many times over (every definition names several others, several times),
objects nested a few levels deep, and long `enum` lists. `wide_pair(seed, size_kb)` builds one
such schema of about `size_kb` kilobytes and a next version with a handful of realistic
changes (a property narrowed, one added as required, an enum value dropped, one widened), all
from a seeded random generator, so the same seed always gives the same pair.

Used by bench/compat_speed.py (its generated set) and by the checker's work-bound tests.
"""

from __future__ import annotations

import copy
import json
import random

DRAFT4 = "http://json-schema.org/draft-04/schema#"


def _leaf(rng: random.Random, enum_size: int) -> dict:
    pick = rng.random()
    if pick < 0.25:
        return {"type": "string", "maxLength": rng.choice([16, 64, 255])}
    if pick < 0.45:
        return {"type": "integer", "minimum": 0, "maximum": rng.choice([100, 10_000, 2**31 - 1])}
    if pick < 0.55:
        return {"type": ["number", "null"]}
    if pick < 0.65:
        return {"type": "boolean"}
    if pick < 0.8:
        return {"type": "string", "enum": [f"v{rng.randrange(10**6)}_{i}" for i in range(enum_size)]}
    return {"type": "string", "format": rng.choice(["date-time", "email", "uri"])}


def _object(rng: random.Random, names: list[str], width: int, depth: int, refs_per_object: int,
            enum_size: int) -> dict:
    props: dict = {}
    for i in range(width):
        name = f"p{i}_{rng.randrange(1000)}"
        if i < refs_per_object and names:
            target = {"$ref": f"#/definitions/{rng.choice(names)}"}
            props[name] = target if rng.random() < 0.7 else {"type": "array", "items": target}
        elif depth > 0 and rng.random() < 0.3:
            props[name] = _object(rng, names, max(2, width // 2), depth - 1, refs_per_object // 2, enum_size)
        else:
            props[name] = _leaf(rng, enum_size)
    required = sorted(rng.sample(list(props), k=max(1, len(props) // 3)))
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": rng.random() < 0.5}


def wide_schema(seed: int, size_kb: int, *, width: int = 10, depth: int = 3, refs_per_object: int = 4,
                enum_size: int = 30) -> dict:
    """A draft-04 schema of about `size_kb` KB: definitions that reference each other widely."""
    rng = random.Random(seed)
    schema: dict = {"$schema": DRAFT4, "type": "object", "definitions": {}}
    # references name definitions written later too; those never written are retargeted below
    names = [f"Def{i}" for i in range(max(2, size_kb))]
    count = 0
    while len(json.dumps(schema)) < size_kb * 1000 or count < 2:
        schema["definitions"][f"Def{count}"] = _object(rng, names, width, depth, refs_per_object, enum_size)
        count += 1
    defined = list(schema["definitions"])
    # references to definitions never written point to existing ones instead
    _retarget(schema, set(defined), defined, rng)
    schema["properties"] = {f"root{i}": {"$ref": f"#/definitions/{defined[i % len(defined)]}"}
                            for i in range(min(width, len(defined)))}
    schema["required"] = ["root0"]
    return schema


def _retarget(node, defined: set, names: list, rng: random.Random) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in defined:
            node["$ref"] = f"#/definitions/{rng.choice(names)}"
        for v in node.values():
            _retarget(v, defined, names, rng)
    elif isinstance(node, list):
        for v in node:
            _retarget(v, defined, names, rng)


def _leaves(node, path=()):
    """(path, leaf schema) of every property schema that has a `type` of its own."""
    if isinstance(node, dict):
        if "type" in node and "properties" not in node and "items" not in node:
            yield path, node
        for k, v in node.items():
            if k != "enum":
                yield from _leaves(v, (*path, k))


def evolve(schema: dict, seed: int) -> dict:
    """The next version: a few realistic changes in random places, seeded."""
    rng = random.Random(seed * 7919 + 1)
    new = copy.deepcopy(schema)
    leaves = list(_leaves(new["definitions"]))
    for _ in range(4 if leaves else 0):
        _, leaf = rng.choice(leaves)
        if "maxLength" in leaf:
            leaf["maxLength"] = max(1, leaf["maxLength"] // 2)       # narrowed
        elif "maximum" in leaf:
            leaf["maximum"] = leaf["maximum"] * 2                    # widened
        elif isinstance(leaf.get("enum"), list) and len(leaf["enum"]) > 1:
            leaf["enum"] = leaf["enum"][:-1]                         # a value dropped
        elif leaf.get("type") == ["number", "null"]:
            leaf["type"] = "number"                                  # null refused
    objects = [d for d in new["definitions"].values() if isinstance(d.get("properties"), dict)]
    if objects:
        target = rng.choice(objects)
        target["properties"]["added_field"] = {"type": "string"}
        target["required"] = sorted({*target.get("required", []), "added_field"})
    new["properties"]["root_added"] = {"type": "string", "maxLength": 64}  # at the top: the witness search
    new["required"] = [*new.get("required", []), "root_added"]             # then builds the whole document
    extra = f"Def{len(new['definitions'])}"
    new["definitions"][extra] = _object(rng, list(new["definitions"]), 6, 1, 2, 10)
    return new


def wide_pair(seed: int, size_kb: int, **shape) -> tuple[dict, dict]:
    old = wide_schema(seed, size_kb, **shape)
    return old, evolve(old, seed)


def size_of(*schemas) -> int:
    """The number of JSON nodes (objects, arrays, scalars) in `schemas`: the size work is measured against."""
    count = 0
    stack = list(schemas)
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count
