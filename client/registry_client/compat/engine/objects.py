"""Object keywords: required, properties and the patterns and additionalProperties behind them,
property counts, dependentRequired, dependentSchemas, propertyNames."""

from __future__ import annotations

from collections.abc import Callable

from .. import ecma
from ..model import Change
from .algebra import _ptr, is_false, merge
from .refs import Ctx
from .scalars import _int_bound_changes
from .verdicts import _mask, _short, _summary
from .vocabulary import FALSE


def _effective(s: dict, name: str) -> dict:
    """The schema a property value must match: its `properties` entry and matching patterns, else additionalProperties."""
    parts = []
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    if name in props:
        parts.append(props[name])
    for pattern, sub in (s.get("patternProperties") or {}).items():
        try:
            if ecma.search(pattern, name):
                parts.append(sub)
        except (ValueError, TypeError):
            return {"$unmatchable-pattern": pattern}
    if not parts:
        return s.get("additionalProperties", {})
    out = parts[0]
    for p in parts[1:]:
        out = merge(out, p)
    return out


def _governed_by(s: dict, name: str) -> str:
    for pattern in s.get("patternProperties") or {}:
        try:
            if ecma.search(pattern, name):
                return f"patternProperties {pattern!r}"
        except (ValueError, TypeError):
            pass
    ap = s.get("additionalProperties", {})
    if is_false(ap):
        return "additionalProperties: false (it was refused)"
    return "additionalProperties"


def _object_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    out: list[Change] = []
    for keyword_changes in _OBJECT_KEYWORDS:
        out += keyword_changes(o, n, path, cx)
    return out


def _required_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    ro = o.get("required") or []
    rn = n.get("required") or []
    for name in rn:
        if name not in ro:
            out.append(Change(_ptr(path, "required"), "required_added", True, False, f"{name!r} is now required; documents without it fail"))
    for name in ro:
        if name not in rn:
            out.append(Change(_ptr(path, "required"), "required_removed", False, True, f"{name!r} is no longer required; readers on the old version reject documents without it"))
    return out


def _property_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    # A property declared on one side only is compared with whatever governs it on the other.
    out: list[Change] = []
    po = o.get("properties") if isinstance(o.get("properties"), dict) else {}
    pn = n.get("properties") if isinstance(n.get("properties"), dict) else {}
    for name in list(dict.fromkeys([*po, *pn])):
        eo, en = _effective(o, name), _effective(n, name)
        # a name the side's propertyNames refuses never occurs there, whatever its schema says
        if "propertyNames" in o and cx.left.valid_or_none(name, o["propertyNames"]) is False:
            eo = dict(FALSE)
        if "propertyNames" in n and cx.right.valid_or_none(name, n["propertyNames"]) is False:
            en = dict(FALSE)
        if _presence_refused(o, name):
            eo = dict(FALSE)
        if _presence_refused(n, name):
            en = dict(FALSE)
        where = _ptr(path, "properties", name)
        if "$unmatchable-pattern" in eo or "$unmatchable-pattern" in en:
            out.append(Change(where, "unsupported_keyword", True, True, "a patternProperties regular expression cannot be evaluated"))
            continue
        nested = cx.diff(eo, en, where, cx)
        if name in po and name in pn:
            out += nested
        elif name in pn:
            out.append(_summary(where, "property_added", nested,
                                f"property {name!r} added; before, it fell under {_governed_by(o, name)}"))
        else:
            out.append(_summary(where, "property_removed", nested,
                                f"property {name!r} removed; it now falls under {_governed_by(n, name)}"))
    return out


def _pattern_property_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    pat_o = o.get("patternProperties") or {}
    pat_n = n.get("patternProperties") or {}
    for pattern in dict.fromkeys([*pat_o, *pat_n]):
        where = _ptr(path, "patternProperties", pattern)
        if pattern in pat_o and pattern in pat_n:
            out += cx.diff(pat_o[pattern], pat_n[pattern], where, cx)
        elif pattern in pat_n:
            out.append(_pattern_added(o, pat_n[pattern], pattern, where, cx))
        else:
            out.append(_pattern_removed(n, pat_o[pattern], pattern, where, cx))
    return out


def _pattern_added(o: dict, added: dict, pattern: str, where: str, cx: Ctx) -> Change:
    # The names it matches fell under the old side's other patterns or additionalProperties.
    others = [o.get("additionalProperties", {}), *(o.get("patternProperties") or {}).values()]
    bb = not all(cx.sub(x, added, cx) for x in others)
    bf = not all(cx.sub(added, x, cx.swapped()) for x in others)
    return Change(where, "pattern_properties_added", bb, bf, f"names matching {pattern!r} are now governed by their own schema")


def _pattern_removed(n: dict, removed: dict, pattern: str, where: str, cx: Ctx) -> Change:
    others = [n.get("additionalProperties", {}), *(n.get("patternProperties") or {}).values()]
    bb = not all(cx.sub(removed, x, cx) for x in others)
    bf = not all(cx.sub(x, removed, cx.swapped()) for x in others)
    return Change(where, "pattern_properties_removed", bb, bf, f"names matching {pattern!r} now fall under the remaining rules")


def _additional_properties_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    ap_o = o.get("additionalProperties", {})
    ap_n = n.get("additionalProperties", {})
    nested = cx.diff(ap_o, ap_n, _ptr(path, "additionalProperties"), cx)
    if not nested:
        return []
    where = _ptr(path, "additionalProperties")
    # Where a side can only hold names the other side declares (a closed object, or propertyNames
    # as a finite list), the other side's additionalProperties never applies to its documents.
    bb = not _only_declared(_possible_names(o), n)
    bf = not _only_declared(_possible_names(n), o)
    if not (bb and bf):
        nested = _mask(nested, bb, bf)
    if is_false(ap_n) and not is_false(ap_o):
        return [_summary(where, "additional_properties_closed", nested, "the content model is now closed: properties not declared fail")]
    if is_false(ap_o) and not is_false(ap_n):
        return [_summary(where, "additional_properties_opened", nested, "the content model is now open: undeclared properties are accepted, and readers on the old version reject them")]
    return nested


