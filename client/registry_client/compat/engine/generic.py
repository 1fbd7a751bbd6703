"""Keywords that apply whatever the JSON type: `type`, `enum`/`const`, and the ones the checker
does not reason about (annotations never change validity; unknown keywords break both ways)."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Change
from .algebra import _declared_atoms, _key, _ptr, _value_key
from .refs import Ctx
from .verdicts import _short
from .vocabulary import ANNOTATIONS, DEFINITIONS, HANDLED, IGNORED, INTEGER_ONLY, NUMERIC


def _describe_atoms(a: Iterable[str]) -> str:
    names = set(a)
    if NUMERIC <= names:
        names -= NUMERIC
        names.add("number")
    elif "fraction" in names:
        names.discard("fraction")
        names.add("non-integer number")
    return ", ".join(sorted(names)) or "nothing"


def _type_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    to, tn = _declared_atoms(o), _declared_atoms(n)
    if to == tn:
        return []
    lost = ao - tn
    gained = an - to
    bb, bf = bool(lost), bool(gained)
    if lost == {"null"} and not gained:
        kind, reason = "nullability_removed", "null is no longer allowed; documents with null here fail the new version"
    elif gained == {"null"} and not lost:
        kind, reason = "nullability_added", "null is now allowed; readers on the old version reject it"
    elif bb and bf:
        kind, reason = "type_changed", f"the type changed: {_describe_atoms(lost)} no longer allowed, {_describe_atoms(gained)} newly allowed"
    elif bb:
        kind, reason = "type_narrowed", f"the type narrowed: {_describe_atoms(lost)} no longer allowed"
    elif bf:
        kind, reason = "type_widened", f"the type widened: {_describe_atoms(gained)} newly allowed"
    else:
        kind, reason = "type_restated", "the type keyword changed without changing which values are allowed here"
    return [Change(_ptr(path, "type"), kind, bb, bf, reason)]


def _values(s: dict) -> dict | None:
    if "const" in s:
        return {_value_key(s["const"]): s["const"]}
    if isinstance(s.get("enum"), list):
        return {_value_key(v): v for v in s["enum"]}
    return None


def _enum_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    vo, vn = _values(o), _values(n)
    if vo is None and vn is None:
        return []
    where = _ptr(path, "const" if "const" in n or ("const" in o and "enum" not in n) else "enum")
    if vo is None:
        return [Change(where, "enum_added", True, False, f"values are now restricted to {_short(list(vn.values()))}; other values the old version allowed fail")]
    if vn is None:
        return [Change(where, "enum_removed", False, True, "the value restriction was removed; readers on the old version reject the new values")]
    out = []
    removed = [vo[k] for k in vo if k not in vn]
    added = [vn[k] for k in vn if k not in vo]
    if removed:
        out.append(Change(where, "enum_value_removed", True, False, f"{_short(removed)} no longer allowed"))
    if added:
        out.append(Change(where, "enum_value_added", False, True, f"{_short(added)} newly allowed; readers on the old version reject them"))
    if not removed and not added and _key(o.get("enum")) != _key(n.get("enum")):
        out.append(Change(where, "enum_restated", False, False, "the same values, written differently"))
    return out


def _other_keyword_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    out = []
    for k in dict.fromkeys([*o, *n]):
        if k in HANDLED and k not in ANNOTATIONS:
            continue
        if k in DEFINITIONS:
            continue
        if k == IGNORED:
            out += _ignored_changes(o.get(IGNORED) or {}, n.get(IGNORED) or {}, path)
            continue
        if _key(o.get(k)) == _key(n.get(k)):
            continue
        if k in ANNOTATIONS or k.startswith("x-"):
            out.append(Change(_ptr(path, k), "annotation_changed", False, False, f"`{k}` is an annotation; it never changes which documents are valid"))
        else:
            out.append(Change(_ptr(path, k), "unsupported_keyword", True, True,
                              f"`{k}` differs; the checker does not reason about it, so it is treated as breaking both ways"))
    return out


def _ignored_changes(io: dict, in_: dict, path: str) -> list[Change]:
    """Keywords the schema's draft does not define: its validator ignores them, so they never break."""
    out = []
    for k in dict.fromkeys([*io, *in_]):
        if _key(io.get(k)) == _key(in_.get(k)):
            continue
        if k == "format":
            reason = (f"the format {_short([io.get(k) or in_.get(k)])} is not one the declared draft's validator checks, "
                      "so it is an annotation there; it never changes which documents are valid")
        elif k == "id":
            reason = "`id` names the schema (its base URI); it never changes which documents are valid"
        elif k == "required" and all(isinstance(x, bool | None) for x in (io.get(k), in_.get(k))):
            reason = ("a Draft 3 `required` flag on a property's schema: it is read as the parent object's "
                      "`required` list and compared there")
        else:
            reason = (f"`{k}` is not a keyword of the draft the schema declares (`$schema`, Draft 2020-12 when absent), "
                      "so its validator ignores it: an annotation, it never changes which documents are valid")
        out.append(Change(_ptr(path, k), "annotation_changed", False, False, reason))
    return out


def _integer_only_changes(o: dict, n: dict, path: str, cx: Ctx, ao: frozenset, an: frozenset) -> list[Change]:
    """Drafts 3-4 refuse 1.0 as an integer; later drafts accept it."""
    io, in_ = bool(o.get(INTEGER_ONLY)), bool(n.get(INTEGER_ONLY))
    if io == in_:
        return []
    bb = in_ and "integer" in ao
    bf = io and "integer" in an
    which = "new" if in_ else "old"
    return [Change(_ptr(path, "type"), "integer_reading_changed", bb, bf,
                   f"only the {which} version refuses a number written with a fraction part, such as 1.0, here: "
                   "under Drafts 3-4 it is not an integer")]
