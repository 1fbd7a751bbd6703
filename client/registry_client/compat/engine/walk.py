"""The walk: both schemas side by side, reference pairs settled as a fixed point, one family at a time."""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable

from ..budget import BUDGET_KINDS, Meter, OutOfSteps, compare_steps, time_guard
from ..model import Change
from . import arrays, generic, objects, scalars
from .algebra import _key, _ptr, _refless, atoms, flatten, is_false, lower_unevaluated
from .combinators import _combinator_changes
from .refs import Ctx, RefPair, Side, _resolve_refs
from .verdicts import _exact_override, _gate, _implied_by_alternatives, _implied_by_conjunct
from .vocabulary import NUMERIC, UNSUPPORTED_WHEN_PRESENT

# A keyword family's comparer: (old, new, path, context, old atoms, new atoms) -> its changes.
Comparer = Callable[[dict, dict, str, Ctx, frozenset, frozenset], list[Change]]

# The families of keywords that constrain a schema object itself, in the order their changes
# are reported (the order is part of the output). With a domain, a family only constrains
# those JSON types, and _gate clears a direction whose source admits none of them.
# The combinators come later, after the families' changes have been weighed against them.
FAMILIES: tuple[tuple[Comparer, frozenset | None], ...] = (
    (generic._type_changes, None),
    (generic._integer_only_changes, None),
    (generic._enum_changes, None),
    (scalars._numeric_changes, NUMERIC),
    (scalars._string_changes, frozenset({"string"})),
    (objects._object_changes, frozenset({"object"})),
    (arrays._array_changes, frozenset({"array"})),
    (generic._other_keyword_changes, None),
)


# How deep the walk may nest (schemas inside schemas, references followed in the report). Past it
# the place counts as decided by a budget: a fixed count, where Python's recursion limit would
# cut at a depth that depends on how deep the caller's own stack already is.
MAX_NESTING = 200
_FRAMES_PER_LEVEL = 16  # Python frames one level of the walk can take (a proof inside included)


def _frames() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def compare(old, new, budget: int | None = None, meter: Meter | None = None) -> list[Change]:
    """Every difference between two JSON Schemas, each with the directions it may break.

    Never raises for a schema: what the checker cannot read, or a failure inside it, is a
    `checker_error` change breaking both ways; what it cannot decide within `budget` steps
    (see budget.compare_steps) is a `budget_exceeded` change breaking both ways, and what the
    last-resort time guard stops is a `time_guard_exceeded` one. Pass `meter` to read the
    steps spent afterwards (its limit and guard are then used as given, `budget` ignored).
    """
    if meter is None:
        meter = Meter(compare_steps(budget), time_guard())
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _frames() + MAX_NESTING * _FRAMES_PER_LEVEL + 200))
    try:
        return _compare(old, new, meter)
    finally:
        sys.setrecursionlimit(limit)


def _compare(old, new, meter: Meter) -> list[Change]:
    try:
        if _key(old) == _key(new):
            return []  # the same document: nothing to decide
    except (TypeError, ValueError):
        pass
    try:
        left, right = Side(old, "old"), Side(new, "new")
    except Exception as exc:
        return [_error_change("", exc)]
    left.meter = right.meter = meter
    cx = Ctx(left, right)
    total = meter.limit
    # The fixed point gets 60 % of the steps and the reporting walk at least 30 % more, so what
    # was settled is still reported and the whole stays inside the budget.
    if total is not None:
        meter.limit = int(0.6 * total)
    cx.shared.update(diff=_diff, sub=_sub, meter=meter, budget=total)
    try:
        _settle(left, right, cx)
        if total is not None:  # the reporting walk gets its own share, so what was settled is reported
            meter.limit = max(meter.limit, meter.steps + int(0.3 * total))
        cx.shared["final"] = True
        changes = _diff(left.root, right.root, "", cx)
    except Exception as exc:  # pragma: no cover - _diff already turns failures into changes
        return [_error_change("", exc)]
    finally:
        if total is not None:
            meter.limit = total
    kinds = {c.kind for c in changes}
    if "error" in cx.shared and "checker_error" not in kinds:
        changes.append(_error_change(*cx.shared["error"]))
    if "over_budget" in cx.shared and not kinds & set(BUDGET_KINDS):
        changes.append(_budget_change(cx.shared["over_budget"], cx))
    return changes


