"""The check vocabulary shared by the exporter and the model rebuild.

In a contract document a column's ``checks`` is a list of one-key mappings::

    checks:
      - ge: 0.0
      - isin: [A, B]
      - str_length: {min_value: 1, max_value: 10}

:func:`serialize_check` turns a pandera builtin check into such entries (a list,
because ``in_range`` becomes a lower and an upper bound); :func:`check_from_entry`
and :func:`field_kwargs` go the other way. A check with no clean representation
raises :class:`UnserializableCheck`; the exporter skips it with a warning.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CHECK_KEYS",
    "UnserializableCheck",
    "SkippedCheckWarning",
    "serialize_check",
    "check_from_entry",
    "field_kwargs",
    "describe_check",
]

# YAML key -> (pandera builtin name, the statistic holding the value)
_SINGLE_VALUE: dict[str, tuple[str, str]] = {
    "gt": ("greater_than", "min_value"),
    "ge": ("greater_than_or_equal_to", "min_value"),
    "lt": ("less_than", "max_value"),
    "le": ("less_than_or_equal_to", "max_value"),
    "eq": ("equal_to", "value"),
    "ne": ("not_equal_to", "value"),
    "str_matches": ("str_matches", "pattern"),
    "str_contains": ("str_contains", "pattern"),
    "str_startswith": ("str_startswith", "string"),
    "str_endswith": ("str_endswith", "string"),
}
_COLLECTION: dict[str, tuple[str, str]] = {
    "isin": ("isin", "allowed_values"),
    "notin": ("notin", "forbidden_values"),
    "unique_values_eq": ("unique_values_eq", "values"),
}
_STR_LENGTH_KEYS = ("min_value", "max_value", "exact_value")

CHECK_KEYS: tuple[str, ...] = (*_SINGLE_VALUE, *_COLLECTION, "str_length")

_BY_BUILTIN = {builtin: (key, stat) for key, (builtin, stat) in {**_SINGLE_VALUE, **_COLLECTION}.items()}


class UnserializableCheck(ValueError):
    """A check that has no representation in the contract document format."""


class SkippedCheckWarning(UserWarning):
    """Emitted by the exporter for each check it had to leave out of a document."""


def describe_check(check: Any) -> str:
    """A short human name for a check, for warnings: ``in_range``, ``<lambda>``, ``positive``."""
    name = getattr(check, "name", None) or getattr(check, "error", None)
    if not name:
        fn = getattr(check, "_check_fn", None)
        name = getattr(fn, "__name__", None) or repr(check)
    return str(name)


def _plain(value: Any, where: str) -> Any:
    """A YAML-safe, deterministic copy of a check statistic."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, re.Pattern):
        # flags written inline, (?i), survive in the pattern text; flags passed to compile() do not
        if re.compile(value.pattern).flags != value.flags:
            raise UnserializableCheck(f"{where}: regex flags {value.flags!r} have no YAML form; inline them, e.g. (?i)")
        return value.pattern
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise UnserializableCheck(f"{where}: NaN has no YAML form")
        return float(value)
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__.startswith("numpy"):
        return _plain(item(), where)
    if isinstance(value, (_dt.datetime, _dt.date)):
        if isinstance(value, _dt.datetime) and value.tzinfo is not None:
            raise UnserializableCheck(f"{where}: timezone-aware bounds are not in the vocabulary")
        iso = value.isoformat()
        return iso
    raise UnserializableCheck(f"{where}: value {value!r} of type {type(value).__name__} has no YAML form")


def _plain_collection(values: Any, where: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise UnserializableCheck(f"{where}: expected a collection of values, got {values!r}")
    items = [_plain(v, where) for v in values]
    if isinstance(values, (set, frozenset)):
        # sets have no order; sort so the same contract always exports the same bytes
        items.sort(key=lambda v: (type(v).__name__, v))
    return items


def serialize_check(check: Any) -> list[dict[str, Any]]:
    """Document entries for one pandera check, or raise :class:`UnserializableCheck`."""
    name = getattr(check, "name", None)
    statistics = getattr(check, "statistics", None)
    if name is None or not isinstance(statistics, Mapping):
        raise UnserializableCheck(f"{describe_check(check)!r} is not a pandera builtin check")
    if getattr(check, "raise_warning", False):
        raise UnserializableCheck(f"{name!r} only warns (raise_warning=True); the format has no warning-only checks")
    if getattr(check, "ignore_na", True) is not True:
        raise UnserializableCheck(f"{name!r} sets ignore_na=False, which the format cannot express")
    if getattr(check, "groupby", None) is not None:
        raise UnserializableCheck(f"{name!r} is grouped (groupby=...), which the format cannot express")

    if name == "in_range":
        entries: list[dict[str, Any]] = []
        low, high = statistics.get("min_value"), statistics.get("max_value")
        if low is not None:
            entries.append({"ge" if statistics.get("include_min", True) else "gt": _plain(low, "in_range")})
        if high is not None:
            entries.append({"le" if statistics.get("include_max", True) else "lt": _plain(high, "in_range")})
        if not entries:
            raise UnserializableCheck("'in_range' has neither bound")
        return entries
    if name == "str_length":
        bounds = {k: _plain(statistics.get(k), "str_length") for k in _STR_LENGTH_KEYS if statistics.get(k) is not None}
        if not bounds:
            raise UnserializableCheck("'str_length' has no bound")
        return [{"str_length": bounds}]
    if name in _BY_BUILTIN:
        key, stat = _BY_BUILTIN[name]
        if stat not in statistics:
            raise UnserializableCheck(f"{name!r} has no {stat!r} statistic")
        value = statistics[stat]
        if key in _COLLECTION:
            return [{key: _plain_collection(value, name)}]
        return [{key: _plain(value, name)}]
    raise UnserializableCheck(f"{name!r} is not a builtin check with a YAML form")


def _entry_parts(entry: Mapping[str, Any]) -> tuple[str, Any]:
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise UnserializableCheck(f"a check entry must be a mapping with exactly one key, got {entry!r}")
    ((key, value),) = entry.items()
    if key not in CHECK_KEYS:
        raise UnserializableCheck(f"unknown check {key!r}; the vocabulary is {', '.join(CHECK_KEYS)}")
    return key, value


def check_from_entry(entry: Mapping[str, Any]) -> Any:
    """The pandera ``Check`` for one document entry."""
    import pandera.pandas as pa

    key, value = _entry_parts(entry)
    if key == "str_length":
        if not isinstance(value, Mapping) or not set(value) <= set(_STR_LENGTH_KEYS):
            raise UnserializableCheck(f"str_length takes a mapping of {', '.join(_STR_LENGTH_KEYS)}, got {value!r}")
        return pa.Check.str_length(**dict(value))
    builtin = (_SINGLE_VALUE.get(key) or _COLLECTION[key])[0]
    return getattr(pa.Check, builtin)(value)


def field_kwargs(entries: list[Mapping[str, Any]] | None) -> dict[str, Any]:
    """``pa.Field`` keyword arguments for a column's check entries.

    Field takes each check once; a repeated key (two ``ge`` bounds) is refused
    rather than silently collapsed.
    """
    kwargs: dict[str, Any] = {}
    for entry in entries or []:
        key, value = _entry_parts(entry)
        if key in kwargs:
            raise UnserializableCheck(f"check {key!r} appears twice in one column")
        kwargs[key] = dict(value) if key == "str_length" else value
    return kwargs
