"""Regular-expression containment for the common subset, held to the ECMA-262 engine itself."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from registry_client.compat import compare, ecma
from registry_client.compat.engine.patterns import contained

SUBSET = [
    "", "^a", "a", "^a$", "^ab", "b$", "^[a-z]+$", "^[a-z0-9]+$", "^[a-c]*$", "^(a|b)*$", "^[ab]*$",
    "^\\d{3}$", "^[0-9]{2,4}$", "^\\d+$", "^x{2,}", "xx", "^(foo|bar)$", "^(bar|foo)$", "^[^a]$", "^.$",
    "^\\w+@\\w+$", "@", "^a|b$", "a|b", "^(?:ab)?c$", "^a?b?c$", "^[A-Z][a-z]*$", "^\\s*$", "^\\S+$",
]
ALPHABET = "ab c0129xfoAZ@_\n-"


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("^[a-z]+$", "^[a-z0-9]+$", True), ("^[a-z0-9]+$", "^[a-z]+$", False),
    ("^(foo|bar)$", "^(bar|foo)$", True), ("^\\d{3}$", "^[0-9]{2,4}$", True),
    ("^a", "a", True), ("a", "^a", False), ("^x", "", True), ("", "^x", False),
    ("^[^\\n]$", "^.$", False),  # `.` refuses every line terminator, [^\n] only one
])
def test_containment_of_common_patterns(a, b, expected):
    assert contained(a, b) is expected


@pytest.mark.parametrize("pattern", ["(?=a)a", "\\bword", "(a)\\1", "^a(?!b)"])
def test_patterns_outside_the_subset_are_undecided_and_a_change_to_them_breaks_both_ways(pattern):
    assert contained(pattern, "a") is None
    change, = compare({"type": "string", "pattern": pattern}, {"type": "string", "pattern": "^a"})
    assert (change.breaks_backward, change.breaks_forward) == (True, True)
    assert "cannot compare" in change.reason


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(pair=st.sampled_from(list(itertools.product(SUBSET, SUBSET))), text=st.text(alphabet=ALPHABET, max_size=6))
def test_a_contained_pattern_never_matches_a_string_the_other_refuses(pair, text):
    a, b = pair
    if contained(a, b) and ecma.search(a, text):
        assert ecma.search(b, text), (a, b, text)


def test_every_answer_agrees_with_the_ecma_engine_on_short_strings():
    # exhaustive over a small alphabet: "not contained" must have a witness among them for these pairs
    strings = ["".join(p) for n in range(0, 5) for p in itertools.product("ab0@x", repeat=n)]
    for a, b in itertools.product(SUBSET, SUBSET):
        verdict = contained(a, b)
        assert verdict is not None, (a, b)
        wrong = [s for s in strings if ecma.search(a, s) and not ecma.search(b, s)]
        if verdict:
            assert wrong == [], (a, b, wrong[:3])
