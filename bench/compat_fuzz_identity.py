"""A digest of the checker's output on seeded random schema pairs, to prove a refactor changed nothing.

    .venv/bin/python bench/compat_fuzz_identity.py [--seed 7] [--pairs 3000] [--dump out.json] [--smoke]

Draws `--pairs` pairs of JSON Schemas from random.Random(seed) (every keyword the
checker reasons about, Draft 7 and 2020-12 spellings, $ref into $defs/definitions,
recursion, unresolvable references, boolean schemas, annotations, unknown keywords),
half of them a schema and a mutation of it, half two unrelated schemas. Mutations
may leave a schema invalid (a keyword's value replaced by a schema), which pins the
checker's failures as well. Each pair goes through `compare` and
`check_compatibility` in every mode; an exception is recorded as its type and
message rather than stopping the run.

Run it before and after a change to the engine, with the same version of this
script (the digest covers the drawn pairs too): the same seed and count must print
the same digest. `--dump` writes the full results (sorted JSON) for a diff when
they do not. Unlike bench/compat_fuzz.py this judges nothing; it only pins output.
The last line is JSON (timing goes to stderr).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from registry_client.compat import MODES, check_compatibility, compare  # noqa: E402

TYPES = ("null", "boolean", "object", "array", "string", "integer", "number")
NAMES = ("a", "b", "c", "v")
PATTERNS = ("^a", "^[a-z]+$", "b", "^x-", "[")  # "[" does not compile: the checker must cope
FORMATS = ("email", "date", "uuid", "ipv4")
VALUES = (None, True, False, 0, 1, 1.0, 2, -1, 2.5, "a", "b", "", [], [1], {}, {"a": 1})
DEF_NAMES = ("node", "leaf", "item")


class Draw:
    """One random schema document; `refs` are the targets a $ref may name inside it."""

    def __init__(self, rng: random.Random, container: str):
        self.rng = rng
        self.container = container
        self.refs = [f"#/{container}/{name}" for name in DEF_NAMES] + ["#", "#/$defs/missing", "other.json#/x", "#top"]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def value(self):
        # a fresh copy: a shared [] or {} would let a mutation tie a schema into a cycle
        return copy.deepcopy(self.rng.choice(VALUES))

    def number(self):
        return self.rng.choice((0, 1, 2, 3, 5, 10, -1, 0.5, 2.5, 1.0))

    def schema(self, depth: int, guarded: bool = True):
        """`guarded`: a descent into the instance (properties, items, ...) lies between this
        place and the document or definition root, so a $ref here cannot loop without
        consuming the document, which would send the validator into endless recursion."""
        rng = self.rng
        if depth <= 0 or self.chance(0.15):
            leaves = [True, False, {}, {"type": rng.choice(TYPES)}, {"const": self.value()}]
            if guarded:
                leaves.append({"$ref": rng.choice(self.refs)})
            return rng.choice(leaves)
        s: dict = {}
        families = ["type", "values", "number", "string", "object", "array", "combinator", "conditional", "misc"]
        if guarded:
            families.append("ref")
        for family in rng.sample(families, k=rng.randint(1, 3)):
            getattr(self, "_" + family)(s, depth - 1, guarded)
        return s

    def _type(self, s: dict, depth: int, guarded: bool) -> None:
        s["type"] = self.rng.choice(TYPES) if self.chance(0.6) else self.rng.sample(TYPES, k=self.rng.randint(1, 3))

    def _values(self, s: dict, depth: int, guarded: bool) -> None:
        if self.chance(0.4):
            s["const"] = self.value()
        else:
            s["enum"] = copy.deepcopy(self.rng.sample(VALUES, k=self.rng.randint(1, 5)))

    def _number(self, s: dict, depth: int, guarded: bool) -> None:
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            if self.chance(0.35):
                s[key] = self.number() if key != "multipleOf" else self.rng.choice((1, 2, 3, 0.5, 4))
        if self.chance(0.1):  # Draft 4 boolean exclusive bounds
            s["minimum"] = self.number()
            s["exclusiveMinimum"] = self.chance(0.5)

    def _string(self, s: dict, depth: int, guarded: bool) -> None:
        for key in ("minLength", "maxLength"):
            if self.chance(0.5):
                s[key] = self.rng.randint(0, 4)
        if self.chance(0.4):
            s["pattern"] = self.rng.choice(PATTERNS)
        if self.chance(0.3):
            s["format"] = self.rng.choice(FORMATS)

    def _object(self, s: dict, depth: int, guarded: bool) -> None:
        rng = self.rng
        if self.chance(0.7):
            s["properties"] = {n: self.schema(depth) for n in rng.sample(NAMES, k=rng.randint(1, 3))}
        if self.chance(0.5):
            s["required"] = rng.sample(NAMES, k=rng.randint(1, 2))
        if self.chance(0.4):
            s["additionalProperties"] = self.schema(depth) if self.chance(0.5) else False
        if self.chance(0.25):
            s["patternProperties"] = {rng.choice(PATTERNS): self.schema(depth)}
        for key in ("minProperties", "maxProperties"):
            if self.chance(0.2):
                s[key] = rng.randint(0, 3)
        if self.chance(0.15):
            s["dependentRequired"] = {rng.choice(NAMES): rng.sample(NAMES, k=1)}
        if self.chance(0.15):
            s["dependentSchemas"] = {rng.choice(NAMES): self.schema(depth, guarded)}
        if self.chance(0.1):  # Draft 7 spelling of both
            s["dependencies"] = {rng.choice(NAMES): rng.sample(NAMES, k=1), rng.choice(NAMES): self.schema(depth, guarded)}
        if self.chance(0.15):
            s["propertyNames"] = {"maxLength": rng.randint(1, 3)} if self.chance(0.5) else self.schema(depth, guarded)

    def _array(self, s: dict, depth: int, guarded: bool) -> None:
        rng = self.rng
        if self.chance(0.3):  # Draft 7 tuple spelling
            s["items"] = [self.schema(depth) for _ in range(rng.randint(1, 3))]
            if self.chance(0.5):
                s["additionalItems"] = self.schema(depth)
        else:
            if self.chance(0.4):
                s["prefixItems"] = [self.schema(depth) for _ in range(rng.randint(1, 3))]
            if self.chance(0.7):
                s["items"] = self.schema(depth)
        for key in ("minItems", "maxItems", "minContains", "maxContains"):
            if self.chance(0.2):
                s[key] = rng.randint(0, 3)
        if self.chance(0.25):
            s["uniqueItems"] = self.chance(0.7)
        if self.chance(0.25):
            s["contains"] = self.schema(depth)

    def _combinator(self, s: dict, depth: int, guarded: bool) -> None:
        rng = self.rng
        key = rng.choice(("allOf", "anyOf", "oneOf", "not"))
        if key == "not":
            s["not"] = self.schema(depth, guarded)
        else:
            s[key] = [self.schema(depth, guarded) for _ in range(rng.randint(1, 3))]

    def _conditional(self, s: dict, depth: int, guarded: bool) -> None:
        s["if"] = self.schema(depth, guarded)
        if self.chance(0.8):
            s["then"] = self.schema(depth, guarded)
        if self.chance(0.6):
            s["else"] = self.schema(depth, guarded)

    def _ref(self, s: dict, depth: int, guarded: bool) -> None:
        s["$ref"] = self.rng.choice(self.refs)

    def _misc(self, s: dict, depth: int, guarded: bool) -> None:
        rng = self.rng
        key = rng.choice(("title", "description", "default", "x-owner", "$comment", "deprecated",
                          "unknownKeyword", "unevaluatedProperties", "$anchor"))
        if key == "unevaluatedProperties":
            s[key] = self.chance(0.5)
        elif key == "$anchor":
            s[key] = "top"
        else:
            s[key] = rng.choice(("x", "y", 1, True))

    def document(self) -> dict | bool:
        rng = self.rng
        root = self.schema(rng.randint(1, 3), guarded=False)
        if not isinstance(root, dict):
            return root
        if self.chance(0.6):
            root[self.container] = {name: self.schema(2, guarded=False) for name in rng.sample(DEF_NAMES, k=rng.randint(1, 3))}
        if self.chance(0.2):
            root["$schema"] = "http://json-schema.org/draft-07/schema#"
        elif self.chance(0.1):
            root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        return root


DATA_KEYS = frozenset({"const", "enum", "default", "examples"})


def nodes(schema, out: list) -> list:
    """Every schema object inside `schema` (values under const, enum, ... are data, not schemas)."""
    if isinstance(schema, dict):
        out.append(schema)
        for key, value in schema.items():
            if key not in DATA_KEYS:
                nodes(value, out)
    elif isinstance(schema, list):
        for value in schema:
            nodes(value, out)
    return out


def mutate(schema, draw: Draw):
    """A copy with one or two local edits: a keyword dropped, replaced or added."""
    schema = copy.deepcopy(schema)
    if not isinstance(schema, dict):
        return draw.document()
    for _ in range(draw.rng.randint(1, 2)):
        node = draw.rng.choice(nodes(schema, []))
        op = draw.rng.random()
        if op < 0.35 and node:
            del node[draw.rng.choice(list(node))]
        elif op < 0.7 and node:
            node[draw.rng.choice(list(node))] = draw.schema(1, guarded=False)
        else:
            extra = draw.schema(2, guarded=False)
            if isinstance(extra, dict):
                node.update(extra)
    return schema


def pairs(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        draw = Draw(rng, rng.choice(("$defs", "definitions")))
        old = draw.document()
        new = mutate(old, draw) if rng.random() < 0.5 else draw.document()
        yield old, new


def _change(c) -> list:
    return [c.path, c.kind, c.breaks_backward, c.breaks_forward, c.reason, c.against, c.breaking]


def _guarded(fn):
    try:
        return fn()
    except RecursionError:
        # Where the limit strikes (and so the message's tail) depends on how many frames the
        # engine's functions take, which a refactor may change without changing behaviour.
        return {"exception": "RecursionError", "message": "maximum recursion depth exceeded"}
    except Exception as exc:  # the digest must cover failures too, not stop at the first
        return {"exception": type(exc).__name__, "message": str(exc)}


def run_pair(old, new) -> dict:
    result = {"compare": _guarded(lambda: [_change(c) for c in compare(old, new)]), "modes": {}}
    for mode in MODES:
        def report(mode=mode):
            r = check_compatibility([old], new, mode)
            return {"compatible": r.compatible, "bump": r.suggested_bump, "verdict": r.verdict,
                    "changes": [_change(c) for c in r.changes]}
        result["modes"][mode] = _guarded(report)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--dump", help="write every pair and its results here as JSON")
    parser.add_argument("--smoke", action="store_true", help="10 pairs, for CI (a digest of its own)")
    args = parser.parse_args()
    if args.smoke:
        args.pairs = 10
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    digest = hashlib.sha256()
    results = []
    exceptions = breaking = 0
    for i, (old, new) in enumerate(pairs(args.seed, args.pairs)):
        result = run_pair(old, new)
        line = json.dumps({"i": i, "old": old, "new": new, **result}, sort_keys=True, default=str)
        digest.update(line.encode() + b"\n")
        exceptions += isinstance(result["compare"], dict)  # a list of changes, or the exception
        breaking += result["modes"]["FULL"].get("compatible") is False
        if args.dump:
            results.append(json.loads(line))
    if args.dump:
        Path(args.dump).write_text(json.dumps(results, sort_keys=True, indent=1, ensure_ascii=False))
    # Timing goes to stderr so the JSON line itself can be compared byte for byte.
    print(f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(json.dumps({"seed": args.seed, "pairs": args.pairs, "exceptions": exceptions,
                      "breaking_under_full": breaking, "sha256": digest.hexdigest()}))


if __name__ == "__main__":
    main()
