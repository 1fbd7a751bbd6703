"""The labelled corpus is the checker's contract: no breaking case may ever be called safe."""

from __future__ import annotations

from collections import Counter

import pytest
from registry_client.compat import (
    MODES,
    check_compatibility,
    checks_backward,
    checks_forward,
    compare,
)

from .corpus import MISSING, Case, load_cases
from .oracle import judge, make_validator

CASES = load_cases()


def test_the_corpus_is_large_and_covers_every_family():
    tags = Counter(t for case in CASES for t in case.tags)
    assert len(CASES) >= 250
    assert tags["ref"] >= 40
    assert tags["combinators"] >= 40
    assert tags["additionalProperties"] >= 40
    assert all(case.why.strip() for case in CASES)
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("mode", MODES)
def test_no_case_that_breaks_a_direction_is_reported_safe_in_that_direction(mode):
    missed = []
    for case in CASES:
        report = check_compatibility([case.old], case.new, mode)
        must_fail = (checks_backward(mode) and case.breaks_backward) or (checks_forward(mode) and case.breaks_forward)
        if must_fail and report.compatible:
            missed.append(case.id)
        if case.breaks_backward and not any(c.breaks_backward for c in report.changes):
            missed.append(f"{case.id} (backward)")
        if case.breaks_forward and not any(c.breaks_forward for c in report.changes):
            missed.append(f"{case.id} (forward)")
    assert missed == [], f"breaking changes reported safe under {mode}: {missed}"


def test_false_alarms_stay_under_one_percent_in_each_direction():
    alarms = {"backward": [], "forward": []}
    for case in CASES:
        changes = compare(case.old, case.new)
        if any(c.breaks_backward for c in changes) and not case.breaks_backward:
            alarms["backward"].append(case.id)
        if any(c.breaks_forward for c in changes) and not case.breaks_forward:
            alarms["forward"].append(case.id)
    for direction, ids in alarms.items():
        assert len(ids) / len(CASES) < 0.01, f"{direction} false alarms: {ids}"


def test_every_change_carries_a_path_a_kind_and_a_reason():
    for case in CASES:
        for change in compare(case.old, case.new):
            assert change.path == "" or change.path.startswith("/"), (case.id, change)
            assert change.kind and change.reason, (case.id, change)


def test_every_hand_written_counterexample_shows_the_break_it_claims():
    wrong = []
    for case in CASES:
        old, new = make_validator(case.old), make_validator(case.new)
        for direction, source, target, claimed in (
            ("backward", old, new, case.breaks_backward), ("forward", new, old, case.breaks_forward),
        ):
            doc = case.counterexample(direction)
            if doc is MISSING:
                continue
            if not claimed or not source.is_valid(doc) or target.is_valid(doc):
                wrong.append(f"{case.id} {direction}")
    assert wrong == []


def test_every_claimed_break_carries_a_hand_written_counterexample():
    unproved = [
        f"{case.id} {direction}"
        for case in CASES
        for direction, claimed in (("backward", case.breaks_backward), ("forward", case.breaks_forward))
        if claimed and case.counterexample(direction) is MISSING
    ]
    assert unproved == []


def test_the_oracle_never_finds_a_break_that_a_label_denies():
    # A small budget here (targeted values and mutations; hypothesis on every 8th case);
    # bench/compat_oracle.py runs the large one.
    disagreements = []
    for i, case in enumerate(CASES):
        verdict = judge(case, examples=3 if i % 8 == 0 else 0, max_probes=150)
        disagreements += verdict.disagreements()
    assert disagreements == []


def test_the_oracle_catches_a_mislabelled_case():
    wrong = Case("wrong", "labelled safe on purpose", (), {"type": "integer"}, {"type": "integer", "minimum": 0},
                 breaks_backward=False, breaks_forward=False)
    verdict = judge(wrong, examples=0, max_probes=200)
    assert verdict.found_backward and not verdict.found_forward
    assert verdict.backward_witness < 0
    assert "the label says backward is safe" in verdict.disagreements()[0]


def test_the_oracle_refuses_a_claimed_break_nobody_can_show():
    claimed = Case("claimed", "a break that does not exist", (), {"type": "string"}, {"type": "string", "title": "S"},
                   breaks_backward=True, breaks_forward=False, counterexamples={"backward": "x"})
    assert "neither the probes nor a hand-written counterexample" in judge(claimed, examples=0, max_probes=200).disagreements()[0]


def test_draws_the_generator_cannot_honour_prove_nothing_by_themselves():
    # hypothesis-jsonschema ignores prefixItems; every probe is judged under both versions anyway.
    same = {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    case = Case("same", "identical 2020-12 tuples", (), same, dict(same), breaks_backward=False, breaks_forward=False)
    assert judge(case, examples=5, max_probes=300).disagreements() == []
