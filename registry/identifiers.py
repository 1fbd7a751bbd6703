"""What an identifier may not hold: characters that make it look like another one.

Team slugs, job and dataset namespaces and names, and a contract's name parts
and owner identify things people pick from lists and type into tokens and
pipelines. A bidirectional control (after U+202E RIGHT-TO-LEFT OVERRIDE the rest
of a name is drawn backwards) or a combining mark (U+0336 drawn through a letter)
would let one identifier pass for another on screen, so both are refused,
naming the character and where it is. An identifier of plain ASCII, the usual
case, costs one `isascii()`.
"""

from __future__ import annotations

import unicodedata

from django.core.exceptions import ValidationError

__all__ = ["BIDI_CONTROLS", "identifier_problem", "validate_identifier"]

BIDI_CONTROLS = frozenset(
    "\u061c"  # ARABIC LETTER MARK
    "\u200e\u200f"  # LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings, pop, overrides
    "\u2066\u2067\u2068\u2069"  # isolates
)


def identifier_problem(value: str) -> str:
    """Why `value` cannot be an identifier ("contains the bidirectional control U+202E
    (RIGHT-TO-LEFT OVERRIDE) at character 9"), or "" when it can."""
    if value.isascii():
        return ""
    for position, char in enumerate(value, 1):
        if char in BIDI_CONTROLS:
            return (f"contains the bidirectional control U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')}) "
                    f"at character {position}; identifiers may not change the direction of text")
        if unicodedata.category(char).startswith("M"):
            return (f"contains the combining mark U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')}) "
                    f"at character {position}; identifiers may not hold combining marks "
                    "(write an accented letter as one character)")
    return ""


def validate_identifier(value: str) -> None:
    """A model field validator: ValidationError saying what `value` holds and where."""
    problem = identifier_problem(value or "")
    if problem:
        raise ValidationError(f"This identifier {problem}.", code="unsafe_identifier")
