"""python manage.py check_compat OLD NEW [--mode] [--format]: output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

CLIENT = Path(__file__).resolve().parents[2] / "client"

OLD = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "qty": {"type": "integer"}}}
WIDER = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "qty": {"type": "number"}}}
NARROWER = {"type": "object", "required": ["id", "qty"], "properties": {"id": {"type": "string"}, "qty": {"type": "integer"}}}


def write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document) if name.endswith(".json") else yaml.safe_dump(document))
    return str(path)


def run(*args):
    out, err = StringIO(), StringIO()
    try:
        call_command("check_compat", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def frame(version, columns, strict="filter"):
    return {"schema": {"name": "lab.analytics.cell_count", "domain": "lab", "subdomains": ["analytics"],
                       "entity": "cell_count", "version": version, "owner": "lab-data", "schema_type": "dataframe"},
            "config": {"strict": strict, "coerce": True}, "columns": columns}


def test_a_compatible_change_exits_zero_and_says_so(tmp_path):
    code, out, _ = run(write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER))
    assert code == 0
    # Compatible under BACKWARD, yet it breaks forward: the advice counts both directions.
    assert out.startswith("mode BACKWARD: compatible; suggested bump: major")
    assert "/properties/qty/type  type_widened  (breaks forward)" in out


def test_a_breaking_change_exits_one_and_marks_the_change_that_broke(tmp_path):
    code, out, _ = run(write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER), "--mode", "FULL")
    assert code == 1
    assert "! /properties/qty/type  type_widened  (breaks forward)" in out
    assert "breaking under FULL" in out


def test_json_output_has_the_documented_shape(tmp_path):
    code, out, _ = run(write(tmp_path, "old.yaml", OLD), write(tmp_path, "new.yaml", NARROWER), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert {"mode", "compatible", "suggested_bump", "changes"} <= set(report)
    assert report["mode"] == "BACKWARD" and report["compatible"] is False and report["suggested_bump"] == "major"
    change, = report["changes"]
    assert {k: change[k] for k in ("path", "kind", "breaks_backward", "breaks_forward")} == {
        "path": "/required", "kind": "required_added", "breaks_backward": True, "breaks_forward": False}
    assert "'qty' is now required" in change["reason"]


def test_json_output_shows_the_witness_of_a_proven_break(tmp_path):
    code, out, _ = run(write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER), "--mode", "FULL",
                       "--format", "json")
    assert code == 1
    change, = json.loads(out)["changes"]
    assert (change["proof"], change["witness_direction"]) == ("proven", "forward")
    # the witness is valid under the new version and fails the old one
    assert change["witness"]["qty"] % 1 != 0 and isinstance(change["witness"]["id"], str)


def test_a_break_without_a_witness_is_shown_as_assumed(tmp_path):
    # a lookahead is outside the patterns the checker compares: the backward break is only assumed
    old, new = {"type": "string", "pattern": "^a(?=b)"}, {"type": "string", "pattern": "^a"}
    code, out, _ = run(write(tmp_path, "old.json", old), write(tmp_path, "new.json", new))
    assert code == 1
    assert "assumed: the checker could not prove this safe and found no witness document" in out
    code, out, _ = run(write(tmp_path, "old.json", old), write(tmp_path, "new.json", new), "--mode", "FORWARD")
    assert "proven forward:" in out


def test_modes_are_accepted_in_any_case_and_none_never_breaks(tmp_path):
    code, out, _ = run(write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", NARROWER), "--mode", "none")
    assert code == 0 and "not checked" in out


def test_dataframe_contract_documents_are_compared_through_their_columns(tmp_path):
    old = frame("1.0", [{"name": "count", "dtype": "int64", "nullable": False}])
    new = frame("1.1", [{"name": "count", "dtype": "int64", "nullable": True, "description": "Cells counted."}])
    code, out, _ = run(write(tmp_path, "v1.yaml", old), write(tmp_path, "v2.yaml", new), "--mode", "BACKWARD", "--format", "json")
    assert code == 0
    report = json.loads(out)
    # A column that may now be null is safe under BACKWARD, but readers of 1.0 fail on a null:
    # the advice counts both directions, so 1.1 understates it.
    assert report["compatible"] is True and report["suggested_bump"] == "major"
    assert "needs a major release (2.0 or later)" in report["version_problem"]
    assert {c["kind"] for c in report["changes"]} == {"nullability_added", "annotation_changed"}


def test_a_version_number_that_understates_the_change_is_reported(tmp_path):
    old = frame("1.0", [{"name": "count", "dtype": "int64"}])
    new = frame("1.1", [{"name": "count", "dtype": "int32"}])
    code, out, _ = run(write(tmp_path, "v1.yaml", old), write(tmp_path, "v2.yaml", new))
    assert code == 1
    assert "version: version 1.1 understates the change" in out


def test_an_event_contract_and_a_plain_schema_compare_by_payload(tmp_path):
    event = {"schema": {"name": "retail.checkout.order_placed", "version": "1.0", "schema_type": "event"}, "payload": OLD}
    code, _, _ = run(write(tmp_path, "event.yaml", event), write(tmp_path, "plain.json", OLD), "--mode", "FULL")
    assert code == 0


@pytest.mark.parametrize(("name", "content", "message"), [
    ("broken.json", "{not json", "broken.json: not valid JSON (line 1, column 2"),
    ("broken.yaml", "a: [1, 2", "broken.yaml: line 2, column 1: not valid YAML"),
    ("list.yaml", "- 1\n- 2\n", "list.yaml: expected a JSON Schema or a contract document (a mapping), got list"),
    ("bad_schema.json", json.dumps({"type": "object", "properties": {"a": {"type": "strin"}}}),
     "bad_schema.json: the schema is not a valid JSON Schema at properties/a/type"),
    ("bad_contract.yaml", yaml.safe_dump({"schema": {"name": "a.b", "schema_type": "spreadsheet"}}),
     "bad_contract.yaml: unknown schema_type 'spreadsheet'"),
    ("bad_dtype.yaml", yaml.safe_dump(frame("1.0", [{"name": "x", "dtype": "decimal"}])),
     "column 'x': dtype 'decimal' has no JSON Schema mapping"),
])
def test_an_invalid_input_exits_two_with_a_message_naming_the_file_and_the_problem(tmp_path, name, content, message):
    bad = tmp_path / name
    bad.write_text(content)
    code, out, err = run(write(tmp_path, "old.json", OLD), str(bad))
    assert code == 2
    assert out == ""
    assert message in err


def test_a_missing_file_exits_two(tmp_path):
    code, _, err = run(write(tmp_path, "old.json", OLD), str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml: no such file" in err


def test_an_unknown_mode_is_refused():
    with pytest.raises(CommandError, match="invalid choice: 'SIDEWAYS'"):
        call_command("check_compat", "a.json", "b.json", "--mode", "SIDEWAYS")


def test_the_same_check_runs_without_django(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "registry_client.compat", write(tmp_path, "old.json", OLD),
         write(tmp_path, "new.json", NARROWER), "--format", "json"],
        capture_output=True, text=True, env={"PYTHONPATH": str(CLIENT)},
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["changes"][0]["kind"] == "required_added"


def test_a_failure_inside_the_checker_exits_three_naming_the_files_and_the_path(tmp_path, monkeypatch):
    from registry_client.compat.engine import walk

    def fail(*args):
        raise TypeError("boom")

    monkeypatch.setattr(walk, "_diff_checked", fail)
    old, new = write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER)
    code, out, err = run(old, new)
    assert code == 3
    assert f"the checker could not compare {old} and {new} at /" in err
    assert "the checker could not decide (TypeError: boom)" in err


def test_an_unexpected_failure_outside_the_engine_exits_three(tmp_path, monkeypatch):
    from registry_client.compat import cli

    def fail(*args, **kwargs):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(cli, "check_compatibility", fail)
    code, _, err = run(write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER))
    assert code == 3 and "RuntimeError: unexpected" in err


def test_ecma_262_patterns_are_not_refused_as_invalid(tmp_path):
    old = {"type": "string"}
    new = {"type": "string", "pattern": "^(?<year>\\d{4})-(?<month>\\d{2})$"}
    code, out, err = run(write(tmp_path, "old.json", old), write(tmp_path, "new.json", new))
    assert code == 1 and err == ""
    assert "pattern_added" in out


def test_the_publish_gate_accepts_ecma_262_patterns():
    from contracts_app.gates import _json_schema_problems

    payload = {"type": "object", "properties": {"month": {"type": "string", "pattern": "^(?<y>\\d{4})-\\d{2}$"}}}
    assert _json_schema_problems({"payload": payload}, "<doc>", "a.b") == []
    assert _json_schema_problems({"payload": {"type": "string", "pattern": "(unclosed"}}, "<doc>", "a.b")


def test_the_publish_gate_treats_a_failure_inside_the_checker_as_breaking_both_ways(monkeypatch):
    from registry_client.compat.engine import walk

    from contracts_app.publishing import check_in_required_modes

    def fail(*args):
        raise TypeError("boom")

    monkeypatch.setattr(walk, "_diff_checked", fail)
    report = check_in_required_modes(None, [OLD], WIDER)
    assert not report.compatible
    change, = report.changes
    assert (change.kind, change.breaks_backward, change.breaks_forward) == ("checker_error", True, True)
    assert change.reason.startswith("breaking both ways: the checker could not decide (TypeError: boom)")


def test_the_command_reports_a_change_its_budget_decided_in_each_format(tmp_path):
    from .test_engine import _deep_alternatives

    old = write(tmp_path, "old.json", _deep_alternatives(6, "integer"))
    new = write(tmp_path, "new.json", _deep_alternatives(6, "number"))
    outputs = {}
    for fmt in ("text", "json", "markdown"):
        code, outputs[fmt], _ = run(old, new, "--mode", "FULL", "--format", fmt, "--budget", "200", "--witness-budget", "0")
        assert code == 1 and "not decided within 200 steps: treated as breaking both ways" in outputs[fmt]
    assert json.loads(outputs["json"])["counts"]["decided_by_budget"] >= 1
    assert "#### Decided by a budget" in outputs["markdown"]


def test_the_command_refuses_a_budget_in_seconds(tmp_path):
    old, new = write(tmp_path, "old.json", OLD), write(tmp_path, "new.json", WIDER)
    with pytest.raises(CommandError, match="not a number of steps"):
        call_command("check_compat", old, new, "--budget", "0.5", stdout=StringIO(), stderr=StringIO())
