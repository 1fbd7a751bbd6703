"""The probe oracle: proves a corpus label with documents and the real `jsonschema` validator.

For a case (old, new) it builds probe documents from both versions:

1. documents drawn by hypothesis-jsonschema from each schema (it only knows
   Draft 7 keywords, so a draw proves nothing by itself: every probe is judged
   by the real validator under both schemas);
2. targeted values: every constant in either schema, each numeric bound and
   its neighbours, strings and arrays just inside and outside each length;
3. mutations of the probes above and of the case's hand-written
   counterexamples: a value replaced, a key dropped or added, an item added.

A probe valid under old and invalid under new proves a backward break; the
reverse proves a forward break. Formats are asserted (format checker on),
as the checker assumes.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field

import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from .corpus import MISSING, Case

BASE_VALUES = [
    None, True, False, 0, 1, -1, 2, 3, 4, 5, 6, 7, 10, 11, 15, 50, 100, 2000, -5, 0.5, 1.5, 2.5, -0.5,
    "", "a", "b", "c", "x", "z", "A", "A1", "a1", "ab", "abc", "abcd", "abcde", "abcdefg", "123",
    "2024-01-31", "2024-01-31T10:00:00Z", "yesterday", "user@example.com", "https://example.com/a",
    [], [1], [1, 1], ["a"], ["a", 1], ["a", "b"], [1.5], {}, {"a": 1},
]
NAMES = ["a", "b", "c", "v", "x1", "x2", "x_1", "v_1", "z", "A", "abcd", "anything", "kind", "t", "value", "children", "next", "id", "ref"]


@dataclass
class Verdict:
    case: Case
    probes: int = 0
    backward_witness: object = MISSING
    forward_witness: object = MISSING
    generated_from: list[str] = field(default_factory=list)

    @property
    def found_backward(self) -> bool:
        return self.backward_witness is not MISSING

    @property
    def found_forward(self) -> bool:
        return self.forward_witness is not MISSING

    def proved_by_hand(self, direction: str) -> bool:
        """Does the case's hand-written counterexample show a break in `direction`?"""
        doc = self.case.counterexample(direction)
        if doc is MISSING:
            return False
        source, target = (self.case.old, self.case.new) if direction == "backward" else (self.case.new, self.case.old)
        return make_validator(source).is_valid(doc) and not make_validator(target).is_valid(doc)

    def disagreements(self) -> list[str]:
        """Ways the oracle contradicts the label; an empty list means the label is proved."""
        out = []
        c = self.case
        for direction, claimed, found, witness in (
            ("backward", c.breaks_backward, self.found_backward, self.backward_witness),
            ("forward", c.breaks_forward, self.found_forward, self.forward_witness),
        ):
            if found and not claimed:
                out.append(f"{c.id}: the label says {direction} is safe, but {json.dumps(witness)} breaks it")
            if claimed and not found and not self.proved_by_hand(direction):
                out.append(f"{c.id}: the label claims a {direction} break that neither the probes nor a hand-written counterexample show")
        return out


def make_validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _walk_constants(node, out: list, names: set):
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
                _walk_constants(v, out, names)
    elif isinstance(node, list):
        for v in node:
            _walk_constants(v, out, names)


def _dedupe(values: list) -> list:
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


def _mutations(doc, pool: list, names: list, limit: int):
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


def draw(schema, examples: int) -> list:
    """Documents drawn by hypothesis-jsonschema; [] when it cannot handle the schema."""
    if examples <= 0:
        return []
    out: list = []
    try:
        strategy = from_schema(schema)
    except Exception:
        return []

    @settings(max_examples=examples, database=None, deadline=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        out.append(value)

    try:
        collect()
    except Exception:
        pass
    return out


def judge(case: Case, examples: int = 20, max_probes: int = 6000, pool_limit: int = 60,
          use_counterexamples: bool = True) -> Verdict:
    """Probe one case until both directions are shown broken or `max_probes` documents are spent.

    With use_counterexamples=False the hand-written counterexamples are left out, so the
    verdict shows what generated probes alone can prove.
    """
    verdict = Verdict(case)
    old_v, new_v = make_validator(case.old), make_validator(case.new)
    constants: list = []
    names: set = set(NAMES)
    _walk_constants([case.old, case.new], constants, names)
    pool = _dedupe(constants + BASE_VALUES)[:pool_limit]
    name_list = sorted(names)[:40]
    seen: set = set()

    def check(doc) -> bool:
        key = json.dumps(doc, sort_keys=True, default=str)
        if key in seen:
            return False
        seen.add(key)
        verdict.probes += 1
        try:
            in_old = old_v.is_valid(doc)
            in_new = new_v.is_valid(doc)
        except Exception:
            return False
        if in_old and not in_new and not verdict.found_backward:
            verdict.backward_witness = doc
        if in_new and not in_old and not verdict.found_forward:
            verdict.forward_witness = doc
        return verdict.found_backward and verdict.found_forward

    hand = [case.counterexample(d) for d in ("backward", "forward")]
    hand = [h for h in hand if h is not MISSING] if use_counterexamples else []
    drawn = []
    for schema in (case.old, case.new):
        got = draw(schema, examples)
        if got:
            verdict.generated_from.append("hypothesis")
        drawn.extend(got)

    def probes():
        yield from hand
        yield from drawn
        yield from pool
        for name in name_list:
            for v in pool[:12]:
                yield {name: v}
        for seed in [*hand, *drawn]:
            yield from _mutations(seed, pool, name_list, pool_limit)
        for seed in pool:
            if isinstance(seed, dict | list):
                yield from _mutations(seed, pool, name_list, pool_limit)

    for doc in probes():
        if check(doc) or verdict.probes >= max_probes:
            break
    return verdict