def _property_count_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    return _int_bound_changes(o, n, path, "minProperties", "maxProperties", "number of properties")


def _dependent_required_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    dro, drn = o.get("dependentRequired") or {}, n.get("dependentRequired") or {}
    for name in dict.fromkeys([*dro, *drn]):
        so, sn = dro.get(name, []), drn.get(name, [])
        added = [x for x in sn if x not in so]
        removed = [x for x in so if x not in sn]
        where = _ptr(path, "dependentRequired", name)
        if added and not _absent(o, name):
            out.append(Change(where, "dependent_required_added", True, False, f"when {name!r} is present, {_short(added)} must now be present too"))
        if removed and not _absent(n, name):
            out.append(Change(where, "dependent_required_removed", False, True, f"when {name!r} is present, {_short(removed)} no longer need be"))
    return out


def _dependent_schema_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    out: list[Change] = []
    dso, dsn = o.get("dependentSchemas") or {}, n.get("dependentSchemas") or {}
    for name in dict.fromkeys([*dso, *dsn]):
        where = _ptr(path, "dependentSchemas", name)
        if name in dso and name in dsn:
            out += cx.diff(dso[name], dsn[name], where, cx)
        elif name in dsn:
            bb = not (_absent(o, name) or cx.sub(o, dsn[name], cx))
            out.append(Change(where, "dependent_schema_added", bb, False, f"when {name!r} is present, the object must now also match a further schema"))
        else:
            bf = not (_absent(n, name) or cx.sub(n, dso[name], cx.swapped()))
            out.append(Change(where, "dependent_schema_removed", False, bf, f"when {name!r} is present, a further schema no longer applies"))
    return out


def _property_names_changes(o: dict, n: dict, path: str, cx: Ctx) -> list[Change]:
    if "propertyNames" not in o and "propertyNames" not in n:
        return []
    po, pn = o.get("propertyNames", {}), n.get("propertyNames", {})
    changes = cx.diff(po, pn, _ptr(path, "propertyNames"), cx)
    # names are strings: what either schema says of other types never applies
    if any(c.breaks_backward or c.breaks_forward for c in changes):
        as_names = cx.diff(merge(_NAME, po), merge(_NAME, pn), _ptr(path, "propertyNames"), cx)
        changes = _mask(changes, any(c.breaks_backward for c in as_names), any(c.breaks_forward for c in as_names))
    # A closed object can only hold its declared names: when each passes the target's
    # propertyNames (decided by the validator), that direction is safe whatever the schemas.
    bb_ok = any(c.breaks_backward for c in changes) and _names_pass(_closed_names(o), pn, cx.right)
    bf_ok = any(c.breaks_forward for c in changes) and _names_pass(_closed_names(n), po, cx.left)
    return _mask(changes, not bb_ok, not bf_ok) if bb_ok or bf_ok else changes


_NAME = {"type": "string"}


def _absent(s: dict, name: str) -> bool:
    """Can no document valid under `s` hold the property `name`? (Its schema there is false,
    or its presence requires a property `s` refuses.) A rule it triggers then never applies."""
    return is_false(_effective(s, name)) or _presence_refused(s, name)


def _presence_refused(s: dict, name: str) -> bool:
    """Does the presence of `name` require (dependentRequired) a property `s` refuses?"""
    deps = s.get("dependentRequired") if isinstance(s.get("dependentRequired"), dict) else {}
    needed = deps.get(name) if isinstance(deps.get(name), list) else []
    return any(isinstance(x, str) and x != name and is_false(_effective(s, x)) for x in needed)


def _closed_names(s: dict) -> list | None:
    """The only property names a document valid under `s` can hold, or None when any name may appear."""
    if not is_false(s.get("additionalProperties", {})) or s.get("patternProperties"):
        return None
    props = s.get("properties")
    return list(props) if isinstance(props, dict) else []


def _possible_names(s: dict) -> set | None:
    """The property names a document valid under `s` can hold, when they are finitely many."""
    found = _closed_names(s)
    names = set(found) if found is not None else None
    pn = s.get("propertyNames")
    listed = None
    if isinstance(pn, dict) and "const" in pn and isinstance(pn["const"], str):
        listed = {pn["const"]}
    elif isinstance(pn, dict) and isinstance(pn.get("enum"), list):
        listed = {v for v in pn["enum"] if isinstance(v, str)}
    if listed is not None:
        names = listed if names is None else names & listed
    return names


def _only_declared(names: set | None, s: dict) -> bool:
    """Is every one of `names` governed by `s`'s properties or patterns (never by additionalProperties)?"""
    if names is None:
        return False
    props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    for name in names:
        if name in props:
            continue
        try:
            if any(ecma.search(p, name) for p in s.get("patternProperties") or {}):
                continue
        except (ValueError, TypeError):
            return False
        return False
    return True


def _names_pass(names: list | None, schema, side) -> bool:
    if names is None:
        return False
    return all(side.valid_or_none(name, schema) is True for name in names)


# The object keywords in the order their changes are reported (the order is part of the output).
_OBJECT_KEYWORDS: tuple[Callable[[dict, dict, str, Ctx], list[Change]], ...] = (
    _required_changes,
    _property_changes,
    _pattern_property_changes,
    _additional_properties_changes,
    _property_count_changes,
    _dependent_required_changes,
    _dependent_schema_changes,
    _property_names_changes,
)
