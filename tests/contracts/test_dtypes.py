# ruff: noqa: UP006, UP045 - authors write typing.List and Optional; those spellings are under test
import datetime
import typing

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from registry_client import dtypes
from registry_client.dtypes import (
    CANONICAL_DTYPES,
    UnknownDtypeError,
    canonicalize_dtype,
    is_canonical,
    list_element,
    pandera_annotation,
)


@pytest.mark.parametrize(("alias", "canonical"), sorted(dtypes._SCALAR_ALIASES.items()))
def test_every_string_alias_maps_to_its_canonical_dtype(alias, canonical):
    assert canonicalize_dtype(alias) == canonical
    assert canonicalize_dtype(alias.upper()) == canonical  # spellings are case-insensitive
    assert canonicalize_dtype(f"  {alias} ") == canonical


def test_every_alias_lands_in_the_vocabulary():
    assert set(dtypes._SCALAR_ALIASES.values()) == set(dtypes.CANONICAL_SCALARS)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        # python types
        (str, "str"), (int, "int64"), (float, "float64"), (bool, "bool"),
        (datetime.datetime, "datetime64[ns]"), (datetime.date, "datetime64[ns]"),
        # numpy scalar types and dtypes
        (np.int32, "int32"), (np.int64, "int64"), (np.float32, "float32"), (np.float64, "float64"),
        (np.bool_, "bool"), (np.str_, "str"), (np.datetime64, "datetime64[ns]"),
        (np.dtype("int32"), "int32"), (np.dtype("float64"), "float64"), (np.dtype("bool"), "bool"),
        (np.dtype("datetime64[ns]"), "datetime64[ns]"),
        # pandas
        (pd.Timestamp, "datetime64[ns]"), (pd.StringDtype(), "str"), (pd.Int64Dtype(), "int64"),
        (pd.Int32Dtype(), "int32"), (pd.Float64Dtype(), "float64"), (pd.BooleanDtype(), "bool"),
        ("Int64", "int64"), ("Float64", "float64"), ("string[python]", "str"), ("string[pyarrow]", "str"),
        # typing
        (typing.Optional[float], "float64"), (typing.List[float], "List[float64]"), (list[str], "List[str]"),
        (typing.List[int], "List[int64]"), (list[bool], "List[bool]"),
        ("typing.List[float]", "List[float64]"), ("List[double]", "List[float64]"), ("list[integer]", "List[int64]"),
        # strings from other tools
        ("double", "float64"), ("integer", "int64"), ("timestamp", "datetime64[ns]"), ("date", "datetime64[ns]"),
    ],
    ids=repr,
)
def test_author_side_spellings_are_normalized(spelling, canonical):
    assert canonicalize_dtype(spelling) == canonical


@pytest.mark.parametrize("annotation", [str, float, np.float32, np.int32, int, bool, pd.Timestamp, typing.List[float]])
def test_pandera_column_dtypes_canonicalize_like_their_annotation(annotation):
    class Model(pa.DataFrameModel):
        column: annotation  # type: ignore[valid-type]

    dtype = Model.to_schema().columns["column"].dtype
    assert canonicalize_dtype(dtype) == canonicalize_dtype(annotation)


@pytest.mark.parametrize(
    "spelling",
    ["object", "int16", np.int16, np.uint8, "complex128", "datetime64[ns, UTC]", pd.DatetimeTZDtype(tz="UTC"),
     "datetime64[us]", dict, "List[List[int]]", typing.List[np.int32], "List[datetime]", "", None, "floaty"],
    ids=repr,
)
def test_unknown_dtypes_are_refused(spelling):
    with pytest.raises(UnknownDtypeError, match="unknown dtype"):
        canonicalize_dtype(spelling)


def test_the_unknown_dtype_message_lists_the_vocabulary():
    with pytest.raises(UnknownDtypeError) as caught:
        canonicalize_dtype("decimal")
    assert "'decimal'" in str(caught.value)
    assert "str, int32, int64, float32, float64, bool, datetime64[ns]" in str(caught.value)


def test_only_exact_canonical_spellings_are_canonical():
    for dtype in CANONICAL_DTYPES:
        assert is_canonical(dtype)
        assert canonicalize_dtype(dtype) == dtype
    for spelling in ["double", "float", "Float64", "int", "List[float]", "datetime", " str", "STR", float, np.float64]:
        assert not is_canonical(spelling)


@pytest.mark.parametrize("dtype", CANONICAL_DTYPES)
def test_each_canonical_dtype_has_a_pandera_annotation_that_round_trips(dtype):
    class Model(pa.DataFrameModel):
        column: pandera_annotation(dtype)  # type: ignore[valid-type]

    assert canonicalize_dtype(Model.to_schema().columns["column"].dtype) == dtype


def test_a_non_canonical_dtype_has_no_annotation():
    with pytest.raises(UnknownDtypeError, match="re-export"):
        pandera_annotation("double")


def test_list_element():
    assert list_element("List[float64]") == "float64"
    with pytest.raises(UnknownDtypeError):
        list_element("float64")
