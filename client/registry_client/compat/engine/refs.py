"""The two sides of a comparison, `$ref` resolution inside each, and the state one comparison shares."""

from __future__ import annotations

from jsonschema import Draft202012Validator, ValidationError

from .. import ecma
from ..budget import OutOfSteps
from .algebra import merge
from .normalize import Norm, _norm, detect_draft
from .resources import Index
from .vocabulary import INTEGER_ONLY


class Side:
    """One schema document: its draft, its normalised root, refs resolved inside it, a validator for values."""

    def __init__(self, schema, label: str):
        self.label = label
        self.raw = schema
        self.draft = detect_draft(schema)
        self.index = Index(schema, self.draft)
        self._norm = Norm(self.draft, self.index)
        self._targets: dict[int, object] = {}
        self.root = self.normalized(schema)
        if not isinstance(self.root, dict):
            raise ValueError(f"the {label} schema must be a JSON object or a boolean, not {type(schema).__name__}")
        self._validator = None  # built on first use: a validator class costs more than most comparisons
        self.meter = None  # set by compare: each value judged is a step

    def normalized(self, raw):
        key = id(raw)
        if key not in self._targets:
            self._targets[key] = _norm(raw, self._norm)
        return self._targets[key]

    def resolve(self, ref: str) -> dict | None:
        """The normalised schema a reference names inside this document, or None."""
        node = self.index.lookup(ref)
        if node is None or not isinstance(node, dict | bool):
            return None
        return self.normalized(node)

    def valid_or_none(self, value, schema: dict) -> bool | None:
        """Is `value` valid under `schema` (a part of this document)? None when the validator cannot say."""
        if self.meter is not None and not self.meter.spend():
            raise OutOfSteps  # never None: a caller may read None as "skip this value"
        if self._validator is None:
            self._validator = _validator_class(self)(self.root, format_checker=ecma.FORMAT_CHECKER)
        try:
            return self._validator.evolve(schema=schema).is_valid(value)
        except Exception:
            return None


def _validator_class(side: Side):
    """Draft 2020-12 (the normalised shape) with ECMA-262 patterns and `$ref` read through the side."""

    def ref(validator, ref, instance, schema):
        target = side.resolve(ref)
        if target is None:
            raise LookupError(f"unresolvable reference {ref!r}")
        yield from validator.descend(instance, target)

    def integer_only(validator, on, instance, schema):
        if on and isinstance(instance, float) and validator.is_type(instance, "integer") and not _number_typed(schema):
            yield ValidationError(f"{instance!r} is not an integer under Drafts 3-4 (it has a fraction part)")

    return ecma.validator_class(Draft202012Validator, {"$ref": ref, INTEGER_ONLY: integer_only})


def _number_typed(schema: dict) -> bool:
    t = schema.get("type")
    return t == "number" or (isinstance(t, list) and "number" in t)


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
            "memo": {},       # proven containments (and the pairs each read); cleared whenever a pair moves
            "collect": [],    # one dict per expansion or proof under way: the pairs it has read, in order
            "new_pair": None,  # the fixed point's hook: a pair met for the first time is queued
            "final": False,   # the reporting walk: expand each differing pair once, in place
            "reported": {},   # guard -> path where the final walk reported it
            "proving": 0,     # depth of containment proofs (their wording is never shown)
            "meter": None,    # the steps spent and the limit (budget.Meter), set by compare
            "depth": 0,       # how deep the walk is nested (walk.MAX_NESTING)
            "budget": None,   # the compare budget in steps (None: unbounded)
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
