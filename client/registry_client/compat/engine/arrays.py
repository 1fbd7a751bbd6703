"""Array keywords: prefixItems and items, item counts, uniqueItems, contains (minContains and
maxContains are not reasoned about)."""

from __future__ import annotations

from collections.abc import Callable

from ..model import Change
from .algebra import _key, _ptr, _refless, is_false
from .refs import Ctx
from .scalars import _int_bound_changes
from .verdicts import _summary


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
        nested = cx.diff(eo, en, where, cx)
        if k < len(pre_o) and k < len(pre_n):
            out += nested
        elif nested:
            out.append(_summary(where, "prefix_item_added" if k < len(pre_n) else "prefix_item_removed", nested,
                                f"position {k} is now governed by {'its own schema' if k < len(pre_n) else 'items'}"))
    return out


def _items_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    it_o, it_n = o.get("items", {}), n.get("items", {})
    nested = cx.diff(it_o, it_n, _ptr(path, "items"), cx)
    if nested and is_false(it_n) and not is_false(it_o):
        return [_summary(_ptr(path, "items"), "items_closed", nested, "no items beyond the listed positions are accepted any more")]
    if nested and is_false(it_o) and not is_false(it_n):
        return [_summary(_ptr(path, "items"), "items_opened", nested, "items beyond the listed positions are now accepted")]
    return nested


def _item_count_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    return _int_bound_changes(o, n, path, "minItems", "maxItems", "number of items")


def _unique_items_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    uo, un = bool(o.get("uniqueItems")), bool(n.get("uniqueItems"))
    if uo == un:
        return []
    return [Change(_ptr(path, "uniqueItems"), "unique_items_added" if un else "unique_items_removed", un, uo,
                   "items must now be unique" if un else "items no longer need be unique")]


def _contains_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    co, cn = o.get("contains"), n.get("contains")
    if co is None and cn is None:
        return []
    where = _ptr(path, "contains")
    if co is not None and cn is not None:
        if _key(co) != _key(cn) or not _refless(_key(co)):
            bb = not cx.sub(co, cn, cx)
            bf = not cx.sub(cn, co, cx.swapped())
            if bb or bf:
                return [Change(where, "contains_changed", bb, bf, "the schema some item must match changed")]
        return []
    if cn is not None:
        return [Change(where, "contains_added", True, False, "some item must now match a schema")]
    return [Change(where, "contains_removed", False, True, "no item needs to match a schema any more")]


def _contains_count_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    for kw in ("minContains", "maxContains"):
        if _key(o.get(kw)) != _key(n.get(kw)):
            out.append(Change(_ptr(path, kw), "unsupported_keyword", True, True, f"`{kw}` changed; the checker does not reason about it, so it is treated as breaking both ways"))
    return out


# The array keywords in the order their changes are reported (the order is part of the output).
_ARRAY_KEYWORDS: tuple[Callable[[dict, dict, str, Ctx], list[Change]], ...] = (
    _prefix_item_changes,
    _items_changes,
    _item_count_changes,
    _unique_items_changes,
    _contains_changes,
    _contains_count_changes,
)
