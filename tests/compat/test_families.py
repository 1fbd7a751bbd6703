"""The families of rules where the checker used to cry wolf: for each, a safe and a breaking
variant, and the checker must give exactly the labelled directions (no alarm on the safe one,
the break on the breaking one). The pairs are corpus cases, so their labels are proved by the
oracle and their counterexamples checked in test_corpus.py."""

from __future__ import annotations

import pytest
from registry_client.compat import compare

from .corpus import load_cases

CASES = {case.id: case for case in load_cases()}

FAMILIES = {
    "equivalent rewrites": [
        "equivalent_type_list_naming_a_type_and_its_subtype",
        "equivalent_any_of_branch_narrowed_where_another_still_admits",
        "equivalent_one_range_split_into_two_adjacent_branches",
        "equivalent_contains_counts_without_contains",
        "equivalent_draft7_additional_items_beside_a_single_items_schema",
        "one_of_branch_split",
        "any_of_merged_into_one_branch",
        "equivalent_any_of_branch_narrowed_nothing_else_admits",
        "equivalent_one_range_split_with_a_gap",
    ],
    "unsatisfiable subschemas": [
        "unsatisfiable_crossed_bounds_equal_false",
        "unsatisfiable_two_different_contradictions_are_equal",
        "unsatisfiable_empty_array_written_two_ways",
        "unsatisfiable_contradiction_resolved",
        "unsatisfiable_empty_array_rule_opened_to_one_item",
    ],
    "identifiers": [
        "identifier_draft4_id_fragment_to_2020_anchor",
        "identifier_spelled_per_draft_is_an_annotation",
        "identifier_draft7_plain_name_moved_to_another_definition",
    ],
    "object keywords": [
        "object_property_names_enum_closes_like_additional_false",
        "object_pattern_properties_removed_falls_to_the_same_additional",
        "object_property_names_enum_misses_a_declared_name",
        "object_pattern_properties_added_to_an_open_object",
        "object_pattern_properties_added_beside_closed_additional",
    ],
    "arrays": [
        "array_prefix_items_grow_under_unevaluated_items_schema",
        "contains_max_contains_no_array_can_reach",
        "array_prefix_items_grow_under_unevaluated_items_false",
        "array_prefix_items_shrink_under_unevaluated_items_false",
        "contains_min_contains_lowered",
    ],
    "unevaluated keywords": [
        "unevaluated_properties_false_equals_additional_false",
        "unevaluated_properties_schema_property_added_with_the_same_schema",
        "ap_unevaluated_properties_added",
        "unevaluated_properties_false_property_removed",
        "unevaluated_properties_false_property_added",
    ],
    "conditionals": [
        "then_keyword_that_cannot_apply_where_if_holds",
        "else_keyword_that_cannot_apply_where_if_fails",
        "if_negated_with_then_and_else_swapped",
        "then_tightened_where_if_holds",
        "if_condition_changed",
    ],
    "regular expressions": [
        "pattern_alternation_reordered",
        "pattern_digit_class_to_escape",
        "pattern_widened",
        "pattern_bounded_repetition_narrowed",
        "pattern_anchor_added",
    ],
}
PAIRS = [(family, case_id) for family, ids in FAMILIES.items() for case_id in ids]


def directions(changes) -> tuple[bool, bool]:
    return any(c.breaks_backward for c in changes), any(c.breaks_forward for c in changes)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_has_a_safe_and_a_breaking_variant(family):
    cases = [CASES[i] for i in FAMILIES[family]]
    assert any(not c.breaks_backward and not c.breaks_forward for c in cases)
    assert any(c.breaks_backward or c.breaks_forward for c in cases)


@pytest.mark.parametrize(("family", "case_id"), PAIRS)
def test_the_checker_gives_exactly_the_labelled_directions(family, case_id):
    case = CASES[case_id]
    assert directions(compare(case.old, case.new)) == (case.breaks_backward, case.breaks_forward)
