"""Schemas of every draft (3, 4, 6, 7, 2019-09, 2020-12) rewritten into the one 2020-12 shape the
engine reasons about, each on its own terms: the document's `$schema` decides which keywords mean
anything, and a keyword its draft does not define is kept as an annotation (under `$ignored`),
exactly as that draft's validator ignores it (Draft 4 has no `const`: `{"const": 1}` is `{}`)."""

from __future__ import annotations

from collections.abc import Callable

from .resources import ROOT, Index, absolute, display
from .vocabulary import (
    ANNOTATIONS,
    DRAFT_IDS,
    FALSE,
    FORMATS,
    IGNORED,
    INTEGER_ONLY,
    LEGACY_REF,
    REGISTRY_PREFIX,
    VOCABULARIES,
)


def detect_draft(schema) -> str:
    """'3', '4', '6', '7', '2019' or '2020' from `$schema`; '2020' without one (as validators read it)."""
    if isinstance(schema, dict):
        uri = schema.get("$schema")
        if isinstance(uri, str):
            for marker, draft in DRAFT_IDS:
                if marker in uri:
                    return draft
    return "2020"


class Norm:
    """What normalising one document needs: its draft and where its references point."""

    def __init__(self, draft: str, index: Index | None = None):
        self.draft = draft
        self.index = index
        self.vocabulary = VOCABULARIES[draft]
        self.done: dict[int, object] = {}  # id(raw node) -> its normalised form (shared subtrees once)

    def ref(self, node: dict) -> object:
        ref = node["$ref"]
        if not isinstance(ref, str):
            return ref
        base = self.index.base_of(node) if self.index is not None else ROOT
        return display(absolute(ref, base))


def normalize(schema, draft: str | None = None, index: Index | None = None):
    """Rewrite a schema of any draft into the 2020-12 shape the engine reasons about."""
    draft = draft or detect_draft(schema)
    return _norm(schema, Norm(draft, index))


def _norm(node, nx: Norm):
    if node is True:
        return {}
    if node is False:
        return dict(FALSE)
    if not isinstance(node, dict):
        return node
    if id(node) not in nx.done:
        nx.done[id(node)] = _norm_object(node, nx)
    return nx.done[id(node)]


def _norm_object(node: dict, nx: Norm) -> dict:
    if "$ref" in node and nx.draft in LEGACY_REF:
        return {"$ref": nx.ref(node)}  # Drafts 3-7 ignore every sibling of $ref
    out: dict = {}
    for key, value in node.items():
        if key in nx.vocabulary or key in _ALWAYS:
            _REWRITES.get(key, _keep)(out, key, value, node, nx)
        elif key in DEFINITION_KEYS or key == "$schema":
            continue  # read through references only (resources.Index)
        elif key in ANNOTATIONS or key.startswith("x-") or key.startswith(REGISTRY_PREFIX):
            out[key] = value
        else:
            out.setdefault(IGNORED, {})[key] = value
    if nx.draft == "3":
        _draft3_required(out, node)
    return out


DEFINITION_KEYS = frozenset({"$defs", "definitions"})
# Draft 7 spellings rewritten even in a 2020-12 document (an array `items` has no 2020-12 meaning:
# the 2020-12 validator cannot even read it).
_ALWAYS = frozenset({"additionalItems"})


def _norm_map(mapping: dict, nx: Norm) -> dict:
    return {k: _norm(v, nx) for k, v in mapping.items()}


# --------------------------------------------------------------------------- one rewrite per keyword
# Each writes what `key` (whose value is `value`, in `node`) becomes into `out`. They run in
# the order of `node`'s keys, so the rewritten schema keeps that order.

Rewrite = Callable[[dict, str, object, dict, Norm], None]


