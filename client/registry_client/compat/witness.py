"""Witnesses: a document that shows a direction breaks, found within a budget of steps.

For each breaking change the report says whether the break is **proven** — a witness document
valid under one version and invalid under the other, for the direction the change breaks — or
**assumed**: the checker could not prove the direction safe (a keyword or pattern it cannot
decide, or a rule it leans on), and no witness turned up within the budget.

The documents come from the same generator the test oracle uses (`probes.probe_documents`) and
each is judged by the real validator of each version's declared draft (ECMA-262 patterns,
formats asserted). The search starts with probes aimed at each change's place (local candidates
put where the change's path leads, inside a document built from the rest of the schema), then
the general probes. A witness proves the direction; it is shown on a change when it was aimed
at that change, when the target version refuses it at that change's place (the failing keyword
lies under the change's path), or when the change is the only one breaking that direction.

The search is counted in steps (budget.py): every node of every document built or copied,
every node of every document judged (once per version), every error read back from a
validator. The documents are made one at a time and the budget is spent before each is
made, so the search stops within its budget on any schema (a budget of 0 builds nothing),
and what it holds in memory is bounded by what the budget lets it build.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import jsonschema

from . import ecma
from .budget import DEFAULT_WITNESS_BUDGET, Meter, OutOfSteps, time_guard, witness_steps
from .model import Change
from .probes import directed_documents, probe_documents, size_of

__all__ = ["DEFAULT_WITNESS_BUDGET", "attach_witnesses"]

WITNESSES_PER_DIRECTION = 8


def _validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return ecma.validator_class(cls)(schema, format_checker=ecma.format_checker(cls))


def _valid(validator, doc) -> bool | None:
    try:
        return validator.is_valid(doc)
    except Exception:
        return None


def _failing_places(validator, doc, meter: Meter) -> set[str]:
    """The schema locations (JSON pointers) of every keyword that refuses `doc`, nested ones included."""
    out: set[str] = set()
    try:
        stack = list(validator.iter_errors(doc))
        while stack and meter.spend():
            error = stack.pop()
            out.add("".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_schema_path))
            stack.extend(error.context or [])
    except Exception:
        pass
    return out


def _at(change: Change, places: set[str]) -> bool:
    return change.path == "" or any(p == change.path or p.startswith(change.path + "/") for p in places)


def _unproven(c: Change) -> Change:
    return replace(c, proof="undecided" if c.decided_by_budget else "assumed")


def attach_witnesses(old_schema, new_schema, changes: list[Change], budget: Meter | int | None = None,
                     directions: tuple[str, ...] = ("backward", "forward")) -> list[Change]:
    """Mark each breaking change proven (with its witness and direction), assumed, or undecided
    (a change a budget decided, without a witness).

    Only changes with `breaking` set are marked, and only a witness in one of `directions` (those
    the mode requires) proves one; the search spends at most `budget` steps (a Meter, to read the
    steps spent afterwards, or a number: None for budget.witness_steps(), 0 for no search)."""
    targets = [c for c in changes if c.breaking]
    if not targets:
        return changes
    meter = budget if isinstance(budget, Meter) else Meter(witness_steps(budget), time_guard())
    if meter.limit is not None and meter.limit <= 0:
        return [_unproven(c) if c.breaking else c for c in changes]  # no search: nothing is built
    try:
        old_v, new_v = _validator(old_schema), _validator(new_schema)
    except Exception:
        return [_unproven(c) if c.breaking else c for c in changes]
    wanted = {d for c in targets for d, on in (("backward", c.breaks_backward), ("forward", c.breaks_forward))
              if on and d in directions}
    found: dict[str, list] = {"backward": [], "forward": []}
    seen: set[str] = set()
    # first the probes aimed at each change's place, then the generator's general ones; both
    # build each document only when the loop asks for it, spending the meter first
    aimed = directed_documents(old_schema, new_schema, [c.path for c in targets], meter=meter)
    general = ((None, doc) for doc in probe_documents(old_schema, new_schema, meter=meter))
    try:
        for path, doc in itertools.chain(aimed, general):
            if all(len(found[d]) >= WITNESSES_PER_DIRECTION for d in wanted):
                break
            size = size_of(doc)
            if not meter.spend(size):  # its canonical text
                break
            key = json.dumps(doc, sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            if not meter.spend(2 * size):  # judged under each version
                break
            in_old, in_new = _valid(old_v, doc), _valid(new_v, doc)
            if in_old is None or in_new is None:
                continue
            if in_old and not in_new and "backward" in wanted and len(found["backward"]) < WITNESSES_PER_DIRECTION:
                found["backward"].append((doc, _failing_places(new_v, doc, meter) | ({path} if path is not None else set())))
            if in_new and not in_old and "forward" in wanted and len(found["forward"]) < WITNESSES_PER_DIRECTION:
                found["forward"].append((doc, _failing_places(old_v, doc, meter) | ({path} if path is not None else set())))
    except OutOfSteps:
        pass  # the generator ran out of steps before building its next document
    finally:
        seen.clear()
    breaking_in = {d: [c for c in targets if getattr(c, f"breaks_{d}")] for d in ("backward", "forward")}
    out = []
    for c in changes:
        if not c.breaking:
            out.append(c)
            continue
        proof = None
        for d in directions:
            if not getattr(c, f"breaks_{d}") or not found[d]:
                continue
            placed = [doc for doc, places in found[d] if _at(c, places)]
            if placed:
                proof = (placed[0], d)
            elif len(breaking_in[d]) == 1:
                proof = (found[d][0][0], d)
            if proof:
                break
        out.append(replace(c, proof="proven", witness=proof[0], witness_direction=proof[1]) if proof
                   else _unproven(c))
    return out
