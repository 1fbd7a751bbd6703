"""Frames for comparing an authored contract class with the model rebuilt from
its published YAML: hypothesis strategies that mix valid values with the
edge cases that matter (nulls, strings needing coercion, out-of-range values,
extra and missing columns), plus deterministic hand-made frames."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pandera.pandas as pa
from hypothesis import strategies as st
from registry_client.checks import check_from_entry

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "contracts"

# Values of the wrong type or shape, some coercible and some not.
JUNK = ["", "abc", "1", "2.5", "-3", "1e400", "2024-01-31", "2024-13-45", "true", "None", 7, -1, 0, 2.5, True, False]
DATES = ["2024-01-31", "2024-01-31T12:30:00", "1999-12-31", "not a date", pd.Timestamp("2023-06-01 08:00")]


def checks_of(column: dict) -> dict:
    return {k: v for entry in column.get("checks") or [] for k, v in entry.items()}


def satisfies(column: dict, value) -> bool:
    """Whether a single non-null value passes the column's checks (as pandera would judge it)."""
    series = pd.Series([value])
    if column["dtype"] == "float32":
        series = series.astype("float32")  # judged after coercion, as the models judge it
    if column["dtype"] == "datetime64[ns]":
        series = pd.to_datetime(series)
    for entry in column.get("checks") or []:
        try:
            result = check_from_entry(entry)(series)
        except Exception:  # noqa: BLE001 - a check that cannot run on the value fails it
            return False
        if not bool(result.check_passed):
            return False
    return True


def _bounds(checks: dict) -> tuple[float | None, float | None]:
    low = checks.get("ge", checks.get("gt"))
    high = checks.get("le", checks.get("lt"))
    return low, high


def valid_values(column: dict) -> st.SearchStrategy:
    """Values that pass the column's dtype and checks."""
    dtype, checks = column["dtype"], checks_of(column)
    if "isin" in checks:
        base = st.sampled_from(list(checks["isin"]))
    elif dtype == "str":
        if "str_matches" in checks:
            base = st.from_regex(checks["str_matches"], fullmatch=True)
        else:
            prefix = checks.get("str_startswith", "")
            suffix = checks.get("str_endswith", "")
            length = checks.get("str_length") or {}
            max_size = length.get("exact_value") or length.get("max_value") or 12
            base = st.text("ABCXYZabcxyz0123456789-_", max_size=min(max_size, 12)).map(lambda s: prefix + s + suffix)
    elif dtype in ("int32", "int64"):
        low, high = _bounds(checks)
        low = -1000 if low is None else math.ceil(low)
        high = 10_000 if high is None else math.floor(high)
        base = st.integers(low, max(low, high))
    elif dtype in ("float32", "float64"):
        low, high = _bounds(checks)
        base = st.floats(-1000.0 if low is None else float(low), 10_000.0 if high is None else float(high),
                         allow_nan=False, allow_infinity=False)
    elif dtype == "bool":
        base = st.booleans()
    elif dtype == "datetime64[ns]":
        base = st.datetimes(min_value=pd.Timestamp("2000-01-01").to_pydatetime(),
                            max_value=pd.Timestamp("2030-01-01").to_pydatetime()).map(pd.Timestamp)
    else:  # List[...]
        base = st.lists(st.sampled_from(["A", "B", "C"]), max_size=3)
    if dtype.startswith("List["):
        return base
    return base.filter(lambda v: satisfies(column, v))


def edge_values(column: dict) -> st.SearchStrategy:
    """Values that may fail: nulls, junk needing coercion, boundary and out-of-range numbers."""
    checks = checks_of(column)
    numbers = [v for k in ("ge", "gt", "le", "lt", "eq", "ne") if isinstance(v := checks.get(k), int | float) and not isinstance(v, bool)]
    near = [n + d for n in numbers for d in (-1, -0.001, 0, 0.001, 1)]
    options = [None, float("nan"), *JUNK, *near, -1e9, 1e9]
    if column["dtype"] == "datetime64[ns]":
        options += DATES
    if "isin" in checks:
        options += [str(checks["isin"][0]).lower() + "x", str(checks["isin"][0]).upper()]
    return st.sampled_from(options)


