"""The combinators: allOf leftovers, anyOf/oneOf alternatives, not, if/then/else; and the
disjointness proofs that oneOf and not need."""

from __future__ import annotations

import math

from ..model import Change
from .algebra import (
    _finite_values,
    _key,
    _ptr,
    _refless,
    _units,
    atoms,
    flatten,
    is_false,
    key_to_snake,
    merge,
)
from .objects import _effective
from .refs import Ctx, _resolve_refs
from .scalars import _below, _int_lower, _int_upper, _lower, _upper
from .verdicts import _mask
from .vocabulary import GROUP_KEYS, NUMERIC


def _combinator_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    return (_all_of_changes(o, n, path, cx) + _alternatives_changes(o, n, path, cx)
            + _not_changes(o, n, path, cx) + _conditional_changes(o, n, path, cx))


def _all_of_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    # allOf leftovers (the mergeable branches were folded in by flatten)
    lo, ln = o.get("allOf") or [], n.get("allOf") or []
    if lo or ln:
        base_o = {k: v for k, v in o.items() if k != "allOf"}
        base_n = {k: v for k, v in n.items() if k != "allOf"}
        for j, b in enumerate(ln):
            if not any(cx.sub(a, b, cx) for a in [*lo, base_o]):
                out.append(Change(_ptr(path, "allOf", j), "all_of_constraint_tightened", True, False,
                                  f"allOf branch {j} of the new version is not implied by the old version"))
        for i, a in enumerate(lo):
            if not any(cx.sub(b, a, cx.swapped()) for b in [*ln, base_n]):
                out.append(Change(_ptr(path, "allOf", i), "all_of_constraint_relaxed", False, True,
                                  f"allOf branch {i} of the old version is not implied by the new version"))
    return out


def _alternatives_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    for key in ("anyOf", "oneOf"):
        bo, bn = o.get(key), n.get(key)
        if bo is None and bn is None:
            continue
        if _key(bo) == _key(bn) and _refless(_key(bo)):
            continue
        out += _branch_changes(o, n, key, path, cx)
    return out


def _same_branches(bo, bn, cx: Ctx) -> bool:
    """Each old branch equivalent to its own new branch (in any order): the same alternatives,
    however much they overlap."""
    if not isinstance(bo, list) or not isinstance(bn, list) or len(bo) != len(bn) or len(bo) > 12:
        return False
    left = list(range(len(bn)))
    for a in bo:
        match = next((j for j in left if cx.sub(a, bn[j], cx) and cx.sub(bn[j], a, cx.swapped())), None)
        if match is None:
            return False
        left.remove(match)
    return True


def _branch_changes(o: dict, n: dict, key: str, path: str, cx: Ctx) -> list[Change]:
    out = []
    exclusive = key == "oneOf"
    bo, bn = o.get(key), n.get(key)
    if _same_branches(bo, bn, cx):
        return [Change(_ptr(path, key), f"{key_to_snake(key)}_restated", False, False,
                       f"the {key} branches changed without changing which documents are valid")]
    if bn is not None:  # backward: every old alternative must land in the new ones
        units, source_key = _units(o)
        for i, u in enumerate(units):
            if not _lands(u, bn, exclusive, cx):
                where = _ptr(path, key, min(i, len(bn) - 1)) if bo is not None else _ptr(path, key)
                what = f"old {source_key} branch {i}" if source_key else "the old schema"
                how = "exactly one branch" if exclusive else "any branch"
                detail = _branch_detail(bo, bn, i, path, key, cx, backward=True)
                out.append(Change(where, f"{key_to_snake(key)}_branch_narrowed" if bo is not None else f"{key_to_snake(key)}_added", True, False,
                                  f"{what} is not accepted by {how} of the new {key}" + detail))
    if bo is not None:  # forward: every new alternative must land in the old ones
        units, source_key = _units(n)
        for j, u in enumerate(units):
            if not _lands(u, bo, exclusive, cx.swapped()):
                where = _ptr(path, key, min(j, len(bn) - 1)) if bn is not None else _ptr(path, key)
                what = f"new {source_key} branch {j}" if source_key else "the new schema"
                how = "exactly one branch" if exclusive else "any branch"
                detail = _branch_detail(bn, bo, j, path, key, cx.swapped(), backward=False)
                out.append(Change(where, f"{key_to_snake(key)}_branch_widened" if bn is not None else f"{key_to_snake(key)}_removed", False, True,
                                  f"{what} is not accepted by {how} of the old {key}" + detail))
    if not out and _key(bo) != _key(bn):
        out.append(Change(_ptr(path, key), f"{key_to_snake(key)}_restated", False, False, f"the {key} branches changed without changing which documents are valid"))
    return out


