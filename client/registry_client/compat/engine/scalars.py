"""Numbers and strings: bounds, multipleOf, lengths, pattern, format; and the integer bounds
(lengths, item and property counts) that strings, arrays and objects share."""

from __future__ import annotations

import math

from ..model import Change
from . import patterns
from .algebra import _is_int, _key, _num, _ptr, key_to_snake
from .refs import Ctx
from .vocabulary import NUMERIC


def _lower(s: dict):
    out = None
    if _num(s.get("minimum")):
        out = (s["minimum"], False)
    if _num(s.get("exclusiveMinimum")):
        x = s["exclusiveMinimum"]
        if out is None or x >= out[0]:
            out = (x, True)
    return out


def _upper(s: dict):
    out = None
    if _num(s.get("maximum")):
        out = (s["maximum"], False)
    if _num(s.get("exclusiveMaximum")):
        x = s["exclusiveMaximum"]
        if out is None or x <= out[0]:
            out = (x, True)
    return out


def _int_lower(b):
    return None if b is None else (math.floor(b[0]) + 1 if b[1] else math.ceil(b[0]), False)


def _int_upper(b):
    return None if b is None else (math.ceil(b[0]) - 1 if b[1] else math.floor(b[0]), False)


def _tighter_lower(new, old) -> bool:
    """Does the new lower bound refuse a number the old one allows?"""
    if new is None:
        return False
    if old is None:
        return True
    return new[0] > old[0] or (new[0] == old[0] and new[1] and not old[1])


def _tighter_upper(new, old) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    return new[0] < old[0] or (new[0] == old[0] and new[1] and not old[1])


def _bound_text(b, lower: bool) -> str:
    if b is None:
        return "none"
    sign = (">" if b[1] else "≥") if lower else ("<" if b[1] else "≤")
    return f"{sign} {b[0]}"


def _numeric_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    # Where a side admits integers only, its bounds are compared at the integers they let through.
    only_int_o = (ao & NUMERIC) == {"integer"}
    only_int_n = (an & NUMERIC) == {"integer"}
    out = []
    for lower in (True, False):
        change = _bound_change(o, n, path, lower, only_int_o, only_int_n)
        if change is not None:
            out.append(change)
    change = _multiple_of_change(o, n, path, only_int_o, only_int_n)
    if change is not None:
        out.append(change)
    return out


def _bound_change(o: dict, n: dict, path: str, lower: bool, only_int_o: bool, only_int_n: bool) -> Change | None:
    get = _lower if lower else _upper
    bo, bn = get(o), get(n)
    if bo == bn:
        return None
    tighter = _tighter_lower if lower else _tighter_upper
    conv = _int_lower if lower else _int_upper
    bb = tighter(conv(bn), conv(bo)) if only_int_o else tighter(bn, bo)
    bf = tighter(conv(bo), conv(bn)) if only_int_n else tighter(bo, bn)
    name = "minimum" if lower else "maximum"
    keyword = ("exclusiveMinimum" if lower else "exclusiveMaximum") if (bn or bo)[1] else name
    reason = f"the {'lower' if lower else 'upper'} bound changed from {_bound_text(bo, lower)} to {_bound_text(bn, lower)}"
    return Change(_ptr(path, keyword), _bound_kind(name, bo, bn, bb, bf), bb, bf, reason)


def _bound_kind(name: str, bo, bn, bb: bool, bf: bool) -> str:
    if bo is None:
        return f"{name}_added"
    if bn is None:
        return f"{name}_removed"
    if bb and not bf:
        return f"{name}_tightened"
    if bf and not bb:
        return f"{name}_relaxed"
    return f"{name}_restated"


def _multiple_of_change(o: dict, n: dict, path: str, only_int_o: bool, only_int_n: bool) -> Change | None:
    mo, mn = o.get("multipleOf"), n.get("multipleOf")
    if _key(mo) == _key(mn):
        return None
    bb = mn is not None and not (_divides(mn, mo) or (only_int_o and _is_int(mn) and int(mn) == 1))
    bf = mo is not None and not (_divides(mo, mn) or (only_int_n and _is_int(mo) and int(mo) == 1))
    kind = "multiple_of_added" if mo is None else "multiple_of_removed" if mn is None else "multiple_of_changed"
    reason = f"multipleOf changed from {mo} to {mn}"
    if bb:
        reason += "; a multiple of the old divisor need not be a multiple of the new one"
    if (mo is not None and not _is_int(mo)) or (mn is not None and not _is_int(mn)):
        reason += " (divisibility is only proved for integer divisors: validators divide non-integers in floating point)"
    return Change(_ptr(path, "multipleOf"), kind, bb, bf, reason)