def _settle(left: Side, right: Side, cx: Ctx) -> None:
    """The fixed point over reference pairs (see refs.Ctx), as a worklist.

    Each pair is expanded once, then again only when a pair it read moved; a pair moves at most
    twice (backward, then forward), so the work is linear in the size of the reference graph.
    (Re-expanding every pair until a round changes nothing costs a round per level of a chain
    of definitions: quadratic.) The answer is the same greatest fixed point: every pair's last
    expansion read the final state of every pair it depends on."""
    pairs = cx.shared["pairs"]
    # guard -> the guards whose expansion read it (directly, or through a memo). Dicts, not sets,
    # here and in "collect": a set of guards (which hold strings) iterates in a per-process order,
    # and the order of the worklist decides where a budget cuts the work.
    readers: dict = {}
    queue: deque = deque()
    queued: set = set()

    def push(guard) -> None:
        if guard not in queued:
            queued.add(guard)
            queue.append(guard)

    cx.shared["new_pair"] = push
    collect = cx.shared["collect"]
    while True:
        count = len(pairs)
        _diff(left.root, right.root, "", cx)  # meets the reference pairs reachable from the roots
        if len(pairs) == count and not queue:
            break
        while queue:
            guard = queue.popleft()
            queued.discard(guard)
            pair = pairs[guard]
            collect.append({})
            try:
                found = _expand(pair)
            finally:
                read = collect.pop()
            for other in read:
                readers.setdefault(other, {})[guard] = None
            bb = pair.bb or any(c.breaks_backward for c in found)
            bf = pair.bf or any(c.breaks_forward for c in found)
            if (bb, bf) != (pair.bb, pair.bf):
                pair.bb, pair.bf = bb, bf
                cx.memo.clear()
                for reader in readers.get(guard, ()):
                    push(reader)
    cx.shared["new_pair"] = None


def _error_change(path: str, exc: BaseException) -> Change:
    return Change(path, "checker_error", True, True,
                  f"breaking both ways: the checker could not decide ({type(exc).__name__}: {str(exc)[:200]})")


def _budget_change(path: str, cx: Ctx) -> Change:
    meter = cx.shared["meter"]
    if cx.shared.get("too_deep") and meter.left:
        return Change(path, "budget_exceeded", True, True,
                      f"not decided within {MAX_NESTING} levels of nesting: treated as breaking both ways")
    if meter.stopped_by == "time guard":
        return Change(path, "time_guard_exceeded", True, True,
                      f"not decided before the time guard ({meter.guard:g} s, a last resort far above the step "
                      "budget) stopped the checker: treated as breaking both ways")
    return Change(path, "budget_exceeded", True, True,
                  f"not decided within {cx.shared['budget']} steps: treated as breaking both ways")


def _expand(pair: RefPair, path: str = "") -> list[Change]:
    """Compare the two schemas a reference pair names (pairs met inside are read, not expanded)."""
    cx = pair.cx
    ro, err_o = _resolve_refs(pair.o, cx.left) if "$ref" in pair.o else (pair.o, None)
    rn, err_n = _resolve_refs(pair.n, cx.right) if "$ref" in pair.n else (pair.n, None)
    if err_o or err_n:
        return [Change(_ptr(path, "$ref"), "unresolvable_ref", True, True, (err_o or err_n) + "; treated as breaking both ways")]
    return _diff_resolved(ro, rn, path, cx)


def _sub(a: dict, b: dict, cx: Ctx) -> bool:
    """True only when every document valid under `a` (left side) is valid under `b` (right side)."""
    if not cx.shared["meter"].spend():
        cx.shared.setdefault("over_budget", "")
        return False  # not proved within the budget
    key = (id(cx.left), id(cx.right), _key(a), _key(b))
    collect = cx.shared["collect"]
    if key in cx.memo:
        result, read = cx.memo[key]
        if collect:
            collect[-1].update(dict.fromkeys(read))  # the answer rests on these pairs: so does the asker's
        return result
    cx.shared["proving"] += 1
    collect.append({})
    try:
        result = not any(c.breaks_backward for c in _diff(a, b, "", cx))
    finally:
        cx.shared["proving"] -= 1
        read = collect.pop()
    if collect:
        collect[-1].update(read)
    cx.memo[key] = (result, tuple(read))
    return result


