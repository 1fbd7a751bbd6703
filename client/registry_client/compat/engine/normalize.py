"""Draft 4-7 and 2020-12 schemas rewritten into the one 2020-12 shape the engine reasons about."""

from __future__ import annotations

from collections.abc import Callable

from .vocabulary import DEFINITIONS, DRAFT7_IDS, FALSE


def detect_draft(schema) -> str:
    """'7' for documents declaring Draft 4, 6 or 7 in `$schema` (their $ref siblings are ignored), else '2020'."""
    if isinstance(schema, dict):
        uri = str(schema.get("$schema", ""))
        if any(d in uri for d in DRAFT7_IDS):
            return "7"
    # Without $schema, validators (and so the checker) read 2020-12; Draft 7 spellings such as an
    # array `items` are still rewritten, but $ref siblings then count as 2020-12 says.
    return "2020"


def normalize(schema, draft: str | None = None):
    """Rewrite a Draft 4–7 or 2020-12 schema into the 2020-12 shape the engine reasons about.

    Keys keep their places so local `$ref` pointers still resolve (except into a
    Draft 7 `items` array, which becomes `prefixItems`).
    """
    draft = draft or detect_draft(schema)
    return _norm(schema, draft)


def _norm(node, draft: str):
    if node is True:
        return {}
    if node is False:
        return dict(FALSE)
    if not isinstance(node, dict):
        return node
    if draft == "7" and "$ref" in node:
        return _norm_draft7_ref(node, draft)
    out: dict = {}
    for key, value in node.items():
        _REWRITES.get(key, _keep)(out, key, value, node, draft)
    if draft == "7":
        out.pop("$schema", None)
    return out


def _norm_draft7_ref(node: dict, draft: str) -> dict:
    # Draft 7 ignores every sibling of $ref; definitions stay so pointers resolve.
    kept = {k: v for k, v in node.items() if k == "$ref" or k in DEFINITIONS}
    return {k: (_norm_map(v, draft) if k in DEFINITIONS else v) for k, v in kept.items()}


def _norm_map(mapping: dict, draft: str) -> dict:
    return {k: _norm(v, draft) for k, v in mapping.items()}


# --------------------------------------------------------------------------- one rewrite per keyword
# Each writes what `key` (whose value is `value`, in `node`) becomes into `out`. They run in
# the order of `node`'s keys, so the rewritten schema keeps that order.

Rewrite = Callable[[dict, str, object, dict, str], None]


def _keep(out: dict, key: str, value, node: dict, draft: str) -> None:
    out[key] = value


def _rewrite_map(out: dict, key: str, value, node: dict, draft: str) -> None:
    out[key] = _norm_map(value, draft) if isinstance(value, dict) else value


def _rewrite_list(out: dict, key: str, value, node: dict, draft: str) -> None:
    out[key] = [_norm(v, draft) for v in value] if isinstance(value, list) else value


def _rewrite_schema(out: dict, key: str, value, node: dict, draft: str) -> None:
    out[key] = _norm(value, draft)


def _rewrite_items(out: dict, key: str, value, node: dict, draft: str) -> None:
    if isinstance(value, list):
        out["prefixItems"] = [_norm(v, draft) for v in value]
        if "additionalItems" in node:
            out["items"] = _norm(node["additionalItems"], draft)
    else:
        out["items"] = _norm(value, draft)


def _drop(out: dict, key: str, value, node: dict, draft: str) -> None:
    pass  # additionalItems: meaningful only next to an array `items`, handled there


def _rewrite_dependencies(out: dict, key: str, value, node: dict, draft: str) -> None:
    if not isinstance(value, dict):
        out[key] = value
        return
    for prop, dep in value.items():
        if isinstance(dep, list):
            out.setdefault("dependentRequired", {})[prop] = dep
        else:
            out.setdefault("dependentSchemas", {})[prop] = _norm(dep, draft)


def _rewrite_exclusive_bound(out: dict, key: str, value, node: dict, draft: str) -> None:
    if not isinstance(value, bool):
        out[key] = value
        return
    bound = "minimum" if key == "exclusiveMinimum" else "maximum"
    if value and bound in node:
        out[key] = node[bound]


def _rewrite_bound(out: dict, key: str, value, node: dict, draft: str) -> None:
    if node.get("exclusive" + key[0].upper() + key[1:]) is True:
        return  # a Draft 4 exclusive bound, rewritten by _rewrite_exclusive_bound
    out[key] = value


_REWRITES: dict[str, Rewrite] = {
    **dict.fromkeys(("properties", "patternProperties", "dependentSchemas", *sorted(DEFINITIONS)), _rewrite_map),
    **dict.fromkeys(("allOf", "anyOf", "oneOf", "prefixItems"), _rewrite_list),
    "items": _rewrite_items,
    "additionalItems": _drop,
    "dependencies": _rewrite_dependencies,
    **dict.fromkeys(("additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
                     "unevaluatedProperties", "unevaluatedItems"), _rewrite_schema),
    **dict.fromkeys(("exclusiveMinimum", "exclusiveMaximum"), _rewrite_exclusive_bound),
    **dict.fromkeys(("minimum", "maximum"), _rewrite_bound),
}
