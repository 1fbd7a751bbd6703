"""False negatives and unproven alarms beyond the corpus: random mutations of corpus schemas, judged by the oracle.

    .venv/bin/python bench/compat_fuzz.py [--seed 11] [--seconds 240] [--cross-draft] [--smoke]

Each round takes a schema from the corpus, mutates it once or twice (a keyword
dropped, a keyword or property replaced by a small schema), runs the checker, and
probes the pair with the oracle (targeted values and mutations, no hypothesis).

- A probe that breaks a direction the checker called safe is a **false negative**,
  printed with its witness.
- A direction the checker calls breaking where no probe shows a break is probed
  again with a generous budget (hypothesis-jsonschema draws from both versions, the
  generator's probes aimed at each reported change's place — as the report's witness
  search does — and `--deep-probes` documents); when that finds no counterexample, it is an
  **unproven alarm** (printed with the change that raised it). No label is needed:
  the oracle is the measure. An unproven alarm may still be a real break the probes
  cannot reach, so the rate is an upper bound on false alarms.

Rates are per direction judged (two per pair); the share of alarms that stay
unproven is printed beside it.

`--cross-draft` declares a random draft on each side (Draft 3 to 2020-12, or none) and
mutates with keywords of every draft, so a schema declaring one draft holds keywords
of another (which that draft's validator ignores); pairs a declared draft's
metaschema refuses are skipped. The last line is JSON.
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
from registry_client.compat.probes import built_seeds  # noqa: E402

from tests.compat.corpus import Case, load_cases  # noqa: E402
from tests.compat.oracle import judge, make_validator  # noqa: E402

SMALL = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "null"}, {}, False, True,
    {"enum": ["a", 1]}, {"const": 1}, {"minimum": 2}, {"maxLength": 2}, {"type": "object", "additionalProperties": False},
    {"type": "array", "items": {"type": "integer"}}, {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"minimum": 0}]}, {"not": {"type": "string"}}, {"required": ["a"]},
    {"properties": {"a": {"type": "integer"}}}, {"allOf": [{"minimum": 0}, {"maximum": 5}]}, {"multipleOf": 2},
    {"uniqueItems": True}, {"minItems": 1}, {"prefixItems": [{"type": "string"}]},
]
# Keywords of each draft, dropped into schemas that may declare another one.
DRAFT_KEYWORDS = [
    {"divisibleBy": 2}, {"disallow": "string"}, {"extends": {"minimum": 1}}, {"type": ["string", {"type": "integer"}]},
    {"dependencies": {"a": "b"}}, {"properties": {"a": {"type": "integer", "required": True}}},
    {"minimum": 1, "exclusiveMinimum": True}, {"maximum": 5, "exclusiveMaximum": True}, {"id": "#x"},
    {"const": 1}, {"contains": {"type": "integer"}}, {"propertyNames": {"maxLength": 1}}, {"exclusiveMaximum": 3},
    {"if": {"type": "integer"}, "then": {"minimum": 0}}, {"items": [{"type": "string"}], "additionalItems": False},
    {"dependencies": {"a": ["b"]}}, {"dependencies": {"a": {"required": ["b"]}}}, {"$id": "#y"},
    {"dependentRequired": {"a": ["b"]}}, {"contains": {"type": "integer"}, "minContains": 2}, {"maxContains": 1},
    {"dependentSchemas": {"a": {"required": ["b"]}}}, {"$anchor": "z"},
    {"prefixItems": [{"type": "integer"}], "items": False}, {"type": "integer"}, {"enum": [1.0, "a"]},
]
DRAFTS = [
    "http://json-schema.org/draft-03/schema#", "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2020-12/schema", None,
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


def declare(schema, draft):
    if not isinstance(schema, dict):
        return schema
    schema = {k: v for k, v in schema.items() if k != "$schema"}
    return schema if draft is None else {"$schema": draft, **schema}


def mutate(schema, rng: random.Random, pool: list = SMALL):
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
        small = copy.deepcopy(rng.choice(pool))
        if isinstance(small, dict):
            node.update(small)
    else:
        node.setdefault("properties", {})[rng.choice(["a", "v", "b"])] = copy.deepcopy(rng.choice(pool))
    return schema


def valid_schema(schema) -> bool:
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError:
        return False
    except Exception:  # a metaschema check the validator itself cannot run
        return False
    return True


def applicable(schema) -> bool:
    """Can the declared draft's validator apply the schema at all? (A bad keyword under $defs
    passes the metaschema and fails only when a reference reaches it.)"""
    validator = make_validator(schema)
    try:
        for doc in built_seeds(schema):
            validator.is_valid(doc)
    except Exception:
        return False
    return True


def draw_pair(schemas: list, rng: random.Random, cross_draft: bool):
    old = rng.choice(schemas)
    if not cross_draft:
        new = mutate(old, rng)
        if rng.random() < 0.5:
            new = mutate(new, rng)
        return old, new
    # keywords of one draft inside a schema declaring another, on either side
    pool = SMALL + DRAFT_KEYWORDS
    old = declare(mutate(old, rng, pool) if rng.random() < 0.5 else old, rng.choice(DRAFTS))
    new = mutate(old, rng, pool)
    if rng.random() < 0.5:
        new = mutate(new, rng, pool)
    if rng.random() < 0.3:
        new = declare(new, rng.choice(DRAFTS))
    return old, new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--seconds", type=float, default=240)
    parser.add_argument("--max-probes", type=int, default=400)
    parser.add_argument("--deep-probes", type=int, default=4000, help="probes for a direction the first pass did not prove")
    parser.add_argument("--deep-examples", type=int, default=10, help="hypothesis-jsonschema draws per schema then")
    parser.add_argument("--cross-draft", action="store_true", help="declare random drafts and mix keywords of every draft")
    parser.add_argument("--smoke", action="store_true", help="3 seconds with small probe budgets, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.max_probes, args.deep_probes, args.deep_examples = 3, 50, 100, 1
    warnings.filterwarnings("ignore")
    rng = random.Random(args.seed)
    schemas = [s for case in load_cases() for s in (case.old, case.new)]
    started = time.perf_counter()
    pairs = false_negatives = crashes = probes = alarms = unproven = inapplicable = 0
    while time.perf_counter() - started < args.seconds:
        old, new = draw_pair(schemas, rng, args.cross_draft)
        if not valid_schema(new) or (args.cross_draft and not valid_schema(old)):
            continue
        try:
            changes = compare(old, new)
        except Exception as exc:
            crashes += 1
            print("crash:", type(exc).__name__, exc, json.dumps(old), json.dumps(new))
            continue
        case = Case("fuzz", "", (), old, new, True, True)
        verdict = judge(case, examples=0, max_probes=args.max_probes)
        pairs += 1
        probes += verdict.probes
        deep = None
        for direction in ("backward", "forward"):
            attr = f"breaks_{direction}"
            reported = [c for c in changes if getattr(c, attr)]
            found = getattr(verdict, f"found_{direction}")
            if found and not reported:
                false_negatives += 1
                print(f"false negative ({direction}):", json.dumps(old), "=>", json.dumps(new),
                      "witness", json.dumps(getattr(verdict, f"{direction}_witness")))
            if reported:
                alarms += 1
            if reported and not found:
                if deep is None:
                    aim = tuple(c.path for c in changes if c.breaks_backward or c.breaks_forward)
                    deep = judge(case, examples=args.deep_examples, max_probes=args.deep_probes, aim_at=aim)
                    probes += deep.probes
                if not getattr(deep, f"found_{direction}") and not (applicable(old) and applicable(new)):
                    inapplicable += 1  # the checker said "could not decide"; no validator can apply it either
                    print(f"inapplicable schema ({direction}): {reported[0].kind}:", json.dumps(old), "=>", json.dumps(new))
                elif not getattr(deep, f"found_{direction}"):
                    unproven += 1
                    first = reported[0]
                    print(f"unproven alarm ({direction}): {first.path or '/'} {first.kind}:", json.dumps(old), "=>", json.dumps(new))
        if pairs % 1000 == 0:
            print(f"  {pairs} pairs, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    directions = 2 * pairs
    print(f"pairs: {pairs}; directions judged: {directions}; {time.perf_counter() - started:.0f} s"
          f"{' (cross-draft)' if args.cross_draft else ''}")
    print(f"false negatives: {false_negatives} ({100 * false_negatives / max(directions, 1):.2f} % of directions)")
    print(f"unproven alarms: {unproven} ({100 * unproven / max(directions, 1):.2f} % of directions; "
          f"{100 * unproven / max(alarms, 1):.1f} % of the {alarms} directions called breaking); "
          f"besides, {inapplicable} on schemas a validator cannot apply (not counted)")
    print(json.dumps({"pairs": pairs, "false_negatives": false_negatives, "crashes": crashes, "probes": probes,
                      "alarms": alarms, "unproven_alarms": unproven, "inapplicable": inapplicable,
                      "false_negative_rate": round(false_negatives / max(directions, 1), 5),
                      "unproven_alarm_rate": round(unproven / max(directions, 1), 5),
                      "cross_draft": args.cross_draft}))


if __name__ == "__main__":
    main()