@st.composite
def frames(draw, document: dict) -> pd.DataFrame:
    columns = document["columns"]
    n = draw(st.integers(0, 6))
    data: dict[str, list] = {}
    for column in columns:
        if draw(st.integers(0, 19)) == 0:
            continue  # leave the column out (fails when it is required)
        values = []
        for _ in range(n):
            if draw(st.integers(0, 5)) == 0:
                values.append(draw(edge_values(column)))
            else:
                values.append(draw(valid_values(column)))
        data[column["name"]] = values
    if draw(st.booleans()):
        data["unexpected_extra"] = list(range(n))
    names = list(data)
    if draw(st.booleans()):
        names = draw(st.permutations(names))
    return pd.DataFrame({name: pd.Series(data[name], dtype=object) for name in names}, index=range(n))


def valid_frame(document: dict, n: int = 4) -> pd.DataFrame:
    """A deterministic frame every column of which passes (unique columns get distinct values)."""
    from hypothesis import Phase, find, settings
    from hypothesis.errors import NoSuchExample

    # Any valid value will do: skip shrinking (the slow part) and stay deterministic.
    quick = settings(phases=[Phase.generate], derandomize=True, database=None, max_examples=200)

    data = {}
    for column in document["columns"]:
        values: list = []
        for _ in range(n):
            try:
                values.append(find(valid_values(column), lambda v, used=tuple(values): v not in used, settings=quick))
            except NoSuchExample:
                if column.get("unique"):
                    raise
                values.append(values[len(values) % max(len(values), 1)])  # few valid values: repeat them
        data[column["name"]] = values
    return pd.DataFrame(data)


def hand_made_frames(document: dict) -> dict[str, pd.DataFrame]:
    base = valid_frame(document)
    cases = {"valid": base, "valid_with_extra_column": base.assign(unexpected_extra=range(len(base)))}
    cases["empty"] = base.iloc[0:0]
    cases["all_null"] = pd.DataFrame({c: [None] * len(base) for c in base.columns})
    cases["as_strings"] = base.astype(str)
    for column in document["columns"]:
        name = column["name"]
        cases[f"without_{name}"] = base.drop(columns=[name])
        # One frame per column with a null, an uncoercible string and two out-of-range numbers.
        corrupted = base.copy().astype(object)
        for row, value in enumerate((None, "abc", 1e12, -1e12)):
            corrupted.loc[row, name] = value
        cases[f"{name}_corrupted"] = corrupted
        duplicated = base.copy()
        duplicated.loc[1, name] = duplicated.loc[0, name]
        cases[f"{name}_duplicated"] = duplicated
    cases["reversed_columns"] = base[list(reversed(base.columns))]
    return cases


_STRUCTURAL = ("column_in_dataframe", "column_in_schema", "coerce_dtype", "dtype", "not_nullable", "field_uniqueness",
               "multiple_fields_uniqueness", "column_ordered", "dataframe_column_labels_unique")


def _kind(check) -> str:
    # typing.List[str] and list[str] are one pandera dtype under two spellings.
    text = str(check).replace("typing.List[", "list[")
    for name in _STRUCTURAL:
        if text.startswith(name):
            return text
    return "value check"


def outcome(model, frame: pd.DataFrame):
    """("ok", output frame) or ("error", the set of failures, each (kind, column, index, value))."""
    try:
        return "ok", model.validate(frame.copy(), lazy=True)
    except pa.errors.SchemaErrors as exc:
        # Frame-level failures name the schema: the class name when authored, the
        # contract name when rebuilt. That is the one intended difference.
        schema_name = model.to_schema().name
        failures = set()
        for row in exc.failure_cases.itertuples():
            column = "<schema>" if row.column == schema_name else str(row.column)
            kind = _kind(row.check)
            if kind == "value check" and row.index is None:
                # A check that could not run (uncoercible values) is reported once per check. The
                # format writes in_range as ge + le, so a rebuilt model reports it once per bound:
                # compare "a value check could not run on this column", not how many times.
                failures.add(("value check could not run", column, "None", ""))
                continue
            failures.add((kind, column, str(row.index), str(row.failure_case)))
        return "error", failures


def assert_same_behaviour(authored, rebuilt, frame: pd.DataFrame) -> str:
    expected, got = outcome(authored, frame), outcome(rebuilt, frame)
    assert expected[0] == got[0], f"authored: {expected[0]}, rebuilt: {got[0]}\n{frame!r}\n{expected[1]}\n{got[1]}"
    if expected[0] == "ok":
        pd.testing.assert_frame_equal(got[1], expected[1])
    else:
        assert got[1] == expected[1], f"different failures for\n{frame!r}"
    return expected[0]
