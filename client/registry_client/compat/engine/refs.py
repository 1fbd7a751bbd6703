"""The two sides of a comparison, `$ref` resolution inside each, and the state one comparison shares."""

from __future__ import annotations

from urllib.parse import unquote

from jsonschema import Draft202012Validator

from .algebra import merge
from .normalize import normalize


class Side:
    """One schema document: its normalised root, refs resolved inside it, a validator for values."""

    def __init__(self, schema, label: str):
        self.label = label
        self.raw = schema
        self.root = normalize(schema)
        if not isinstance(self.root, dict):
            raise ValueError(f"the {label} schema must be a JSON object or a boolean, not {type(schema).__name__}")
        root_for_validation = {k: v for k, v in self.root.items() if k != "$schema"}
        self._validator = Draft202012Validator(root_for_validation, format_checker=Draft202012Validator.FORMAT_CHECKER)
        self._anchors: dict[str, dict] | None = None

    def resolve(self, ref: str) -> dict | None:
        if not isinstance(ref, str) or not ref.startswith("#"):
            base = self.root.get("$id")
            if isinstance(base, str) and isinstance(ref, str) and ref.startswith(base):
                ref = ref[len(base):] or "#"
                if not ref.startswith("#"):
                    return None
            else:
                return None
        fragment = unquote(ref[1:])
        if fragment == "":
            return self.root
        if not fragment.startswith("/"):
            return self._anchor(fragment)
        node = self.root
        for part in fragment[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node if isinstance(node, dict) else None

    def _anchor(self, name: str) -> dict | None:
        if self._anchors is None:
            self._anchors = {}
            stack = [self.root]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if isinstance(node.get("$anchor"), str):
                        self._anchors.setdefault(node["$anchor"], node)
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
        return self._anchors.get(name)

    def valid_or_none(self, value, schema: dict) -> bool | None:
        """Is `value` valid under `schema` (a part of this document)? None when the validator cannot say."""
        try:
            return self._validator.evolve(schema=schema).is_valid(value)
        except Exception:
            return None


class Ctx:
    """Which document each side of a comparison lives in, plus state shared by the whole walk.

    Reference pairs are decided as a greatest fixed point: every pair of references met
    starts out assumed compatible; each pair is then compared once with the pairs it meets
    inside read from the table (never expanded), and the table only ever moves towards
    "breaking"; the rounds repeat until nothing moves. That is the coinductive argument
    (documents are finite, so a recursive pair may be assumed while it is proved) without
    the exponential cost of expanding every path through mutually recursive definitions.
    """

    def __init__(self, left: Side, right: Side, shared: dict | None = None):
        self.left, self.right = left, right
        self.shared = shared if shared is not None else {
            "pairs": {},      # guard -> RefPair
            "memo": {},       # proven containments; cleared whenever a pair moves
            "final": False,   # the reporting walk: expand each differing pair once, in place
            "reported": {},   # guard -> path where the final walk reported it
            "proving": 0,     # depth of containment proofs (their wording is never shown)
        }

    @property
    def memo(self) -> dict:
        return self.shared["memo"]

    def swapped(self) -> Ctx:
        return Ctx(self.right, self.left, self.shared)

    # The keyword families recurse through the walk, which imports them: it hands them its
    # two recursions here (compare() sets them), so the imports point one way.
    def diff(self, o, n, path: str, cx: Ctx) -> list:
        """The walk's `_diff` of two subschemas under `cx`."""
        return self.shared["diff"](o, n, path, cx)

    def sub(self, a, b, cx: Ctx) -> bool:
        """The walk's `_sub`: whether every value `a` admits, `b` admits, under `cx`."""
        return self.shared["sub"](a, b, cx)


class RefPair:
    __slots__ = ("o", "n", "cx", "bb", "bf")

    def __init__(self, o: dict, n: dict, cx: Ctx):
        self.o, self.n, self.cx = o, n, cx
        self.bb = self.bf = False


def _resolve_refs(s: dict, side: Side) -> tuple[dict | None, str | None]:
    """Replace a $ref by the conjunction of its target and its siblings; follow chains."""
    seen = set()
    while isinstance(s, dict) and "$ref" in s:
        ref = s["$ref"]
        if ref in seen:
            return None, f"`$ref` {ref!r} refers to itself without describing any value"
        seen.add(ref)
        target = side.resolve(ref)
        if target is None:
            return None, f"`$ref` {ref!r} cannot be resolved inside the document (only local references are followed)"
        siblings = {k: v for k, v in s.items() if k != "$ref"}
        s = merge(target, siblings) if siblings else target
        if "allOf" in s and "$ref" not in s:
            break
    return s, None
