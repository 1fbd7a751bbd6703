"""Settling directions once the keyword families have spoken: masks, gates, exact decisions, summaries."""

from __future__ import annotations

import json
from dataclasses import replace

from ..model import Change
from .algebra import _finite_values, _units
from .refs import Ctx
from .vocabulary import COMBINATORS


def _implied_by_alternatives(o: dict, n: dict, cx: Ctx, changes: list[Change]) -> list[Change]:
    """When every alternative (anyOf/oneOf branch) of the old side implies the new side's own
    keywords, those keyword changes cannot break backward; the mirror image for forward."""
    if not changes:
        return changes
    bb_ok = bf_ok = False
    if any(c.breaks_backward for c in changes) and ("anyOf" in o or "oneOf" in o):
        n_base = {k: v for k, v in n.items() if k not in COMBINATORS}
        bb_ok = all(cx.sub(u, n_base, cx) for u in _units(o)[0])
    if any(c.breaks_forward for c in changes) and ("anyOf" in n or "oneOf" in n):
        o_base = {k: v for k, v in o.items() if k not in COMBINATORS}
        bf_ok = all(cx.sub(u, o_base, cx.swapped()) for u in _units(n)[0])
    if bb_ok or bf_ok:
        return _mask(changes, not bb_ok, not bf_ok)
    return changes


def _implied_by_conjunct(o: dict, n: dict, cx: Ctx, changes: list[Change]) -> list[Change]:
    """When one leftover allOf branch of the old side alone implies the new side's own keywords,
    those keyword changes cannot break backward (and the mirror image for forward)."""
    if not changes:
        return changes
    lo, ln = o.get("allOf") or [], n.get("allOf") or []
    n_base = {k: v for k, v in n.items() if k not in COMBINATORS}
    o_base = {k: v for k, v in o.items() if k not in COMBINATORS}
    bb_ok = bool(lo) and any(c.breaks_backward for c in changes) and any(cx.sub(a, n_base, cx) for a in lo)
    bf_ok = bool(ln) and any(c.breaks_forward for c in changes) and any(cx.sub(b, o_base, cx.swapped()) for b in ln)
    if bb_ok or bf_ok:
        return _mask(changes, not bb_ok, not bf_ok)
    return changes


def _gate(changes: list[Change], domain, ao: frozenset, an: frozenset) -> list[Change]:
    """Keywords that only constrain one JSON type cannot break a direction whose source excludes it."""
    bb_relevant = bool(ao & frozenset(domain))
    bf_relevant = bool(an & frozenset(domain))
    if bb_relevant and bf_relevant:
        return changes
    return [replace(c, breaks_backward=c.breaks_backward and bb_relevant,
                    breaks_forward=c.breaks_forward and bf_relevant) for c in changes]


def _exact_override(o: dict, n: dict, path: str, cx: Ctx, changes: list[Change]) -> list[Change]:
    """Where one side is a finite set of values, decide its direction by validating each value."""
    for direction in ("backward", "forward"):
        src, dst, s_side, d_side = (o, n, cx.left, cx.right) if direction == "backward" else (n, o, cx.right, cx.left)
        values = _finite_values(src)
        if values is None:
            continue
        verdicts = []
        for v in values:
            if s_side.valid_or_none(v, src) is not True:
                continue
            verdicts.append((v, d_side.valid_or_none(v, dst)))
        if any(ok is None for _, ok in verdicts):
            continue  # the validator could not decide: keep the reasoned answer
        failing = [v for v, ok in verdicts if not ok]
        attr = "breaks_" + direction
        if not failing:
            changes = [replace(c, **{attr: False}) for c in changes]
        elif not any(getattr(c, attr) for c in changes):
            which = "old" if direction == "backward" else "new"
            other = "new" if direction == "backward" else "old"
            changes.append(Change(path, "value_rejected", direction == "backward", direction == "forward",
                                  f"the value {json.dumps(failing[0])} is valid under the {which} version and fails the {other} one"))
    return changes


def _mask(changes: list[Change], bb: bool, bf: bool) -> list[Change]:
    return [replace(c, breaks_backward=c.breaks_backward and bb, breaks_forward=c.breaks_forward and bf) for c in changes]


def _summary(path, kind, nested: list[Change], base_reason: str) -> Change:
    bb = any(c.breaks_backward for c in nested)
    bf = any(c.breaks_forward for c in nested)
    detail = "; ".join(c.reason for c in nested if c.breaks_backward or c.breaks_forward)[:300]
    return Change(path, kind, bb, bf, base_reason + (f" ({detail})" if detail else ""))


def _short(values: list) -> str:
    text = ", ".join(json.dumps(v) for v in values[:5])
    return text + (f" and {len(values) - 5} more" if len(values) > 5 else "")
