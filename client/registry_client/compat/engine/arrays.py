"""Array keywords: prefixItems and items, item counts, uniqueItems, contains with minContains and
maxContains."""

from __future__ import annotations

from collections.abc import Callable

from ..model import Change
from .algebra import _key, _ptr, _refless, array_cap, is_false
from .refs import Ctx
from .scalars import _int_bound_changes
from .verdicts import _mask, _summary


def _array_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    out: list[Change] = []
    for keyword_changes in _ARRAY_KEYWORDS:
        out += keyword_changes(o, n, path, cx)
    return out


def _prefix_item_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    # A position listed on one side only is compared with `items` of the other.
    out: list[Change] = []
    pre_o = o.get("prefixItems") or []
    pre_n = n.get("prefixItems") or []
    it_o, it_n = o.get("items", {}), n.get("items", {})
    for k in range(max(len(pre_o), len(pre_n))):
        eo = pre_o[k] if k < len(pre_o) else it_o
        en = pre_n[k] if k < len(pre_n) else it_n
        where = _ptr(path, "prefixItems", k) if k < len(pre_n) or k < len(pre_o) else _ptr(path, "items")
        nested = _unreachable(cx.diff(eo, en, where, cx), k, o, n)
        if k < len(pre_o) and k < len(pre_n):
            out += nested
        elif nested:
            out.append(_summary(where, "prefix_item_added" if k < len(pre_n) else "prefix_item_removed", nested,
                                f"position {k} is now governed by {'its own schema' if k < len(pre_n) else 'items'}"))
    return out


def _unreachable(changes: list[Change], position: int, o: dict, n: dict) -> list[Change]:
    """A side whose arrays never reach `position` (maxItems, or a closed shorter tuple) cannot
    break a direction through what it says there: `{items: false}` and `{maxItems: 0}` are the
    same empty-array rule."""
    if not changes:
        return changes
    cap_o, cap_n = array_cap(o), array_cap(n)
    bb = cap_o is None or position < cap_o
    bf = cap_n is None or position < cap_n
    return changes if bb and bf else _mask(changes, bb, bf)


def _items_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    it_o, it_n = o.get("items", {}), n.get("items", {})
    first = max(len(o.get("prefixItems") or []), len(n.get("prefixItems") or []))
    nested = _unreachable(cx.diff(it_o, it_n, _ptr(path, "items"), cx), first, o, n)
    if nested and is_false(it_n) and not is_false(it_o):
        return [_summary(_ptr(path, "items"), "items_closed", nested, "no items beyond the listed positions are accepted any more")]
    if nested and is_false(it_o) and not is_false(it_n):
        return [_summary(_ptr(path, "items"), "items_opened", nested, "items beyond the listed positions are now accepted")]
    return nested


def _item_count_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    changes = _int_bound_changes(o, n, path, "minItems", "maxItems", "number of items")
    if not any(c.kind.startswith("max_items") for c in changes):
        return changes
    # maxItems against the most items each side can really hold (a closed tuple caps it too)
    inf = float("inf")
    cap_o, cap_n = array_cap(o), array_cap(n)
    cap_o, cap_n = inf if cap_o is None else cap_o, inf if cap_n is None else cap_n
    return [_mask([c], cap_n < cap_o, cap_o < cap_n)[0] if c.kind.startswith("max_items") else c for c in changes]


def _unique_items_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    uo, un = bool(o.get("uniqueItems")), bool(n.get("uniqueItems"))
    if uo == un:
        return []
    return [Change(_ptr(path, "uniqueItems"), "unique_items_added" if un else "unique_items_removed", un, uo,
                   "items must now be unique" if un else "items no longer need be unique")]


def _contains_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    """`contains` with its counts: the number of items matching it must lie in [minContains, maxContains]
    (1 and unbounded by default; both are ignored without `contains`)."""
    co, cn = o.get("contains"), n.get("contains")
    if co is None and cn is None:
        return []
    counts = [_count(s, kw, default) for s in (o, n) for kw, default in (("minContains", 1), ("maxContains", None))]
    if any(c is _BAD for c in counts):
        return [Change(_ptr(path, "minContains"), "unsupported_keyword", True, True,
                       "`minContains`/`maxContains` is not a non-negative integer here; treated as breaking both ways")]
    mo, xo, mn, xn = counts
    # a maximum no array can reach asserts nothing (maxContains 3 beside maxItems 3)
    cap_o, cap_n = array_cap(o), array_cap(n)
    xo = None if xo is not None and cap_o is not None and xo >= cap_o else xo
    xn = None if xn is not None and cap_n is not None and xn >= cap_n else xn
    if co is not None and cn is not None and _key(co) == _key(cn) and _refless(_key(co)) and (mo, xo) == (mn, xn):
        return []
    inner_bb = inner_bf = None  # does every item matching the source's schema match the target's?
    if co is not None and cn is not None:
        same = _key(co) == _key(cn) and _refless(_key(co))
        inner_bb = same or cx.sub(co, cn, cx)
        inner_bf = same or cx.sub(cn, co, cx.swapped())
    bb = not _counts_kept(co is not None, mo, xo, cn is not None, mn, xn, inner_bb, inner_bf)
    bf = not _counts_kept(cn is not None, mn, xn, co is not None, mo, xo, inner_bf, inner_bb)
    if not bb and not bf:
        return []
    where = _ptr(path, "contains")
    if co is None:
        return [Change(where, "contains_added", bb, bf, "some item must now match a schema")]
    if cn is None:
        return [Change(where, "contains_removed", bb, bf, "no item needs to match a schema any more")]
    if _key(co) == _key(cn):
        return [Change(_ptr(path, "minContains" if mo != mn else "maxContains"), "contains_count_changed", bb, bf,
                       f"the number of items matching `contains` must now lie in [{mn}, {xn if xn is not None else '∞'}] "
                       f"instead of [{mo}, {xo if xo is not None else '∞'}]")]
    return [Change(where, "contains_changed", bb, bf, "the schema some item must match changed"
                   + (" (with minContains/maxContains, a wider schema can count too many items)" if xo is not None or xn is not None else ""))]


_BAD = object()


def _count(s: dict, keyword: str, default):
    value = s.get(keyword, default)
    if value is None or value is default:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or not float(value).is_integer():
        return _BAD
    return int(value)


def _counts_kept(src_has: bool, src_min, src_max, dst_has: bool, dst_min, dst_max, src_in_dst, dst_in_src) -> bool:
    """Does every array valid under the source's contains-counts pass the target's?"""
    if not dst_has:
        return True  # counts without `contains` assert nothing
    if dst_min == 0 and dst_max is None:
        return True  # any number of matching items will do
    if not src_has:
        return False
    min_ok = dst_min <= src_min
    max_ok = dst_max is None or (src_max is not None and src_max <= dst_max)
    if src_in_dst and dst_in_src:  # the same items count on both sides
        return min_ok and max_ok
    if src_in_dst:  # at least as many items count under the target: its minimum holds, a maximum may not
        return min_ok and dst_max is None
    if dst_in_src:  # at most as many items count under the target: its maximum holds, a minimum may not
        return dst_min == 0 and max_ok
    return False


# The array keywords in the order their changes are reported (the order is part of the output).
_ARRAY_KEYWORDS: tuple[Callable[[dict, dict, str, Ctx], list[Change]], ...] = (
    _prefix_item_changes,
    _items_changes,
    _item_count_changes,
    _unique_items_changes,
    _contains_changes,
)