def _divides(divisor, value) -> bool:
    """Is every multiple of `value` a multiple of `divisor`? (value None: any number.)"""
    if value is None or divisor is None:
        return divisor is None
    if _is_int(divisor) and _is_int(value):
        return int(value) % int(divisor) == 0
    return _key(divisor) == _key(value)


def _int_bound_changes(o, n, path, lo_key, hi_key, noun) -> list[Change]:
    out = []
    for key, lower in ((lo_key, True), (hi_key, False)):
        vo, vn = o.get(key), n.get(key)
        if _key(vo) == _key(vn):
            continue
        if lower:
            vo_, vn_ = (vo or 0), (vn or 0)
            bb, bf = vn_ > vo_, vo_ > vn_
        else:
            inf = float("inf")
            vo_, vn_ = (inf if vo is None else vo), (inf if vn is None else vn)
            bb, bf = vn_ < vo_, vo_ < vn_
        kind = f"{key_to_snake(key)}_{'tightened' if bb else 'relaxed' if bf else 'restated'}"
        out.append(Change(_ptr(path, key), kind, bb, bf, f"{noun} {'at least' if lower else 'at most'}: {vo} → {vn}"))
    return out


def _string_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    out = _int_bound_changes(o, n, path, "minLength", "maxLength", "string length")
    po, pn = o.get("pattern"), n.get("pattern")
    if po != pn:
        out.append(_pattern_change(po, pn, path))
    fo, fn = o.get("format"), n.get("format")
    if fo != fn:
        if fo is None:
            out.append(Change(_ptr(path, "format"), "format_added", True, False, f"strings must now be a valid {fn}"))
        elif fn is None:
            out.append(Change(_ptr(path, "format"), "format_removed", False, True, f"strings no longer need to be a valid {fo}"))
        else:
            out.append(Change(_ptr(path, "format"), "format_changed", True, True, f"the format changed from {fo} to {fn}"))
    return out


def _pattern_change(po, pn, path: str) -> Change:
    """Patterns in the common subset (literals, classes, alternation, bounded repetition, edge
    anchors) are compared as languages; any other pattern counts as breaking where it differs."""
    where = _ptr(path, "pattern")
    # no pattern accepts every string, as the empty pattern does
    old_in_new = _contained("" if po is None else po, "" if pn is None else pn)
    new_in_old = _contained("" if pn is None else pn, "" if po is None else po)
    bb, bf = old_in_new is not True, new_in_old is not True
    undecided = old_in_new is None or new_in_old is None
    unsure = " (the checker cannot compare this regular expression, so it is treated as breaking)" if undecided else ""
    if po is None:
        return Change(where, "pattern_added", bb, bf, f"strings must now match {pn!r}" + unsure)
    if pn is None:
        return Change(where, "pattern_removed", bb, bf,
                      f"strings no longer need to match {po!r}; readers on the old version reject the others" + unsure)
    if not bb and not bf:
        return Change(where, "pattern_restated", False, False, f"the pattern changed from {po!r} to {pn!r}, matching the same strings")
    kind = "pattern_widened" if bf and not bb else "pattern_narrowed" if bb and not bf else "pattern_changed"
    if undecided:
        detail = "; two regular expressions the checker cannot compare, so this is treated as breaking both ways"
    else:
        detail = {"pattern_widened": "; it matches strings the old one refuses",
                  "pattern_narrowed": "; it refuses strings the old one matched",
                  "pattern_changed": "; each matches strings the other refuses"}[kind]
    return Change(where, kind, bb, bf, f"the pattern changed from {po!r} to {pn!r}" + detail)


def _contained(a, b) -> bool | None:
    if not isinstance(a, str) or not isinstance(b, str):
        return a == b or None
    return patterns.contained(a, b)


def _below(upper, lower) -> bool:
    if upper is None or lower is None:
        return False
    return upper[0] < lower[0] or (upper[0] == lower[0] and (upper[1] or lower[1]))