def _branch_detail(src, dst, i, path, key, cx, backward: bool) -> str:
    if cx.shared["proving"]:
        return ""  # inside a containment proof nobody reads the wording: skip the extra walk
    if not isinstance(src, list) or not isinstance(dst, list) or i >= len(src) or i >= len(dst):
        return ""
    a, b = (src[i], dst[i])
    nested = cx.diff(a, b, "", cx)
    reasons = [c.reason for c in nested if c.breaks_backward]
    return f" (against branch {i}: {reasons[0]})" if reasons else ""


def _lands(unit: dict, branches: list, exclusive: bool, cx: Ctx) -> bool:
    for j, b in enumerate(branches):
        if not cx.sub(unit, b, cx):
            continue
        if not exclusive:
            return True
        if all(_disjoint(unit, other, cx) for k, other in enumerate(branches) if k != j):
            return True
    return _covered_by_ranges(unit, branches, exclusive, cx)


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _covered_by_ranges(unit: dict, branches: list, exclusive: bool, cx: Ctx) -> bool:
    """An integer alternative that no single branch holds may still lie in their union: branches
    that hold it but for their bounds, whose integer ranges together cover its range (one
    branch split in two, two adjacent ranges merged). For oneOf those ranges must not overlap
    and every other branch must be disjoint from the alternative."""
    if atoms(unit) != frozenset({"integer"}) or len(branches) < 2:
        return False
    if any(not isinstance(b, dict) or "$ref" in b for b in branches):
        return False
    ranges, others = [], []
    for b in branches:
        loose = {k: v for k, v in b.items() if k not in _BOUNDS}
        if atoms(b) & NUMERIC and cx.sub(unit, loose, cx):
            ranges.append((b, _int_range(b)))
        else:
            others.append(b)
    if len(ranges) < 2:
        return False
    lo, hi = _int_range(unit)
    reach = lo  # every integer below `reach` (from the unit's lowest) is covered
    for b_lo, b_hi in sorted((r for _, r in ranges), key=lambda r: -math.inf if r[0] is None else r[0]):
        if b_lo is not None and (reach is None or b_lo > reach):
            break  # a gap
        if b_hi is None:
            reach = math.inf
            break
        reach = b_hi + 1 if reach is None else max(reach, b_hi + 1)
    if reach is None or (hi is None and reach != math.inf) or (hi is not None and reach <= hi):
        return False
    if exclusive:
        bs = [b for b, _ in ranges]
        if not all(_disjoint(a, b, cx) for i, a in enumerate(bs) for b in bs[i + 1:]):
            return False
        if not all(_disjoint(unit, b, cx) for b in others):
            return False
    return True


def _int_range(s: dict) -> tuple:
    """The integers a schema's bounds admit, as (lowest, highest); None where unbounded."""
    lo, hi = _int_lower(_lower(s)), _int_upper(_upper(s))
    return (None if lo is None else lo[0]), (None if hi is None else hi[0])


def _disjoint(a: dict, b: dict, cx: Ctx, depth: int = 0) -> bool:
    """True only when no document is valid under both (a on the left side, b on the right)."""
    if depth > 8:
        return False
    if "$ref" in a:
        a, err = _resolve_refs(a, cx.left)
        if err:
            return False
    if "$ref" in b:
        b, err = _resolve_refs(b, cx.right)
        if err:
            return False
    a, b = flatten(a), flatten(b)
    if is_false(a) or is_false(b):
        return True
    shared = atoms(a) & atoms(b)
    if not shared:
        return True
    if _disjoint_by_values(a, b, cx):
        return True
    if shared <= {"object"} and _disjoint_objects(a, b, cx, depth):
        return True
    if shared <= NUMERIC and _disjoint_ranges(a, b):
        return True
    return False


def _disjoint_by_values(a: dict, b: dict, cx: Ctx) -> bool:
    """Either side a finite set of values, none of which the other side accepts."""
    for s, other, s_side, o_side in ((a, b, cx.left, cx.right), (b, a, cx.right, cx.left)):
        values = _finite_values(s)
        if values is not None:
            decided = []
            for v in values:
                if s_side.valid_or_none(v, s) is not True:
                    continue
                decided.append(o_side.valid_or_none(v, other))
            if all(ok is False for ok in decided):
                return True
    return False


def _disjoint_objects(a: dict, b: dict, cx: Ctx, depth: int) -> bool:
    """A property one side requires that the other refuses, or both require with disjoint values."""
    req_a = set(a.get("required") or [])
    req_b = set(b.get("required") or [])
    for name in sorted(req_a | req_b, key=str):  # a fixed order: the steps spent must not vary
        ea, eb = _effective(a, name), _effective(b, name)
        if name in req_a and name in req_b and _disjoint(ea, eb, cx, depth + 1):
            return True
        if name in req_a and is_false(eb) or name in req_b and is_false(ea):
            return True
    return False


