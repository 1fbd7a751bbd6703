"""Reading a JSON request body within bounds.

`json.loads` takes anything JSON allows and more, and some of it fails later,
far from the request, as a 500: nesting deeper than the interpreter's stack
(RecursionError), integers longer than Python converts (ValueError), `NaN` and
`Infinity` (not JSON; PostgreSQL's jsonb refuses them), and `\\ud800` escapes
that decode to lone surrogates, which no UTF-8 text (nor the database) can
hold. `parse_json` refuses each with a `JsonBodyError` that says what and
where, and costs little more than `json.loads` on ordinary bodies: the checks
are C-speed scans of the text (a bracket count, a regex) that only look closer
when the cheap scan finds something.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 100  # objects and arrays within each other; OpenLineage facets nest a few levels
MAX_INTEGER_DIGITS = 100  # a bigint has 19; anything near Python's 4300-digit limit is no number a client means


class JsonBodyError(ValueError):
    """A body that is not JSON this service reads: `detail` says what and where."""

    def __init__(self, detail: str, code: str = "bad_json"):
        super().__init__(detail)
        self.detail, self.code = detail, code


def parse_json(body: bytes | str) -> Any:
    """The JSON value in `body` (UTF-8), or JsonBodyError."""
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonBodyError(f"The body is not UTF-8 (byte {exc.start}: {exc.reason}).") from None
    else:
        text = body
    _check_depth(text)
    _check_surrogates(text)
    try:
        return json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant)
    except JsonBodyError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonBodyError(f"The body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.") from None
    except (RecursionError, ValueError) as exc:  # the checks above should leave neither; a 400 if they did
        raise JsonBodyError(f"The body is not JSON this service reads: {exc}.") from None


_BRACKETS = re.compile(r"[\[\]{}]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _check_depth(text: str) -> None:
    # Fewer brackets than the limit cannot nest past it: most bodies stop here.
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    brackets = _BRACKETS.findall(_STRING.sub("", text))
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > MAX_DEPTH:
        raise JsonBodyError(f"The body nests objects and arrays {depth} deep; the limit is {MAX_DEPTH}.", "too_deep")


# Any escape of a surrogate code point; a high one followed by a low one is a
# pair (one character beyond the BMP, as ensure_ascii encoders write emoji).
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",
                     re.DOTALL)


def _check_surrogates(text: str) -> None:
    if not _SURROGATE_HINT.search(text):
        return
    # Escapes read left to right, so an escaped backslash before "u" is no escape.
    for match in _ESCAPE.finditer(text):
        if match.group(1):
            line, column = _position(text, match.start())
            raise JsonBodyError(f"The body has a lone surrogate \\{match.group(1)} at line {line}, column {column}: "
                                "it is no character, and no UTF-8 text can hold it.", "lone_surrogate")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise JsonBodyError(f"The body has an integer of {len(digits.lstrip('-'))} digits ({digits[:20]}…); "
                            f"the limit is {MAX_INTEGER_DIGITS} digits.", "number_too_large")
    return int(digits)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonBodyError(f"The body has a number out of range ({text[:40]}).", "number_too_large")
    return value


def _constant(name: str) -> Any:
    raise JsonBodyError(f"The body has {name}, which is not JSON.")