def _keep(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out[key] = value


def _rewrite_ref(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out[key] = nx.ref(node)


def _rewrite_map(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out[key] = _norm_map(value, nx) if isinstance(value, dict) else value


def _rewrite_list(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out[key] = [_norm(v, nx) for v in value] if isinstance(value, list) else value


def _rewrite_schema(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out[key] = _norm(value, nx)


def _rewrite_items(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if isinstance(value, list):
        out["prefixItems"] = [_norm(v, nx) for v in value]
        if "additionalItems" in node:
            out["items"] = _norm(node["additionalItems"], nx)
    else:
        out["items"] = _norm(value, nx)


def _rewrite_additional_items(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if not isinstance(node.get("items"), list):
        out.setdefault(IGNORED, {})[key] = value  # meaningless without an array `items`


def _rewrite_dependencies(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if not isinstance(value, dict):
        out[key] = value
        return
    for prop, dep in value.items():
        if isinstance(dep, str) and nx.draft == "3":
            dep = [dep]  # Draft 3: a single property name
        if isinstance(dep, list):
            out.setdefault("dependentRequired", {})[prop] = dep
        else:
            out.setdefault("dependentSchemas", {})[prop] = _norm(dep, nx)


def _rewrite_exclusive_bound(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if not isinstance(value, bool):
        out[key] = value
        return
    bound = "minimum" if key == "exclusiveMinimum" else "maximum"
    if value and bound in node:
        out[key] = node[bound]


def _rewrite_bound(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if node.get("exclusive" + key[0].upper() + key[1:]) is True:
        return  # a Draft 3-4 exclusive bound, rewritten by _rewrite_exclusive_bound
    out[key] = value


# ----- Draft 3

_DRAFT3_FORMATS = {"ip-address": "ipv4", "host-name": "hostname"}


def _draft3_type_entry(entry, nx: Norm) -> dict:
    if isinstance(entry, dict):
        return _norm(entry, nx)
    if entry == "any":
        return {}
    out: dict = {}
    _rewrite_type(out, "type", entry, {}, nx)
    return out


def _rewrite_type(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    entries = value if isinstance(value, list) else [value]
    if nx.draft not in ("3", "4"):
        out[key] = value
        return
    if nx.draft == "3" and "any" in entries:
        return
    if nx.draft == "4" or all(isinstance(e, str) for e in entries):
        out[key] = value
        if "integer" in entries and "number" not in entries:
            out[INTEGER_ONLY] = True  # Drafts 3-4 do not count 1.0 as an integer
        return
    # a Draft 3 type list may hold schemas: a value matching any entry is valid
    out.setdefault("allOf", []).append({"anyOf": [_draft3_type_entry(e, nx) for e in entries]})


def _rewrite_disallow(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    entries = value if isinstance(value, list) else [value]
    out.setdefault("allOf", []).append({"not": {"anyOf": [_draft3_type_entry(e, nx) for e in entries]}})


def _rewrite_extends(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    entries = value if isinstance(value, list) else [value]
    out.setdefault("allOf", []).extend(_norm(e, nx) for e in entries)


def _rewrite_divisible_by(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    out["multipleOf"] = value


def _rewrite_format(out: dict, key: str, value, node: dict, nx: Norm) -> None:
    if isinstance(value, str) and value not in FORMATS[nx.draft]:
        out.setdefault(IGNORED, {})[key] = value  # this draft's validator does not check it
        return
    out[key] = _DRAFT3_FORMATS.get(value, value) if nx.draft == "3" and isinstance(value, str) else value


def _draft3_required(out: dict, node: dict) -> None:
    """Draft 3 marks a property required inside its own schema (`required: true`)."""
    props = node.get("properties")
    if not isinstance(props, dict):
        return
    names = [name for name, sub in props.items() if isinstance(sub, dict) and sub.get("required")]
    if names:
        out["required"] = names


_REWRITES: dict[str, Rewrite] = {
    "$ref": _rewrite_ref,
    **dict.fromkeys(("properties", "patternProperties", "dependentSchemas"), _rewrite_map),
    **dict.fromkeys(("allOf", "anyOf", "oneOf", "prefixItems"), _rewrite_list),
    "items": _rewrite_items,
    "additionalItems": _rewrite_additional_items,
    "dependencies": _rewrite_dependencies,
    **dict.fromkeys(("additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
                     "unevaluatedProperties", "unevaluatedItems"), _rewrite_schema),
    **dict.fromkeys(("exclusiveMinimum", "exclusiveMaximum"), _rewrite_exclusive_bound),
    **dict.fromkeys(("minimum", "maximum"), _rewrite_bound),
    "type": _rewrite_type,
    "disallow": _rewrite_disallow,
    "extends": _rewrite_extends,
    "divisibleBy": _rewrite_divisible_by,
    "format": _rewrite_format,
}
