"""Look for false negatives beyond the corpus: random mutations of corpus schemas, judged by the oracle.

    .venv/bin/python bench/compat_fuzz.py [--seed 11] [--seconds 240]

Each round takes a schema from the corpus, mutates it once or twice (a keyword
dropped, a keyword or property replaced by a small schema), runs the checker, and
probes the pair with the oracle (targeted values and mutations, no hypothesis).
A probe that breaks a direction the checker called safe is a false negative and is
printed with its witness. The last line is JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

import jsonschema  # noqa: E402
from registry_client.compat import compare  # noqa: E402

from tests.compat.corpus import Case, load_cases  # noqa: E402
from tests.compat.oracle import judge  # noqa: E402

SMALL = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "null"}, {}, False, True,
    {"enum": ["a", 1]}, {"const": 1}, {"minimum": 2}, {"maxLength": 2}, {"type": "object", "additionalProperties": False},
    {"type": "array", "items": {"type": "integer"}}, {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"minimum": 0}]}, {"not": {"type": "string"}}, {"required": ["a"]},
    {"properties": {"a": {"type": "integer"}}}, {"allOf": [{"minimum": 0}, {"maximum": 5}]}, {"multipleOf": 2},
    {"uniqueItems": True}, {"minItems": 1}, {"prefixItems": [{"type": "string"}]},
]
MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
LISTS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")


def nodes(schema, out: list) -> list:
    if isinstance(schema, dict):
        out.append(schema)
        for k, v in schema.items():
            if k in MAPS and isinstance(v, dict):
                for x in v.values():
                    nodes(x, out)
            elif isinstance(v, dict):
                nodes(v, out)
            elif isinstance(v, list) and k in LISTS:
                for x in v:
                    nodes(x, out)
    return out


def mutate(schema, rng: random.Random):
    schema = copy.deepcopy(schema)
    if not isinstance(schema, dict):
        return copy.deepcopy(rng.choice(SMALL))
    node = rng.choice(nodes(schema, []))
    op = rng.random()
    if op < 0.3 and node:
        key = rng.choice(list(node))
        if key not in ("$defs", "definitions", "$schema"):
            del node[key]
    elif op < 0.6:
        small = copy.deepcopy(rng.choice(SMALL))
        if isinstance(small, dict):
            node.update(small)
    else:
        node.setdefault("properties", {})[rng.choice(["a", "v", "b"])] = copy.deepcopy(rng.choice(SMALL))
    return schema


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--seconds", type=float, default=240)
    parser.add_argument("--max-probes", type=int, default=400)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    rng = random.Random(args.seed)
    schemas = [s for case in load_cases() for s in (case.old, case.new)]
    started = time.perf_counter()
    pairs = false_negatives = crashes = probes = 0
    while time.perf_counter() - started < args.seconds:
        old = rng.choice(schemas)
        new = mutate(old, rng)
        if rng.random() < 0.5:
            new = mutate(new, rng)
        try:
            jsonschema.validators.validator_for(new, default=jsonschema.Draft202012Validator).check_schema(new)
        except jsonschema.SchemaError:
            continue
        try:
            changes = compare(old, new)
        except Exception as exc:
            crashes += 1
            print("crash:", type(exc).__name__, exc, json.dumps(old), json.dumps(new))
            continue
        verdict = judge(Case("fuzz", "", (), old, new, True, True), examples=0, max_probes=args.max_probes)
        pairs += 1
        probes += verdict.probes
        for direction, found, witness in (("backward", verdict.found_backward, verdict.backward_witness),
                                          ("forward", verdict.found_forward, verdict.forward_witness)):
            if found and not any(getattr(c, f"breaks_{direction}") for c in changes):
                false_negatives += 1
                print(f"false negative ({direction}):", json.dumps(old), "=>", json.dumps(new), "witness", json.dumps(witness))
        if pairs % 1000 == 0:
            print(f"  {pairs} pairs, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(json.dumps({"pairs": pairs, "false_negatives": false_negatives, "crashes": crashes, "probes": probes}))


if __name__ == "__main__":
    main()
