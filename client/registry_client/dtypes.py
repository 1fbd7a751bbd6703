"""The canonical dtype vocabulary of contract documents.

Authors may spell a type in many ways (``float``, ``"double"``, ``np.float64``,
``pd.Timestamp``, ``typing.List[float]`` …). Published documents use exactly one
spelling per type, and :func:`canonicalize_dtype` is the only place where the
other spellings are mapped onto it. The publish gate refuses a document whose
dtypes are not already canonical, so a hand-edited or stale YAML is caught
instead of being silently repaired.
"""

from __future__ import annotations

import datetime as _dt
import re
import typing
from typing import Any

__all__ = [
    "CANONICAL_SCALARS",
    "CANONICAL_LIST_ELEMENTS",
    "CANONICAL_DTYPES",
    "UnknownDtypeError",
    "canonicalize_dtype",
    "is_canonical",
    "is_list_dtype",
    "list_element",
    "pandera_annotation",
]

CANONICAL_SCALARS: tuple[str, ...] = (
    "str", "int32", "int64", "float32", "float64", "bool", "datetime64[ns]",
)
# List elements are limited to the four types every consumer can rebuild.
CANONICAL_LIST_ELEMENTS: tuple[str, ...] = ("str", "int64", "float64", "bool")
CANONICAL_DTYPES: tuple[str, ...] = CANONICAL_SCALARS + tuple(
    f"List[{element}]" for element in CANONICAL_LIST_ELEMENTS
)
_CANONICAL = frozenset(CANONICAL_DTYPES)


class UnknownDtypeError(ValueError):
    """A dtype spelling that does not map onto the canonical vocabulary."""

    def __init__(self, dtype: Any, detail: str = "") -> None:
        self.dtype = dtype
        shown = dtype if isinstance(dtype, str) else _describe(dtype)
        message = f"unknown dtype {shown!r}"
        if detail:
            message += f" ({detail})"
        message += f"; the vocabulary is {', '.join(CANONICAL_SCALARS)} and List[<{'|'.join(CANONICAL_LIST_ELEMENTS)}>]"
        super().__init__(message)


# Lower-cased spellings, after stripping whitespace. Canonical names map to themselves.
_SCALAR_ALIASES: dict[str, str] = {
    # strings
    "str": "str", "string": "str", "unicode": "str", "text": "str",
    "string[python]": "str", "string[pyarrow]": "str", "string[pyarrow_numpy]": "str",
    "utf8": "str",
    # 32-bit integers
    "int32": "int32", "np.int32": "int32", "numpy.int32": "int32", "intc": "int32", "i4": "int32",
    # 64-bit integers
    "int": "int64", "integer": "int64", "int64": "int64", "long": "int64", "bigint": "int64",
    "np.int64": "int64", "numpy.int64": "int64", "i8": "int64", "int_": "int64",
    # 32-bit floats
    "float32": "float32", "single": "float32", "np.float32": "float32", "numpy.float32": "float32", "f4": "float32",
    # 64-bit floats
    "float": "float64", "double": "float64", "float64": "float64", "real": "float64",
    "np.float64": "float64", "numpy.float64": "float64", "f8": "float64", "float_": "float64",
    # booleans
    "bool": "bool", "boolean": "bool", "bool_": "bool", "np.bool_": "bool", "numpy.bool_": "bool",
    # timestamps
    "datetime": "datetime64[ns]", "datetime64": "datetime64[ns]", "datetime64[ns]": "datetime64[ns]",
    "timestamp": "datetime64[ns]", "pd.timestamp": "datetime64[ns]", "pandas.timestamp": "datetime64[ns]",
    "date": "datetime64[ns]", "datetime.datetime": "datetime64[ns]", "datetime.date": "datetime64[ns]",
    "np.datetime64": "datetime64[ns]", "numpy.datetime64": "datetime64[ns]",
}

_LIST_RE = re.compile(r"^(?:typing\.)?(?:list|List)\[(?P<element>.+)\]$")


def _describe(value: Any) -> str:
    if typing.get_origin(value) is not None:
        return repr(value)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if name and module and module != "builtins":
        return f"{module}.{name}"
    return name or repr(value)


def _from_string(text: str, original: Any) -> str:
    spelled = text.strip()
    match = _LIST_RE.match(spelled)
    if match:
        element = _from_string(match.group("element"), original)
        if element not in CANONICAL_LIST_ELEMENTS:
            raise UnknownDtypeError(original, f"list elements must be one of {', '.join(CANONICAL_LIST_ELEMENTS)}")
        return f"List[{element}]"
    canonical = _SCALAR_ALIASES.get(spelled.lower())
    if canonical is None:
        if spelled.lower().startswith("datetime64["):
            raise UnknownDtypeError(original, "only timezone-naive nanosecond timestamps, datetime64[ns], are in the vocabulary")
        raise UnknownDtypeError(original)
    return canonical


