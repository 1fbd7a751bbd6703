"""Regular expressions as JSON Schema reads them: ECMA-262, not Python's `re`.

`regress` (a binding to an ECMA-262 engine) does the work; where it is not installed, the common
ECMA-only syntax is translated for `re` (named groups `(?<name>…)`, back references `\\k<name>`,
ASCII `\\d`/`\\w`). Nothing here refuses a pattern for Python's syntax.

    search(pattern, text) -> bool       (ValueError when the pattern is not ECMA-262 at all)
    is_regex(pattern) -> bool           (the `regex` format)
    FORMAT_CHECKER / format_checker(cls): format checkers whose `regex` is ECMA-262
    validator_class(cls): a validator class whose `pattern`/`patternProperties` are ECMA-262
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache

import jsonschema
from jsonschema import ValidationError

try:  # pragma: no cover - exercised through whichever branch is installed
    import regress
except ImportError:  # pragma: no cover
    regress = None

_NAMED_GROUP = re.compile(r"\(\?<(?![=!])([A-Za-z_$][\w$]*)>")
_BACKREF = re.compile(r"\\k<([A-Za-z_$][\w$]*)>")


def _translate(pattern: str) -> str:
    pattern = _NAMED_GROUP.sub(r"(?P<\1>", pattern)
    return _BACKREF.sub(r"(?P=\1)", pattern)


@lru_cache(maxsize=4096)
def _compile(pattern: str):
    """A compiled pattern (regress first, with and then without unicode mode), or None."""
    if regress is not None:
        for flags in ("u", ""):
            try:
                return regress.Regex(pattern, flags=flags) if flags else regress.Regex(pattern)
            except Exception:
                continue
    try:
        return re.compile(_translate(pattern), re.ASCII)
    except (re.error, TypeError, ValueError):
        try:
            return re.compile(_translate(pattern))
        except (re.error, TypeError, ValueError):
            return None


def is_regex(pattern) -> bool:
    if not isinstance(pattern, str):
        return True
    return _compile(pattern) is not None


def search(pattern: str, text: str) -> bool:
    compiled = _compile(pattern)
    if compiled is None:
        raise ValueError(f"{pattern!r} is not an ECMA-262 regular expression")
    if isinstance(compiled, re.Pattern):
        return compiled.search(text) is not None
    return compiled.find(text) is not None


def format_checker(cls=jsonschema.Draft202012Validator) -> jsonschema.FormatChecker:
    """The draft's format checker with `regex` read as ECMA-262."""
    checker = copy.copy(cls.FORMAT_CHECKER)
    checker.checkers = dict(checker.checkers)
    checker.checkers["regex"] = (is_regex, ())
    return checker


FORMAT_CHECKER = format_checker()


def _pattern(validator, patrn, instance, schema):
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for k, v in instance.items():
            if search(pattern, k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def validator_class(cls=jsonschema.Draft202012Validator, extra: dict | None = None):
    """`cls` with ECMA-262 `pattern` and `patternProperties` (and any `extra` keywords)."""
    return jsonschema.validators.extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties, **(extra or {})})
