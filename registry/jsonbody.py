"""Reading a JSON request body within bounds.

`json.loads` takes anything JSON allows and more, and some of it fails later,
far from the request, as a 500: nesting deeper than the interpreter's stack
(RecursionError), integers longer than Python converts (ValueError), `NaN` and
`Infinity` (not JSON; PostgreSQL's jsonb refuses them), and `\\ud800` escapes
that decode to lone surrogates, which no UTF-8 text (nor the database) can
hold. `parse_json` refuses each with a `JsonBodyError` that says what and
where, and costs little more than `json.loads` on ordinary bodies: the checks
are a few C-speed passes over the bytes, each linear in the body whatever its
shape (no pattern that can backtrack over what it read), that only look closer
when a cheap count finds something.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from registry.collector import collector_paused

MAX_DEPTH = 100  # objects and arrays within each other; OpenLineage facets nest a few levels
MAX_INTEGER_DIGITS = 100  # a bigint has 19; anything near Python's 4300-digit limit is no number a client means
_PAUSE_COLLECTOR_BYTES = 64 * 1024


class JsonBodyError(ValueError):
    """A body that is not JSON this service reads: `detail` says what and where."""

    def __init__(self, detail: str, code: str = "bad_json"):
        super().__init__(detail)
        self.detail, self.code = detail, code


def parse_json(body: bytes | str, *, work: Work | None = None) -> Any:
    """The JSON value in `body` (UTF-8), or JsonBodyError; `work`, if given, counts the checks' operations."""
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonBodyError(f"The body is not UTF-8 (byte {exc.start}: {exc.reason}).") from None
    else:
        text, body = body, body.encode("utf-8", "surrogatepass")
    _check(body, text, work)
    # A megabyte of empty arrays took four times as long to parse with the collector
    # running (registry.collector); what a parse builds holds no cycles.
    try:
        with collector_paused(len(body) > _PAUSE_COLLECTOR_BYTES):
            return json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant)
    except JsonBodyError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonBodyError(f"The body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.") from None
    except (RecursionError, ValueError) as exc:  # the checks above should leave neither; a 400 if they did
        raise JsonBodyError(f"The body is not JSON this service reads: {exc}.") from None


class Work:
    """A count of the operations a check did: the bytes or items each of its
    passes read. Tests pass one in to pin that the count grows linearly with
    the body; the service passes none."""

    def __init__(self) -> None:
        self.steps = 0

    def add(self, steps: int) -> None:
        self.steps += steps


# Every check below is a fixed number of forward passes over the body by C
# primitives that never look back (bytes.replace, bytes.translate, a regular
# expression whose every attempt fails at its first byte or matches without
# backtracking, itertools): its cost is linear in the body, whatever the body.
_ESCAPED_BACKSLASH, _ESCAPED_QUOTE, _BLANK = b"\\\\", b'\\"', b"__"  # blanks keep every offset
_NOT_STRUCTURAL = bytes(b for b in range(256) if b not in b'"[]{}')
_QUOTED = re.compile(rb'"[^"]*+"')
_DEPTH_SLICE = 65_536  # brackets summed per step, about a millisecond
_DEPTH_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: an opening bracket +1, a closing one -1


def _check(body: bytes, text: str, work: Work | None) -> None:
    """Refuses nesting past MAX_DEPTH and lone surrogate escapes."""
    brackets = body.count(b"[") + body.count(b"{")
    unicode_escapes = b"\\u" in body
    if work is not None:
        work.add(3 * len(body))
    if brackets <= MAX_DEPTH and not unicode_escapes:  # fewer brackets cannot nest past the limit: most bodies stop here
        return
    if b"\\" in body:
        # An escaped backslash read left to right, as JSON reads it, is no
        # escape of what follows; blanked (same length), every escape left is
        # one, and every quote left opens or closes a string.
        body = body.replace(_ESCAPED_BACKSLASH, _BLANK).replace(_ESCAPED_QUOTE, _BLANK)
        if work is not None:
            work.add(3 * len(body))
    if brackets > MAX_DEPTH:
        _check_depth(body, work)
    if unicode_escapes:
        _check_surrogates(body, text, work)


def _check_depth(body: bytes, work: Work | None) -> None:
    # Keeping only quotes and brackets, then dropping adjacent quotes (an empty
    # string, or the end of one and the start of the next: either way no bracket
    # changes side), leaves the few strings that hold brackets for the pattern to drop.
    structure = body.translate(None, _NOT_STRUCTURAL).replace(b'""', b"")
    if work is not None:
        work.add(2 * len(body) + len(structure))
    if b'"' in structure:
        structure = _QUOTED.sub(b"", structure)
        if work is not None:
            work.add(len(structure))
    steps = structure.translate(_DEPTH_STEPS, b'"')
    signed, depth, deepest = memoryview(steps).cast("b"), 0, 0
    # In slices: a thread may take the interpreter lock between them, so a large body
    # does not hold up the other requests of its process for the whole sum.
    for start in range(0, len(steps), _DEPTH_SLICE):
        deepest = max(deepest, max(accumulate(signed[start:start + _DEPTH_SLICE], initial=depth)))
        part = steps[start:start + _DEPTH_SLICE]
        depth += 2 * part.count(1) - len(part)
    if work is not None:
        work.add(2 * len(steps))
    if deepest > MAX_DEPTH:
        raise JsonBodyError(f"The body nests objects and arrays {deepest} deep; the limit is {MAX_DEPTH}.", "too_deep")


# An escape of a surrogate code point that is not half of a pair (a high one
# followed by a low one: one character beyond the BMP, as ensure_ascii encoders
# write emoji). Every attempt of the pattern is bounded: a few bytes either side.
_HIGH, _LOW = rb"\\u[dD][89abAB][0-9a-fA-F]{2}", rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
# Every match starts with the literal \u, which the engine looks for at C speed.
_LONE_SURROGATE = re.compile(rb"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!" + _LOW + rb")|[c-fC-F][0-9a-fA-F]{2}(?<!"
                             + _HIGH + _LOW + rb"))")


def _check_surrogates(body: bytes, text: str, work: Work | None) -> None:
    if work is not None:
        work.add(len(body))
    match = _LONE_SURROGATE.search(body)
    if match:
        escape = match.group(0).decode("ascii")
        # Offsets in `body` are the original body's (blanks keep them): as characters of `text`.
        line, column = _position(text, len(body[:match.start()].decode("utf-8", "replace")))
        raise JsonBodyError(f"The body has a lone surrogate \\{escape[1:]} at line {line}, column {column}: "
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