def canonicalize_dtype(dtype: Any) -> str:
    """Return the canonical spelling of ``dtype`` or raise :class:`UnknownDtypeError`.

    Accepts canonical and alias strings, Python types (``int``, ``float``, ``str``,
    ``bool``, ``datetime.datetime``, ``datetime.date``), numpy scalar types and
    dtypes, pandas dtypes and ``pd.Timestamp``, pandera data types, and list
    annotations (``typing.List[float]``, ``list[str]``, ``"List[double]"``).
    """
    if dtype is None:
        raise UnknownDtypeError(dtype, "a dtype is required")
    if isinstance(dtype, str):
        return _from_string(dtype, dtype)
    if dtype is _dt.datetime or dtype is _dt.date:
        return "datetime64[ns]"
    for python_type, canonical in ((str, "str"), (bool, "bool"), (int, "int64"), (float, "float64")):
        # identity, not equality: np.dtype("float64") == float is True
        if dtype is python_type:
            return canonical
    origin = typing.get_origin(dtype)
    if origin is list:
        args = typing.get_args(dtype)
        if len(args) != 1:
            raise UnknownDtypeError(dtype, "a list dtype needs exactly one element type")
        element = canonicalize_dtype(args[0])
        if element not in CANONICAL_LIST_ELEMENTS:
            raise UnknownDtypeError(dtype, f"list elements must be one of {', '.join(CANONICAL_LIST_ELEMENTS)}")
        return f"List[{element}]"
    if origin is not None:
        # Optional[float] and pandera's Series[float] carry the dtype as their argument.
        args = [arg for arg in typing.get_args(dtype) if arg is not type(None)]
        if len(args) == 1:
            return canonicalize_dtype(args[0])
        raise UnknownDtypeError(dtype)
    module = getattr(dtype, "__module__", "") or ""
    name = getattr(dtype, "__name__", "")
    if isinstance(dtype, type) and name == "Timestamp" and module.startswith("pandas"):
        return "datetime64[ns]"
    if isinstance(dtype, type) and module.startswith("numpy"):
        # numpy scalar types such as np.float64, np.int32, np.bool_, np.str_, np.datetime64
        return _from_string({"str_": "str", "bool": "bool"}.get(name, name), dtype)
    if module.startswith("numpy") and hasattr(dtype, "kind"):
        if dtype.kind == "M":
            return _from_string(str(dtype), dtype)
        return _from_string(dtype.name, dtype)
    if module.startswith(("pandas", "pandera")) or hasattr(dtype, "type"):
        # pandas extension dtypes (Int64Dtype, StringDtype …), pandera DataType instances
        # and classes: their string form is the pandas spelling.
        text = str(dtype() if isinstance(dtype, type) and _instantiable(dtype) else dtype)
        return _from_string(text, dtype)
    raise UnknownDtypeError(dtype)


def _instantiable(cls: type) -> bool:
    try:
        cls()
    except Exception:
        return False
    return True


def is_canonical(dtype: Any) -> bool:
    """True when ``dtype`` is already a canonical spelling (a string in the vocabulary)."""
    return isinstance(dtype, str) and dtype in _CANONICAL


def is_list_dtype(dtype: str) -> bool:
    return dtype.startswith("List[")


def list_element(dtype: str) -> str:
    """The element dtype of a canonical list dtype (``List[float64]`` -> ``float64``)."""
    if not (is_canonical(dtype) and is_list_dtype(dtype)):
        raise UnknownDtypeError(dtype, "not a canonical list dtype")
    return dtype[len("List["):-1]


def pandera_annotation(dtype: str) -> Any:
    """The annotation that declares a canonical dtype on a pandera DataFrameModel.

    A flat lookup, because published documents only carry canonical spellings.
    """
    import numpy as np
    import pandas as pd

    table: dict[str, Any] = {
        "str": str, "int32": np.int32, "int64": np.int64, "float32": np.float32,
        "float64": np.float64, "bool": bool, "datetime64[ns]": pd.Timestamp,
        "List[str]": list[str], "List[int64]": list[int], "List[float64]": list[float], "List[bool]": list[bool],
    }
    try:
        return table[dtype]
    except KeyError:
        raise UnknownDtypeError(dtype, "not canonical; re-export the contract") from None


# How a rebuilt model stores strings (pandera_models.pandera_serialized's `strings`): named here,
# without pandas, so a caller can list them without importing pandera.
STRING_STORAGES = ("python", "pyarrow")
