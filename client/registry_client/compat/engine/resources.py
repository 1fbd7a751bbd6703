"""Where the references of one document point: base URIs set by `$id` (Draft 3-4 `id`), the
resources and anchors they name, and JSON pointers into any part of the document.

The document is indexed as written (before normalisation), so a pointer may run through any
container — `definitions`, `$defs`, nested containers (`#/definitions/a/definitions/b`),
`properties`, a Draft 7 `items` array, or keywords the draft does not know (`components`).
Every `$ref` is read against the base URI in effect where it is written and kept as that
absolute URI; a document without `$id` gets a fixed placeholder base, which `display` strips
again, so its references read as written (`#/$defs/a`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from .vocabulary import LEGACY_REF

ROOT = "https://compat.invalid/__root__.json"
_HOST = "https://compat.invalid/"

# Keywords whose value is a map of names to subschemas; data keywords hold no subschemas.
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"})
DATA = frozenset({"enum", "const", "default", "examples", "required", "title", "description", "$comment",
                  "format", "pattern", "type"})


def absolute(ref: str, base: str) -> str:
    try:
        return urljoin(base, ref)
    except ValueError:
        return ref


def display(uri: str) -> str:
    """The reference as written for a document without `$id` (`#/$defs/a`, `other.json#/x`)."""
    if uri == ROOT or uri.startswith(ROOT + "#"):
        return uri[len(ROOT):] or "#"
    if uri.startswith(_HOST):
        return uri[len(_HOST):]
    return uri


class Index:
    """The resources (`$id`), anchors and base URIs of one raw document."""

    def __init__(self, document, draft: str):
        self.draft = draft
        self.document = document
        self.resources: dict[str, object] = {ROOT: document}
        self.anchors: dict[str, object] = {}
        self.bases: dict[int, str] = {}
        self._visit(document, ROOT)

    def base_of(self, node) -> str:
        return self.bases.get(id(node), ROOT)

    def _visit(self, node, base: str) -> None:
        if not isinstance(node, dict) or id(node) in self.bases:
            return  # a subtree shared by several places (Python callers) is read once
        legacy = self.draft in LEGACY_REF
        ident = node.get("id" if self.draft in ("3", "4") else "$id")
        if isinstance(ident, str) and not (legacy and "$ref" in node):
            if legacy and ident.startswith("#"):
                self.anchors.setdefault(urldefrag(base)[0] + ident, node)
            else:
                uri, fragment = urldefrag(absolute(ident, base))
                self.resources.setdefault(uri, node)
                base = uri
                if fragment and legacy:
                    self.anchors.setdefault(uri + "#" + fragment, node)
        if not legacy:
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(node.get(key), str):
                    self.anchors.setdefault(urldefrag(base)[0] + "#" + node[key], node)
        self.bases[id(node)] = base
        for key, value in node.items():
            if key in DATA and not (key == "type" and isinstance(value, list)):
                continue  # Draft 3 type lists may hold schemas
            if key in SCHEMA_MAPS and isinstance(value, dict):
                for sub in value.values():
                    self._visit(sub, base)
            else:
                self._visit_any(value, base)

    def _visit_any(self, value, base: str) -> None:
        if isinstance(value, dict):
            self._visit(value, base)
        elif isinstance(value, list):
            for item in value:
                self._visit_any(item, base)

    def lookup(self, ref: str):
        """The raw node an absolute reference names, or None (another document, a missing target)."""
        if not isinstance(ref, str):
            return None
        uri, fragment = urldefrag(absolute(ref, ROOT))
        node = self.resources.get(uri)
        if node is None:
            return None
        fragment = unquote(fragment)
        if fragment == "":
            return node
        if not fragment.startswith("/"):
            return self.anchors.get(uri + "#" + fragment)
        return follow_pointer(node, fragment)


def follow_pointer(node: Any, pointer: str) -> Any:
    """What the JSON pointer `pointer` ("/defs/a/0", "" for the whole) names in `node`, or None."""
    for part in pointer[1:].split("/") if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