def _diff(o, n, path: str, cx: Ctx) -> list[Change]:
    if not cx.shared["meter"].spend():
        cx.shared.setdefault("over_budget", path)
        return [_budget_change(path, cx)]
    if cx.shared["depth"] >= MAX_NESTING:
        cx.shared["too_deep"] = True
        cx.shared.setdefault("over_budget", path)
        return [_budget_change(path, cx)]
    cx.shared["depth"] += 1
    try:
        return _diff_checked(o, n, path, cx)
    except OutOfSteps:
        cx.shared.setdefault("over_budget", path)
        return [_budget_change(path, cx)]
    except Exception as exc:  # a failure is never a verdict: the path breaks both ways, and says why
        cx.shared.setdefault("error", (path, exc))
        return [_error_change(path, exc)]
    finally:
        cx.shared["depth"] -= 1


def _diff_checked(o, n, path: str, cx: Ctx) -> list[Change]:
    if not isinstance(o, dict) or not isinstance(n, dict):
        if _key(o) == _key(n):
            return []
        return [Change(path, "invalid_schema", True, True, "a schema here is neither an object nor a boolean, so the checker cannot compare it")]
    ko, kn = _key(o), _key(n)
    if ko == kn and _refless(ko):
        return []
    if "$ref" in o or "$ref" in n:
        return _reference_changes(o, n, ko, kn, path, cx)
    return _diff_resolved(o, n, path, cx)


def _reference_changes(o: dict, n: dict, ko: str, kn: str, path: str, cx: Ctx) -> list[Change]:
    """A pair with a $ref on either side: read from the table of reference pairs, which the
    fixed point in `compare` settles; only the final walk expands a differing pair, once."""
    guard = (id(cx.left), id(cx.right), ko, kn)
    pairs = cx.shared["pairs"]
    pair = pairs.get(guard)
    if cx.shared["collect"]:
        cx.shared["collect"][-1][guard] = None  # the expansion under way reads this pair's state
    if pair is None:
        pair = pairs[guard] = RefPair(o, n, cx)
        if cx.shared["new_pair"] is not None:
            cx.shared["new_pair"](guard)
        for side, node in ((cx.left, o), (cx.right, n)):
            if "$ref" in node and _resolve_refs(node, side)[1]:
                if ko == kn:
                    return []  # the same unresolvable reference on both sides
                pair.bb = pair.bf = True
    if cx.shared["final"] and not cx.shared["proving"]:
        reported = cx.shared["reported"]
        if guard not in reported and (pair.bb or pair.bf):
            reported[guard] = path
            return _expand(pair, path)
        if guard in reported:
            return [Change(path, "reference_changed", pair.bb, pair.bf,
                           f"the referenced schemas differ as reported at {reported[guard] or '/'}")]
    if not (pair.bb or pair.bf):
        return []
    return [Change(path, "reference_changed", pair.bb, pair.bf, "the schemas the references name differ")]


def _diff_resolved(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    o, n = lower_unevaluated(flatten(o)), lower_unevaluated(flatten(n))
    if "$ref" in o or "$ref" in n:  # a flattened allOf branch brought a $ref up
        return _diff(o, n, path, cx)

    ao, an = atoms(o), atoms(n)
    # A schema that contradicts itself for every type admits nothing: it is false, whatever it says.
    false_o, false_n = is_false(o) or not ao, is_false(n) or not an
    if false_o and false_n:
        return []
    if false_o:
        return [Change(path, "schema_opened", False, True, "nothing was valid here before; the new version accepts values the old one refuses")]
    if false_n:
        return [Change(path, "schema_closed", True, False, "the new version accepts nothing here, so any value the old one allowed now fails")]

    for kw in UNSUPPORTED_WHEN_PRESENT:
        if kw in o or kw in n:
            return [Change(_ptr(path, kw), "unsupported_keyword", True, True,
                           f"`{kw}` depends on every other keyword of the schema and the checker does not reason about it, so any change here is treated as breaking both ways")]

    changes: list[Change] = []
    for family, domain in FAMILIES:
        found = family(o, n, path, cx, ao, an)
        changes += found if domain is None else _gate(found, domain, ao, an)
    changes = _implied_by_conjunct(o, n, cx, changes)
    changes = _implied_by_alternatives(o, n, cx, changes)
    changes += _combinator_changes(o, n, path, cx)
    return _exact_override(o, n, path, cx, changes)
