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
reverse proves a forward break. Formats are asserted (format checker on) and
patterns read as ECMA-262, as the checker assumes.
"""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass, field

import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from registry_client.compat import ecma
from registry_client.compat.probes import BASE_VALUES, NAMES, directed_documents, probe_documents
from registry_client.compat.probes import dedupe as _dedupe
from registry_client.compat.probes import mutations as _mutations
from registry_client.compat.probes import walk_constants as _walk_constants

from .corpus import MISSING, Case

__all__ = ["BASE_VALUES", "NAMES", "Verdict", "_dedupe", "_mutations", "_walk_constants", "draw", "judge", "make_validator"]

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
    """The declared draft's own validator, formats asserted, patterns read as ECMA-262 (as JSON
    Schema defines them: `\\d` is [0-9], not every Unicode digit)."""
    cls = jsonschema.validators.validator_for(schema, default=Draft202012Validator)
    return ecma.validator_class(cls)(schema, format_checker=ecma.format_checker(cls))


def draw(schema, examples: int) -> list:
    """Documents drawn by hypothesis-jsonschema; [] when it cannot handle the schema."""
    if examples <= 0:
        return []
    out: list = []
    try:
        strategy = from_schema(copy.deepcopy(schema))  # it rewrites the schema it is given in place
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
          use_counterexamples: bool = True, aim_at: tuple[str, ...] = ()) -> Verdict:
    """Probe one case until both directions are shown broken or `max_probes` documents are spent.

    With use_counterexamples=False the hand-written counterexamples are left out, so the
    verdict shows what generated probes alone can prove. `aim_at` (change paths) adds the
    generator's probes aimed at those places first, as the report's witness search does.
    """
    verdict = Verdict(case)
    old_v, new_v = make_validator(case.old), make_validator(case.new)
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
        aimed = (doc for _, doc in directed_documents(case.old, case.new, aim_at))
        return itertools.chain(aimed, probe_documents(case.old, case.new, seeds=[*hand, *drawn], pool_limit=pool_limit))

    for doc in probes():
        if check(doc) or verdict.probes >= max_probes:
            break
    return verdict
