"""The walk: both schemas side by side, reference pairs settled as a fixed point, one family at a time."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

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


DEFAULT_BUDGET = 0.5  # seconds per comparison
BUDGET_ENV = "REGISTRY_COMPAT_BUDGET"


def budget_seconds(budget: float | None = None) -> float | None:
    """The time budget of one comparison: the argument, else $REGISTRY_COMPAT_BUDGET, else 0.5 s;
    0 or a negative number (or `none`) means unbounded."""
    if budget is None:
        text = os.environ.get(BUDGET_ENV, "").strip().lower()
        if text in ("none", "off", "unbounded"):
            return None
        try:
            budget = float(text) if text else DEFAULT_BUDGET
        except ValueError:
            budget = DEFAULT_BUDGET
    return budget if budget > 0 else None


def compare(old, new, budget: float | None = None) -> list[Change]:
    """Every difference between two JSON Schemas, each with the directions it may break.

    Never raises for a schema: what the checker cannot read, or a failure inside it, is a
    `checker_error` change breaking both ways; what it cannot decide within `budget` seconds
    (see budget_seconds) is a `budget_exceeded` change breaking both ways.
    """
    seconds = budget_seconds(budget)
    try:
        if _key(old) == _key(new):
            return []  # the same document: nothing to decide
    except (TypeError, ValueError):
        pass
    try:
        left, right = Side(old, "old"), Side(new, "new")
    except Exception as exc:
        return [_error_change("", exc)]
    cx = Ctx(left, right)
    start = time.monotonic()
    # The fixed point gets 60 % of the budget and the reporting walk at least 30 % more, so what
    # was settled is still reported and the whole stays inside the budget (plus the work between
    # two checks of the clock).
    cx.shared.update(diff=_diff, sub=_sub, budget=seconds, deadline=None if seconds is None else start + 0.6 * seconds)
    try:
        _settle(left, right, cx)
        if seconds is not None:  # the reporting walk gets its own share, so what was settled is reported
            cx.shared["deadline"] = max(cx.shared["deadline"], time.monotonic() + 0.3 * seconds)
        cx.shared["final"] = True
        changes = _diff(left.root, right.root, "", cx)
    except Exception as exc:  # pragma: no cover - _diff already turns failures into changes
        return [_error_change("", exc)]
    kinds = {c.kind for c in changes}
    if "error" in cx.shared and "checker_error" not in kinds:
        changes.append(_error_change(*cx.shared["error"]))
    if "over_budget" in cx.shared and "budget_exceeded" not in kinds:
        changes.append(_budget_change(cx.shared["over_budget"], cx))
    return changes


def _settle(left: Side, right: Side, cx: Ctx) -> None:
    """The fixed point over reference pairs (see refs.Ctx)."""
    pairs = cx.shared["pairs"]
    while True:
        count = len(pairs)
        _diff(left.root, right.root, "", cx)  # meets the reference pairs reachable from the roots
        if len(pairs) == count:
            break
        moved = True
        while moved:
            count = len(pairs)
            moved = False
            for pair in list(pairs.values()):  # pairs met during a round join the next one
                found = _expand(pair)
                bb = pair.bb or any(c.breaks_backward for c in found)
                bf = pair.bf or any(c.breaks_forward for c in found)
                if (bb, bf) != (pair.bb, pair.bf):
                    pair.bb, pair.bf = bb, bf
                    cx.memo.clear()
                    moved = True
            moved = moved or len(pairs) != count


def _error_change(path: str, exc: BaseException) -> Change:
    return Change(path, "checker_error", True, True,
                  f"breaking both ways: the checker could not decide ({type(exc).__name__}: {str(exc)[:200]})")


def _budget_change(path: str, cx: Ctx) -> Change:
    return Change(path, "budget_exceeded", True, True,
                  f"not decided within the budget ({cx.shared['budget']:g} s): treated as breaking both ways")


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
    deadline = cx.shared["deadline"]
    if deadline is not None and time.monotonic() > deadline:
        cx.shared.setdefault("over_budget", "")
        return False  # not proved within the budget
    key = (id(cx.left), id(cx.right), _key(a), _key(b))
    if key in cx.memo:
        return cx.memo[key]
    cx.shared["proving"] += 1
    try:
        result = not any(c.breaks_backward for c in _diff(a, b, "", cx))
    finally:
        cx.shared["proving"] -= 1
    cx.memo[key] = result
    return result


def _diff(o, n, path: str, cx: Ctx) -> list[Change]:
    deadline = cx.shared["deadline"]
    if deadline is not None and time.monotonic() > deadline:
        cx.shared.setdefault("over_budget", path)
        return [_budget_change(path, cx)]
    try:
        return _diff_checked(o, n, path, cx)
    except Exception as exc:  # a failure is never a verdict: the path breaks both ways, and says why
        cx.shared.setdefault("error", (path, exc))
        return [_error_change(path, exc)]


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
    if pair is None:
        pair = pairs[guard] = RefPair(o, n, cx)
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
