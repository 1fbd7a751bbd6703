"""The checker's behaviour that the corpus does not show case by case: modes, advice, documents."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from registry_client.compat import (
    MODES,
    check_compatibility,
    compare,
    to_json_schema,
    version_bump_problem,
)
from registry_client.compat.documents import DocumentError

CLIENT = Path(__file__).resolve().parents[2] / "client"
V1 = {"type": "object", "properties": {"id": {"type": "string"}, "status": {"enum": ["new", "paid"]}}}
V2_WIDER = {"type": "object", "properties": {"id": {"type": "string"}, "status": {"enum": ["new", "paid", "void"]}}}
V3_NARROWER = {"type": "object", "properties": {"id": {"type": "string"}, "status": {"enum": ["new", "void"]}}}


def kinds(changes):
    return {(c.path, c.kind, c.breaks_backward, c.breaks_forward) for c in changes}


def test_the_client_package_never_imports_django():
    code = "import sys, registry_client.compat, registry_client.compat.cli; sys.exit('django' in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(CLIENT)})


def test_each_change_names_its_path_kind_and_directions():
    assert kinds(compare(V1, V2_WIDER)) == {("/properties/status/enum", "enum_value_added", False, True)}


@pytest.mark.parametrize(("mode", "compatible"), [
    ("NONE", True), ("BACKWARD", True), ("FORWARD", False), ("FULL", False),
])
def test_the_mode_decides_which_direction_counts(mode, compatible):
    report = check_compatibility([V1], V2_WIDER, mode)
    assert report.compatible is compatible
    assert [c.breaking for c in report.changes] == [not compatible]


def test_the_verdict_says_which_direction_broke():
    report = check_compatibility([V1], V2_WIDER, "FORWARD")
    assert report.verdict.startswith("breaking under FORWARD")
    assert "consumers validating against the old version" in report.verdict
    assert check_compatibility([V1], V2_WIDER, "BACKWARD").verdict.startswith("safe under BACKWARD")
    assert check_compatibility([V1], V2_WIDER, "NONE").verdict.startswith("not checked")


def test_transitive_modes_compare_with_every_earlier_version():
    # V1 -> V2 widens, V2 -> V3 narrows back: only the step from V1 removes "paid".
    history = [V1, V2_WIDER]
    assert check_compatibility(history, V3_NARROWER, "BACKWARD").compatible is False
    plain = check_compatibility([V2_WIDER], {**V2_WIDER, "title": "Order"}, "BACKWARD")
    assert plain.compatible
    transitive = check_compatibility([V3_NARROWER, V2_WIDER], {**V2_WIDER, "title": "Order"}, "BACKWARD_TRANSITIVE")
    assert transitive.compatible is True
    broken = check_compatibility([V2_WIDER, V1], V3_NARROWER, "BACKWARD_TRANSITIVE")
    assert {c.against for c in broken.changes if c.breaking} == {"previous[0]", "previous[1]"}
    assert check_compatibility([V2_WIDER, V1], V3_NARROWER, "BACKWARD").changes[0].against is None


def test_transitive_changes_name_the_contract_version_they_were_compared_with():
    def doc(version, payload):
        return {"schema": {"name": "retail.checkout.order", "version": version, "schema_type": "event"}, "payload": payload}
    report = check_compatibility([doc("1.0", V2_WIDER), doc("1.1", V1)], doc("2.0", V3_NARROWER), "FULL_TRANSITIVE")
    assert {c.against for c in report.changes} == {"1.0", "1.1"}


def test_an_unknown_mode_is_refused_with_the_valid_ones_listed():
    with pytest.raises(ValueError, match="BACKWARD_TRANSITIVE"):
        check_compatibility([V1], V1, "SIDEWAYS")
    assert len(MODES) == 7


def test_the_first_version_is_always_accepted():
    report = check_compatibility([], V1, "FULL")
    assert report.compatible and report.suggested_bump == "none"


# The same enum restated (a change of spelling, not of what is valid).
V1_RESTATED = {"type": "object", "properties": {"id": {"type": "string"}, "status": {"enum": ["paid", "new"]}}}


@pytest.mark.parametrize(("new", "mode", "bump"), [
    (V1, "BACKWARD", "none"),
    ({**V1, "description": "An order."}, "FULL", "patch"),
    (V1_RESTATED, "FULL", "minor"),
    (V2_WIDER, "FORWARD", "major"),
    (V2_WIDER, "NONE", "major"),
    (V3_NARROWER, "BACKWARD", "major"),
])
def test_the_suggested_bump_is_the_smallest_the_changes_allow(new, mode, bump):
    assert check_compatibility([V1], new, mode).suggested_bump == bump


@pytest.mark.parametrize("mode", MODES)
def test_a_change_that_breaks_either_direction_needs_a_major_whatever_the_mode(mode):
    # V2_WIDER breaks forward only (a reader of V1 fails on "void"), V3_NARROWER
    # breaks both: the gate may let them through under some modes, the advice never.
    assert check_compatibility([V1], V2_WIDER, mode).suggested_bump == "major"
    assert check_compatibility([V1], V3_NARROWER, mode).suggested_bump == "major"
    backward_only = {**V1, "required": ["id"]}
    assert check_compatibility([V1], backward_only, mode).suggested_bump == "major"


def test_a_forward_only_break_under_backward_is_compatible_but_needs_a_major():
    report = check_compatibility([V1], V2_WIDER, "BACKWARD")
    assert report.compatible
    problem = version_bump_problem("1.2", "1.3", report)
    assert "breaks forward compatibility" in problem and "needs a major release (2.0 or later)" in problem
    assert version_bump_problem("1.2", "2.0", report) is None


def test_a_version_number_that_understates_a_breaking_change_is_refused():
    report = check_compatibility([V1], V3_NARROWER, "BACKWARD")
    problem = version_bump_problem("1.2", "1.3", report)
    assert "needs a major release (2.0 or later)" in problem
    assert version_bump_problem("1.2", "2.0", report) is None
    assert version_bump_problem("1.2", "2.0.0rc1", report) is None


def test_a_patch_number_for_a_restated_schema_is_refused_and_a_minor_accepted():
    # What was V2_WIDER here breaks forward, so it now needs a major; a restatement
    # that breaks neither direction is the change a minor is for.
    report = check_compatibility([V1], V1_RESTATED, "BACKWARD")
    assert "at least a minor release (1.3 or later)" in version_bump_problem("1.2", "1.2.1", report)
    assert version_bump_problem("1.2", "1.3", report) is None


def test_a_version_that_does_not_grow_is_refused():
    report = check_compatibility([V1], {**V1, "title": "x"}, "BACKWARD")
    assert "not greater than the published 1.2" in version_bump_problem("1.2", "1.2", report)
    assert version_bump_problem("1.2", "1.2.1", report) is None
    with pytest.raises(ValueError, match="not a version number"):
        version_bump_problem("1.2", "one", report)


def test_a_keyword_the_checker_cannot_reason_about_breaks_both_ways_and_says_so():
    # beside an in-place applicator (allOf), what is left unevaluated depends on every branch
    change, = compare({"type": "object", "allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
                      {"type": "object", "allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": {"type": "string"}})
    assert (change.breaks_backward, change.breaks_forward) == (True, True)
    assert "does not reason about it" in change.reason


def test_unevaluated_properties_with_no_in_place_applicator_reads_as_additional_properties():
    changes = compare({"type": "object", "unevaluatedProperties": False},
                      {"type": "object", "unevaluatedProperties": {"type": "string"}})
    assert [(c.kind, c.breaks_backward, c.breaks_forward) for c in changes] == [("additional_properties_opened", False, True)]


def test_annotations_never_break():
    changes = compare({"type": "string", "title": "a", "examples": ["x"]},
                      {"type": "string", "title": "b", "deprecated": True, "x-pii": True})
    assert changes and all(not c.breaks_backward and not c.breaks_forward for c in changes)


def test_self_referencing_definitions_do_not_loop():
    loop = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    changes = compare(loop, {"type": "string"})
    assert any(c.kind == "unresolvable_ref" for c in changes)


def test_an_external_reference_that_changes_is_breaking_both_ways():
    change, = compare({"$ref": "https://example.com/a.json"}, {"$ref": "https://example.com/b.json"})
    assert (change.breaks_backward, change.breaks_forward) == (True, True)


def test_a_draft7_schema_and_its_2020_translation_are_equal():
    old = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
           "type": "array", "items": [{"$ref": "#/definitions/n"}], "additionalItems": False}
    new = {"$defs": {"n": {"type": "integer"}}, "type": "array", "prefixItems": [{"$ref": "#/$defs/n"}], "items": False}
    assert [c for c in compare(old, new) if c.breaks_backward or c.breaks_forward] == []


# ----------------------------------------------------------------- contract documents

def frame(columns, **config):
    return {"schema": {"name": "lab.analytics.cell_count", "version": "1.0", "schema_type": "dataframe"},
            "config": {"strict": "filter", "coerce": True, **config}, "columns": columns}


def test_dataframe_columns_become_a_row_schema():
    schema = to_json_schema(frame([
        {"name": "count", "dtype": "int64", "nullable": False, "checks": [{"ge": 0}]},
        {"name": "viability", "dtype": "float64", "nullable": True, "checks": [{"ge": 0.0}, {"le": 1.0}]},
        {"name": "sample", "dtype": "str", "required": False, "checks": [{"str_matches": "S-[0-9]+"}, {"isin": ["S-1", "S-2"]}]},
        {"name": "when", "dtype": "datetime64[ns]"},
        {"name": "tags", "dtype": "List[str]"},
    ], strict=True))
    assert schema["required"] == ["count", "viability", "when", "tags"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["count"] == {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
    assert schema["properties"]["viability"] == {"type": ["number", "null"], "minimum": 0.0, "maximum": 1.0}
    assert schema["properties"]["sample"] == {"type": "string", "pattern": "^(?:S-[0-9]+)", "enum": ["S-1", "S-2"]}
    assert schema["properties"]["when"] == {"type": "string", "format": "date-time"}
    assert schema["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}


def test_a_nullable_column_with_a_value_list_still_accepts_null():
    schema = to_json_schema(frame([{"name": "grade", "dtype": "str", "nullable": True, "checks": [{"isin": ["A", "B"]}]}]))
    assert schema["properties"]["grade"] == {"type": ["string", "null"], "enum": ["A", "B", None]}


def test_dataframe_changes_go_through_the_same_engine():
    old = frame([{"name": "count", "dtype": "int64", "nullable": True}])
    made_strict = frame([{"name": "count", "dtype": "int64", "nullable": False, "checks": [{"ge": 0}]}])
    found = kinds(compare(old, made_strict))
    assert ("/properties/count/type", "nullability_removed", True, False) in found
    assert ("/properties/count/minimum", "minimum_tightened", True, False) in found
    widened = frame([{"name": "count", "dtype": "float64", "nullable": True}])
    assert {(c.breaks_backward, c.breaks_forward) for c in compare(old, widened)} == {(False, True)}


def test_a_new_optional_column_under_filter_is_safe_and_under_strict_breaks_forward():
    base = [{"name": "a", "dtype": "str"}]
    more = [*base, {"name": "b", "dtype": "str", "required": False}]
    assert not any(c.breaks_forward for c in compare(frame(base, strict="filter"), frame(more, strict="filter")))
    strict = compare(frame(base, strict=True), frame(more, strict=True))
    assert any(c.breaks_forward for c in strict) and not any(c.breaks_backward for c in strict)


def test_whole_frame_rules_count_as_breaking_both_ways_when_they_change():
    cols = [{"name": "a", "dtype": "str"}]
    change, = compare(frame(cols, ordered=False), frame(cols, ordered=True))
    assert (change.breaks_backward, change.breaks_forward) == (True, True)


def test_an_unknown_dtype_is_an_error_naming_the_column():
    with pytest.raises(DocumentError, match="column 'a'.*'complex128'"):
        to_json_schema(frame([{"name": "a", "dtype": "complex128"}]))


def test_api_contracts_compare_request_response_and_callbacks_with_refs_repointed():
    def api(amount_type):
        return {"schema": {"name": "retail.payments.refund_api", "version": "1.0", "schema_type": "api"},
                "request": {"$defs": {"money": {"type": amount_type}}, "type": "object",
                            "properties": {"amount": {"$ref": "#/$defs/money"}}},
                "response": {"type": "object"},
                "callbacks": {"settled": {"type": "object"}}}
    schema = to_json_schema(api("integer"))
    assert schema["properties"]["request"]["properties"]["amount"] == {"$ref": "#/properties/request/$defs/money"}
    change, = [c for c in compare(api("integer"), api("number")) if c.breaks_forward]
    assert change.path == "/properties/request/properties/amount/type"


def test_a_document_without_schema_type_is_refused():
    with pytest.raises(DocumentError, match="schema_type"):
        to_json_schema({"schema": {"name": "a.b", "version": "1.0"}, "payload": {}})
    with pytest.raises(DocumentError, match="unknown schema_type 'table'"):
        to_json_schema({"schema": {"name": "a.b", "schema_type": "table"}})


def test_mutually_recursive_definitions_are_compared_in_rounds_not_by_expanding_every_path():
    # 30 definitions, each a nullable object pointing at two others: expanding every path
    # through them would never finish; the fixed point over reference pairs does.
    def graph(extra=None):
        defs = {f"d{i}": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
            "a": {"$ref": f"#/$defs/d{(i + 1) % 30}"}, "b": {"$ref": f"#/$defs/d{(i + 3) % 30}"}}}]}
            for i in range(30)}
        if extra:
            defs["d17"]["oneOf"][1]["properties"]["c"] = extra
        return {"$defs": defs, "$ref": "#/$defs/d0"}
    assert compare(graph(), graph(), budget=0) == []
    changes = compare(graph(), graph({"type": "string"}), budget=0)  # unbounded: this is about the rounds
    assert any(c.breaks_backward for c in changes) and not any(c.breaks_forward for c in changes)


def test_a_change_behind_a_reference_is_reported_where_it_is_first_used_and_referred_to_after():
    old = {"$defs": {"id": {"type": "string"}}, "type": "object",
           "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"$ref": "#/$defs/id"}}}
    new = {"$defs": {"id": {"type": "integer"}}, "type": "object",
           "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"$ref": "#/$defs/id"}}}
    first, second = compare(old, new)
    assert (first.path, first.kind) == ("/properties/a/type", "type_changed")
    assert (second.path, second.kind) == ("/properties/b", "reference_changed")
    assert "as reported at /properties/a" in second.reason


# ----------------------------------------------------------------- errors, budget, ECMA-262 patterns

def _deep_alternatives(depth: int, leaf: str) -> dict:
    if depth == 0:
        return {"type": leaf}
    inner = _deep_alternatives(depth - 1, leaf)
    return {"anyOf": [{"type": "object", "properties": {"a": inner}},
                      {"type": "object", "properties": {"b": inner}, "required": ["b"]},
                      {"type": "array", "items": inner}]}


def test_a_pathological_pair_stops_at_its_budget_in_steps_and_is_breaking_both_ways():
    from registry_client.compat.budget import Meter
    from registry_client.compat.engine import compare as engine_compare

    old, new = _deep_alternatives(8, "integer"), _deep_alternatives(8, "number")
    meter = Meter(5000)
    changes = engine_compare(old, new, meter=meter)
    # the budget is work, not time: the walk stops within a few steps of it on any machine
    assert meter.steps <= 5000 + 100, meter.steps
    over = [c for c in changes if c.kind == "budget_exceeded"]
    assert over and all(c.breaks_backward and c.breaks_forward for c in over)
    assert "not decided within 5000 steps: treated as breaking both ways" in over[0].reason
    report = check_compatibility([old], new, "FORWARD", budget=5000)
    assert not report.compatible


def test_the_budget_comes_from_the_environment_when_not_given(monkeypatch):
    monkeypatch.setenv("REGISTRY_COMPAT_BUDGET", "300")
    changes = compare(_deep_alternatives(8, "integer"), _deep_alternatives(8, "number"))
    assert any(c.kind == "budget_exceeded" and "within 300 steps" in c.reason for c in changes)
    monkeypatch.setenv("REGISTRY_COMPAT_BUDGET", "0")  # unbounded
    assert compare({"type": "string"}, {"type": "string", "title": "s"})[0].kind == "annotation_changed"


def test_a_budget_in_seconds_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="the compare budget is a number of steps .* not 0.5"):
        compare({"type": "string"}, {"type": "integer"}, budget=0.5)


def test_a_failure_inside_the_checker_breaks_both_ways_and_says_so(monkeypatch):
    from registry_client.compat.engine import walk

    def fail(*args):
        raise TypeError("boom")

    monkeypatch.setattr(walk, "_diff_checked", fail)
    change, = compare({"type": "string"}, {"type": "integer"})
    assert (change.kind, change.breaks_backward, change.breaks_forward) == ("checker_error", True, True)
    assert change.reason == "breaking both ways: the checker could not decide (TypeError: boom)"
    report = check_compatibility([{"type": "string"}], {"type": "integer"}, "FORWARD")
    assert not report.compatible and "checker_error" in report.verdict


def test_malformed_keyword_values_never_raise():
    for old, new in [({"maxLength": 1}, {"maxLength": {}}), ({"required": 3}, {"required": ["a"]}),
                     ({"properties": {"a": 1}}, {"properties": []}), ({"definitions": {"a": {"definitions": 1}}, "$ref": "#/definitions/a/definitions/b"}, {})]:
        changes = compare(old, new)
        assert all(c.kind and c.reason for c in changes)


def test_ecma_262_patterns_are_read_as_ecma_262():
    named = {"type": "object", "patternProperties": {"^(?<scope>x)-": {"type": "string"}}}
    changes = compare(named, {**named, "properties": {"x-a": {"type": "string"}}})
    assert [c for c in changes if c.breaks_backward or c.breaks_forward] == []
    change, = compare({"type": "string", "enum": ["2024"]}, {"type": "string", "enum": ["2024"], "pattern": "^(?<y>\\d{4})$"})
    assert not change.breaks_backward


@pytest.mark.parametrize("ref", ["#/definitions/a/definitions/b", "#/definitions/a/properties/x", "#/items/0", "#/allOf",
                                 "#/definitions/a/definitions/b/type", "#/definitions", "#/components/s", "#nowhere",
                                 "item.json", "../up.json#/x", "urn:example:thing", "#/definitions/%7Ea"])
def test_references_into_any_container_never_raise(ref):
    def doc(t):
        return {"$id": "https://example.com/root/order.json",
                "definitions": {"a": {"definitions": {"b": {"type": t}}, "properties": {"x": {"type": t}}},
                                "~a": {"type": t}, "item": {"$id": "item.json", "type": t}},
                "components": {"s": {"type": t}}, "items": [{"type": t}], "allOf": [{}],
                "type": "object", "properties": {"p": {"$ref": ref}}}
    for draft in (None, "http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-07/schema#"):
        old, new = doc("string"), doc("integer")
        if draft:
            old["$schema"] = new["$schema"] = draft
        changes = compare(old, new)
        assert not any(c.kind == "checker_error" for c in changes), changes


def test_a_proven_break_carries_a_witness_valid_under_one_version_and_invalid_under_the_other():
    import jsonschema

    old = {"type": "object", "properties": {"v": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    new = {"type": "object", "properties": {"v": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}}}}
    change, = check_compatibility([old], new, "FULL").changes
    assert change.breaking and change.proof == "proven" and change.witness_direction == "backward"
    assert jsonschema.Draft202012Validator(old).is_valid(change.witness)
    assert not jsonschema.Draft202012Validator(new).is_valid(change.witness)
    assert change.to_dict()["witness"] == change.witness


def test_a_direction_the_mode_does_not_require_proves_nothing():
    # a lookahead is outside the patterns the checker compares: the backward break is only assumed
    old, new = {"type": "string", "pattern": "^a(?=b)"}, {"type": "string", "pattern": "^a"}
    change, = check_compatibility([old], new, "BACKWARD").changes
    # the forward break has a witness, but under BACKWARD only the (assumed) backward break counts
    assert (change.proof, change.witness) == ("assumed", None)
    assert check_compatibility([old], new, "FORWARD").changes[0].proof == "proven"


def test_no_witness_search_leaves_every_breaking_change_assumed_and_safe_changes_unmarked():
    report = check_compatibility([V1], V3_NARROWER, "FULL", witness_budget=0)
    assert {c.proof for c in report.changes if c.breaking} == {"assumed"}
    assert all(c.proof is None for c in check_compatibility([V1], V2_WIDER, "BACKWARD").changes)
