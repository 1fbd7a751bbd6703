"""A dataframe contract's diff in the words of its columns, with the checker's verdicts."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from django.conf import settings
from registry_client.compat import check_compatibility

from contracts_app.diff import column_changes

ORDERS = Path(settings.BASE_DIR) / "fixtures" / "contracts" / "domains" / "retail" / "sales" / "orders"


def orders(version: str) -> dict:
    return yaml.safe_load((ORDERS / f"v{version.replace('.', '_')}" / "schema.yaml").read_text())


def lines_between(before: dict, after: dict, mode: str = "BACKWARD") -> dict:
    report = check_compatibility([before], after, mode).to_dict()
    return {line.column or line.label: line for line in column_changes(before, after, report["changes"])}


def column(document: dict, name: str) -> dict:
    return next(c for c in document["columns"] if c["name"] == name)


def test_the_orders_diff_speaks_columns():
    lines = lines_between(orders("1.0"), orders("2.0"))
    assert lines["total_amount"].sentences == ("column `total_amount` removed — consumers reading it break",)
    assert lines["channel"].sentences == ("column `channel` added, required — rows written before it lack it",)
    assert lines["status"].sentences == ("`status` accepts `returned`",)
    assert lines["description"].sentences == ("the description changes",)
    every_word = " ".join(s for line in lines.values() for s in line.sentences)
    assert "additionalProperties" not in every_word and "9223372036854775807" not in every_word


def test_a_removed_or_added_column_is_absent_on_one_side():
    lines = lines_between(orders("1.0"), orders("2.0"))
    assert lines["total_amount"].after is None and lines["total_amount"].before["dtype"] == "float64"
    assert lines["channel"].before is None and lines["channel"].after["dtype"] == "str"


def test_each_column_carries_the_checkers_verdict_on_it():
    lines = lines_between(orders("1.0"), orders("2.0"))
    # A required column added: old rows lack it (its /required and /properties changes both land here).
    assert lines["channel"].direction == "backward" and lines["channel"].breaking
    # Removed and widened: old readers may get rows without it / with a new value; BACKWARD allows that.
    assert lines["total_amount"].direction == "forward" and not lines["total_amount"].breaking
    assert lines["status"].direction == "forward" and not lines["status"].breaking
    assert lines["description"].direction == "neither"


def test_an_optional_column_added_says_what_the_old_version_let_through():
    lines = lines_between(orders("1.0"), orders("2.0"))
    assert lines["gift_message"].sentences[0].startswith("column `gift_message` added, optional — rows without it stay valid")
    assert lines["gift_message"].direction == "backward"


def test_a_dtype_widening_names_the_dtypes_not_their_bounds():
    before = orders("1.0")
    after = copy.deepcopy(before)
    after["schema"]["version"] = "1.1"
    column(after, "item_count")["dtype"] = "int64"
    lines = lines_between(before, after)
    assert lines["item_count"].sentences == ("`item_count` changes dtype from `int32` to `int64`",)
    assert lines["item_count"].direction == "forward"


def test_nullability_requiredness_and_checks_each_get_a_sentence():
    before = orders("1.0")
    after = copy.deepcopy(before)
    after["schema"]["version"] = "2.0"
    coupon = column(after, "coupon_code")
    coupon.update(nullable=False, required=True)
    coupon["checks"] = [{"str_length": {"max_value": 30}}]
    column(after, "status")["checks"] = [{"isin": ["placed", "paid", "shipped"]}]
    column(after, "item_count")["checks"] = []
    lines = lines_between(before, after)
    assert lines["coupon_code"].sentences == (
        "`coupon_code` is now required — rows written without it fail",
        "`coupon_code` no longer accepts nulls — rows with a null `coupon_code` fail",
        "`coupon_code` check `str_length max_value=20` becomes `str_length max_value=30`",
    )
    assert lines["status"].sentences == ("`status` no longer accepts `delivered`, `cancelled` — rows holding them fail",)
    assert lines["status"].breaking
    assert lines["item_count"].sentences == ("`item_count` drops the check `gt 0`",)


def test_a_frame_setting_speaks_of_columns_too():
    before = orders("1.0")
    after = copy.deepcopy(before)
    after["schema"]["version"] = "2.0"
    after["config"]["strict"] = True
    lines = lines_between(before, after)
    assert lines["config.strict"].sentences == ("`config.strict`: `filter` → `True` — columns the contract does not name are refused",)
    assert (lines["config.strict"].before, lines["config.strict"].after) == ("filter", True)
    assert lines["config.strict"].direction == "backward"  # the checker's additionalProperties change lands here


def test_identical_documents_have_no_lines():
    assert column_changes(orders("1.0"), orders("1.0"), []) == []
