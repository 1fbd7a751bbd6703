"""A dataframe contract's verdicts are said of its columns, dtypes, nullability and checks,
everywhere the checker speaks (the report, the command line in text, JSON and markdown);
event and api contracts keep their property paths."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from registry_client.compat import check_compatibility
from registry_client.compat.cli import run
from registry_client.safeyaml import load_yaml

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "contracts" / "domains"
CELL_COUNT = ROOT / "lab" / "analytics" / "cell_count"
ORDER_PLACED = ROOT / "retail" / "checkout" / "order_placed"
SCHEMA_WORDS = ("/properties", "/required", "additionalProperties", "property_", "required_removed")


def document(folder: Path, version: str) -> dict:
    return load_yaml((folder / version / "schema.yaml").read_text())


def frames_from(before: dict, edit) -> dict:
    after = copy.deepcopy(before)
    after["schema"]["version"] = "9.0"
    edit(after)
    return after


def test_a_removed_column_is_named_as_a_column_in_the_verdict_and_each_change():
    report = check_compatibility([document(CELL_COUNT, "v1_0")], document(CELL_COUNT, "v2_0"), "FULL")
    assert report.verdict.startswith("breaking under FULL against 1.0: column `vcd` removed")
    assert not any(word in report.verdict for word in SCHEMA_WORDS)
    for change in report.changes:
        assert change.summary and not any(word in change.summary for word in SCHEMA_WORDS), change
    by_column = {c.column: c.summary for c in report.changes}
    assert by_column["vcd"] == "column `vcd` removed — consumers reading it break"


@pytest.mark.parametrize(("edit", "column", "said"), [
    (lambda d: d["columns"][0].update(dtype="float64"), 0, "changes dtype from"),
    (lambda d: d["columns"][0].update(nullable=True), 0, "accepts nulls"),
    (lambda d: d["columns"][0].update(required=False), 0, "is now optional"),
])
def test_dtype_nullability_and_required_changes_are_said_of_the_column(edit, column, said):
    before = document(CELL_COUNT, "v2_0")
    after = frames_from(before, edit)
    name = before["columns"][column]["name"]
    report = check_compatibility([before], after, "FULL")
    assert report.changes, "the edit is a change"
    for change in report.changes:
        assert change.column == name and said in change.summary, change
        assert not any(word in change.summary for word in SCHEMA_WORDS)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_the_command_line_speaks_of_columns_in_every_format(fmt):
    out, err = io.StringIO(), io.StringIO()
    run(str(CELL_COUNT / "v1_0" / "schema.yaml"), str(CELL_COUNT / "v2_0" / "schema.yaml"), "FULL", fmt,
        stdout=out, stderr=err)
    text = out.getvalue()
    assert "column `vcd` removed" in text
    if fmt == "json":
        changes = json.loads(text)["changes"]
        assert all(c["summary"] and c["column"] for c in changes)
        assert not any(word in json.loads(text)["verdict"] for word in SCHEMA_WORDS)
    else:
        assert not any(word in text for word in SCHEMA_WORDS), text


def test_an_event_contract_keeps_its_property_paths():
    report = check_compatibility([document(ORDER_PLACED, "v1_0")], document(ORDER_PLACED, "v2_0"), "FULL")
    assert report.changes and all(c.summary is None and c.path.startswith("/") for c in report.changes)
    out = io.StringIO()
    run(str(ORDER_PLACED / "v1_0" / "schema.yaml"), str(ORDER_PLACED / "v2_0" / "schema.yaml"), "FULL", "text",
        stdout=out, stderr=io.StringIO())
    assert "/properties/" in out.getvalue()
