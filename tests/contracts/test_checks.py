import datetime
import re
import warnings

import pandas as pd
import pandera.pandas as pa
import pytest
from registry_client.authoring import (
    BaseDataFrameSchema,
    ContractMixin,
    SkippedCheckWarning,
    register_dataframe_schema,
    relaxed_registry_checks,
)
from registry_client.checks import (
    CHECK_KEYS,
    UnserializableCheck,
    check_from_entry,
    field_kwargs,
    serialize_check,
)

from contracts_app.exporting import build_document


@pytest.mark.parametrize(
    ("check", "entries"),
    [
        (pa.Check.gt(0), [{"gt": 0}]),
        (pa.Check.greater_than(0), [{"gt": 0}]),
        (pa.Check.ge(1.5), [{"ge": 1.5}]),
        (pa.Check.lt(10), [{"lt": 10}]),
        (pa.Check.le(10), [{"le": 10}]),
        (pa.Check.eq("x"), [{"eq": "x"}]),
        (pa.Check.ne(0), [{"ne": 0}]),
        (pa.Check.isin(["B", "A"]), [{"isin": ["B", "A"]}]),  # a list keeps the author's order
        (pa.Check.isin({"B", "A", "C"}), [{"isin": ["A", "B", "C"]}]),  # a set is sorted
        (pa.Check.notin(["unknown", ""]), [{"notin": ["unknown", ""]}]),
        (pa.Check.str_matches(r"^S[0-9]+$"), [{"str_matches": "^S[0-9]+$"}]),
        (pa.Check.str_matches(re.compile(r"(?i)^s[0-9]+$")), [{"str_matches": "(?i)^s[0-9]+$"}]),
        (pa.Check.str_contains("@"), [{"str_contains": "@"}]),
        (pa.Check.str_startswith("ORD-"), [{"str_startswith": "ORD-"}]),
        (pa.Check.str_endswith(".pdf"), [{"str_endswith": ".pdf"}]),
        (pa.Check.str_length(1, 10), [{"str_length": {"min_value": 1, "max_value": 10}}]),
        (pa.Check.str_length(min_value=3), [{"str_length": {"min_value": 3}}]),
        (pa.Check.str_length(exact_value=2), [{"str_length": {"exact_value": 2}}]),
        (pa.Check.unique_values_eq([2, 1]), [{"unique_values_eq": [1, 2]}]),
        (pa.Check.in_range(0, 1), [{"ge": 0}, {"le": 1}]),
        (pa.Check.in_range(0, 1, include_min=False), [{"gt": 0}, {"le": 1}]),
        (pa.Check.in_range(0, 1, include_max=False), [{"ge": 0}, {"lt": 1}]),
        (pa.Check.in_range(0, 1, include_min=False, include_max=False), [{"gt": 0}, {"lt": 1}]),
        (pa.Check.ge(pd.Timestamp("2024-01-01")), [{"ge": "2024-01-01T00:00:00"}]),
        (pa.Check.le(datetime.date(2030, 12, 31)), [{"le": "2030-12-31"}]),
    ],
    ids=lambda value: repr(value) if isinstance(value, list) else None,
)
def test_builtin_checks_serialize_to_their_yaml_form(check, entries):
    assert serialize_check(check) == entries


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (pa.Check(lambda s: s > 0), "not a builtin"),
        (pa.Check(lambda s: s > 0, name="positive"), "not a builtin"),
        (pa.Check.gt(0, raise_warning=True), "raise_warning"),
        (pa.Check.gt(0, ignore_na=False), "ignore_na"),
        (pa.Check.gt(float("nan")), "NaN"),
        (pa.Check.ge(pd.Timestamp("2024-01-01", tz="UTC")), "timezone-aware"),
        (pa.Check.str_matches(re.compile("^s", re.IGNORECASE)), "regex flags"),
    ],
)
def test_checks_without_a_clean_form_are_refused_with_a_reason(check, reason):
    with pytest.raises(UnserializableCheck, match=reason):
        serialize_check(check)


def test_every_yaml_check_key_builds_a_pandera_check_and_a_field_argument():
    values = {"isin": ["a"], "notin": ["a"], "unique_values_eq": ["a"], "str_length": {"min_value": 1}}
    for key in CHECK_KEYS:
        entry = {key: values.get(key, "a" if key.startswith("str_") else 1)}
        check = check_from_entry(entry)
        assert serialize_check(check) == [entry]
        assert pa.Field(**field_kwargs([entry]))  # pandera accepts it as a Field argument


def test_unknown_or_malformed_entries_are_refused():
    with pytest.raises(UnserializableCheck, match="unknown check 'between'"):
        check_from_entry({"between": [0, 1]})
    with pytest.raises(UnserializableCheck, match="exactly one key"):
        check_from_entry({"ge": 0, "le": 1})
    with pytest.raises(UnserializableCheck, match="appears twice"):
        field_kwargs([{"ge": 0}, {"ge": 1}])


def test_an_unserializable_check_is_skipped_with_a_warning_naming_contract_column_and_check():
    with relaxed_registry_checks():
        @register_dataframe_schema(domain="lab", entity="plate", version="1.0", owner="lab-data")
        class Plate(ContractMixin, BaseDataFrameSchema):
            od600: float = pa.Field(ge=0)
            well: str

            @pa.check("od600", name="below_saturation")
            def below_saturation(cls, series):
                return series < 4

            @pa.dataframe_check
            def wells_are_unique_per_plate(cls, df):
                return ~df["well"].duplicated()

        with pytest.warns(SkippedCheckWarning) as caught:
            document = build_document(Plate)

    messages = [str(w.message) for w in caught]
    assert any(
        "lab.plate" in m and "column 'od600'" in m and "'below_saturation'" in m for m in messages
    ), messages
    assert any("lab.plate" in m and "dataframe-wide check 'wells_are_unique_per_plate'" in m for m in messages)
    od600 = next(c for c in document["columns"] if c["name"] == "od600")
    assert od600["checks"] == [{"ge": 0}]  # the clean check is kept, the custom one left out


def test_serializable_checks_export_without_warnings():
    with relaxed_registry_checks():
        @register_dataframe_schema(domain="lab", entity="plate", version="1.0", owner="lab-data")
        class Plate(ContractMixin, BaseDataFrameSchema):
            od600: float = pa.Field(in_range={"min_value": 0, "max_value": 4})

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            document = build_document(Plate)
    assert document["columns"][0]["checks"] == [{"ge": 0}, {"le": 4}]