def _disjoint_ranges(a: dict, b: dict) -> bool:
    la, ua, lb, ub = _lower(a), _upper(a), _lower(b), _upper(b)
    return _below(ua, lb) or _below(ub, la)


def _not_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    no, nn = o.get("not"), n.get("not")
    if no is None and nn is None:
        return []
    where = _ptr(path, "not")
    if no is not None and nn is not None:
        if _key(no) == _key(nn) and _refless(_key(no)):
            return []
        bb = not cx.sub(nn, no, cx.swapped())
        bf = not cx.sub(no, nn, cx)
        if not bb and not bf:
            return []
        return [Change(where, "not_changed", bb, bf, "the schema documents must not match changed" + (
            "; documents the old version allowed can match the new excluded schema" if bb else ""))]
    if nn is not None:
        rest = {k: v for k, v in o.items() if k != "not"}
        bb = not _disjoint(rest, nn, cx)
        return [Change(where, "not_added", bb, False, "documents matching a further schema are now refused")]
    rest = {k: v for k, v in n.items() if k != "not"}
    bf = not _disjoint(rest, no, cx.swapped())
    return [Change(where, "not_removed", False, bf, "documents matching the formerly excluded schema are now accepted")]


def _conditional_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    if not any(k in o or k in n for k in GROUP_KEYS):
        return []
    io, in_ = o.get("if"), n.get("if")
    then_o, then_n = o.get("then", {}), n.get("then", {})
    else_o, else_n = o.get("else", {}), n.get("else", {})
    rest_o = {k: v for k, v in o.items() if k not in GROUP_KEYS}
    rest_n = {k: v for k, v in n.items() if k not in GROUP_KEYS}
    if io is not None and in_ is not None and _same_condition(io, in_, rest_o, rest_n, cx):
        # The condition partitions the values: `then` is only ever applied where `if` holds (and
        # the rest of the schema with it), `else` where it does not; each is compared on its part.
        out = []
        for key, part, so, sn in (("then", io, then_o, then_n), ("else", {"not": io}, else_o, else_n)):
            found = cx.diff(so, sn, _ptr(path, key), cx)
            if any(c.breaks_backward for c in found) and cx.sub(merge(merge(rest_o, part), so), sn, cx):
                found = _mask(found, False, True)
            if any(c.breaks_forward for c in found) and cx.sub(merge(merge(rest_n, part), sn), so, cx.swapped()):
                found = _mask(found, True, False)
            out += found
        return out
    out = []
    if in_ is not None:
        bb = not (cx.sub(rest_o, then_n, cx) and cx.sub(rest_o, else_n, cx))
        bf = io is not None
        if io is not None:
            # different conditions: safe when the source satisfies both outcomes whatever the
            # condition, or as what the two mean, (if ∧ then) ∨ (¬if ∧ else)
            bb = not (cx.sub(rest_o, then_n, cx) and cx.sub(rest_o, else_n, cx)) and not cx.sub(
                _as_cases(rest_o, io, then_o, else_o), _as_cases(rest_n, in_, then_n, else_n), cx)
            bf = not (cx.sub(rest_n, then_o, cx.swapped()) and cx.sub(rest_n, else_o, cx.swapped())) and not cx.sub(
                _as_cases(rest_n, in_, then_n, else_n), _as_cases(rest_o, io, then_o, else_o), cx.swapped())
            if not bb and not bf:
                return [Change(_ptr(path, "if"), "conditional_restated", False, False,
                               "the if/then/else condition was rewritten without changing which documents are valid")]
        out.append(Change(_ptr(path, "if"), "conditional_added" if io is None else "conditional_changed", bb, bf,
                          "an if/then/else condition was " + ("added" if io is None else "changed")))
        return out
    if io is not None:
        bf = not (cx.sub(rest_n, then_o, cx.swapped()) and cx.sub(rest_n, else_o, cx.swapped()))
        out.append(Change(_ptr(path, "if"), "conditional_removed", False, bf, "an if/then/else condition was removed"))
    return out


def _same_condition(io, in_, rest_o: dict, rest_n: dict, cx: Ctx) -> bool:
    """Do the two conditions select the same documents, among those the rest of each schema
    admits? (Equal texts do; so do conditions that differ only where the rest rules it out, as
    an array keyword in the condition of an object schema.) Conditions with references are only
    equal as texts."""
    if _key(io) == _key(in_):
        return _refless(_key(io))
    if not (_refless(_key(io)) and _refless(_key(in_))):
        return False
    return all((cx.sub(merge(rest, a), b, cx) and cx.sub(merge(rest, b), a, cx))
               for rest in (rest_o, rest_n) for a, b in ((io, in_),))


def _as_cases(rest: dict, cond, then, otherwise) -> dict:
    """if/then/else as the two cases it stands for, beside the rest of the schema."""
    return merge(rest, {"anyOf": [merge(cond, then), merge({"not": cond}, otherwise)]})
