"""Read one of our pandera exports and judge frames with it, as a pandera user would.

Run by the Python of the pandera tool virtualenv (tests/odcs/tools.py: no pyarrow there), it
imports only pandas, pandera and the standard library: a JSON request on stdin, a JSON answer
on stdout. The tests also import it to judge the same frames with the model the client rebuilds,
so both sides decode frames and describe failures with this one code.

Request (or a list of them): {"reader": "from_yaml" | "from_json", "text": <the export>, "frames": {case: frame}},
a frame being {"index": [...], "columns": [{"name", "dtype", "values"}]} (`encode_frame`).
Answer: {"error": "<type>: <message>"} when the reader refuses the text, else {"schema": {...},
"results": {case: ["ok"] | ["error", [failure, ...]]}}.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import pandas as pd


def encode_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return {"timestamp": value.isoformat()}
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    return value


def encode_frame(frame: pd.DataFrame) -> dict[str, Any]:
    columns = []
    for name in frame.columns:
        series = frame[name]
        dtype = str(series.dtype)
        kind = "str" if dtype in ("str", "string", "string[pyarrow]", "string[python]") else dtype
        columns.append({"name": str(name), "dtype": kind, "values": [encode_value(v) for v in series.tolist()]})
    return {"index": [int(i) for i in frame.index], "columns": columns}


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and "timestamp" in value:
        return pd.Timestamp(value["timestamp"])
    return value


def decode_frame(encoded: dict[str, Any]) -> pd.DataFrame:
    data = {}
    for column in encoded["columns"]:
        values = [_decode_value(v) for v in column["values"]]
        dtype = column["dtype"]
        if dtype == "object":
            data[column["name"]] = pd.Series(values, dtype=object, index=encoded["index"])
        elif dtype.startswith("datetime64"):
            data[column["name"]] = pd.Series(pd.to_datetime(values), index=encoded["index"]).astype(dtype)
        else:
            data[column["name"]] = pd.Series(values, dtype=dtype, index=encoded["index"])
    return pd.DataFrame(data, index=encoded["index"])


_STRUCTURAL = ("column_in_dataframe", "column_in_schema", "coerce_dtype", "dtype", "not_nullable", "field_uniqueness",
               "multiple_fields_uniqueness", "column_ordered", "dataframe_column_labels_unique")
# One string dtype under the names pandas gives it with and without pyarrow.
_STRING_DTYPE = re.compile(r"'(?:str|string|string\[pyarrow\]|string\[python\])'")


def _kind(check: Any) -> str:
    text = _STRING_DTYPE.sub("'str'", str(check).replace("typing.List[", "list["))
    for name in _STRUCTURAL:
        if text.startswith(name):
            return text
    return "value check"


def judge(schema: Any, frame: pd.DataFrame) -> list[Any]:
    """["ok"] or ["error", sorted failures (kind, column, index, value)], as the equivalence tests count them."""
    import pandera.errors

    try:
        schema.validate(frame.copy(), lazy=True)
        return ["ok"]
    except pandera.errors.SchemaErrors as exc:
        failures = set()
        for row in exc.failure_cases.itertuples():
            column = "<schema>" if row.column == schema.name else str(row.column)
            kind = _kind(row.check)
            if kind == "value check" and row.index is None:
                failures.add(("value check could not run", column, "None", ""))
                continue
            failures.add((kind, column, str(row.index), str(row.failure_case)))
        return ["error", sorted(list(f) for f in failures)]


def describe(schema: Any) -> dict[str, Any]:
    return {"name": schema.name, "strict": schema.strict, "coerce": schema.coerce,
            "columns": {name: _STRING_DTYPE.sub("'str'", repr(str(column.dtype))).strip("'")
                        for name, column in schema.columns.items()}}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    import pandera.pandas as pa

    reader = {"from_yaml": pa.DataFrameSchema.from_yaml, "from_json": pa.DataFrameSchema.from_json}[request["reader"]]
    try:
        schema = reader(request["text"])
    except Exception as exc:  # noqa: BLE001 - what the reader says is the answer
        return {"error": f"{type(exc).__name__}: {exc}"}
    results = {case: judge(schema, decode_frame(frame)) for case, frame in request.get("frames", {}).items()}
    return {"schema": describe(schema), "results": results}


def main() -> None:
    """One request, or a list of them (one interpreter start for many exports)."""
    request = json.load(sys.stdin)
    json.dump([answer(r) for r in request] if isinstance(request, list) else answer(request), sys.stdout)


if __name__ == "__main__":
    main()
