"""Structural differences between two contract documents.

Columns of a dataframe contract are matched by name (so a reordered or renamed
column reads as what it is); everything else is compared as JSON, path by
path, with JSON-pointer paths.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class StructuralChange:
    path: str
    kind: str  # added | removed | changed
    before: Any = None
    after: Any = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pointer(*parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _compare(path: tuple, before: Any, after: Any, out: list[StructuralChange]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in list(before) + [k for k in after if k not in before]:
            if key not in after:
                out.append(StructuralChange(_pointer(*path, key), REMOVED, before=before[key]))
            elif key not in before:
                out.append(StructuralChange(_pointer(*path, key), ADDED, after=after[key]))
            else:
                _compare((*path, key), before[key], after[key], out)
    elif before != after:
        out.append(StructuralChange(_pointer(*path), CHANGED, before=before, after=after))


def structural_diff(before: dict, after: dict) -> list[StructuralChange]:
    """Every difference from `before` to `after`; the version field itself is left out."""
    out: list[StructuralChange] = []
    before = dict(before or {})
    after = dict(after or {})
    old_cols = {c.get("name"): c for c in before.pop("columns", None) or []}
    new_cols = {c.get("name"): c for c in after.pop("columns", None) or []}
    if isinstance(before.get("schema"), dict) and isinstance(after.get("schema"), dict):
        before["schema"] = {k: v for k, v in before["schema"].items() if k != "version"}
        after["schema"] = {k: v for k, v in after["schema"].items() if k != "version"}
    _compare((), before, after, out)
    for name in list(old_cols) + [n for n in new_cols if n not in old_cols]:
        if name not in new_cols:
            out.append(StructuralChange(_pointer("columns", name), REMOVED, before=old_cols[name]))
        elif name not in old_cols:
            out.append(StructuralChange(_pointer("columns", name), ADDED, after=new_cols[name]))
        else:
            _compare(("columns", name), old_cols[name], new_cols[name], out)
    old_order = [n for n in old_cols if n in new_cols]
    new_order = [n for n in new_cols if n in old_cols]
    if old_order != new_order:
        out.append(StructuralChange("/columns", "reordered", before=old_order, after=new_order))
    return out


# A dataframe contract's changes in the words of its columns live with the checker
# (registry_client.compat.columns), so the command line speaks them too.
from registry_client.compat.columns import ColumnChange, check_text, column_changes  # noqa: E402

__all__ = ["ADDED", "CHANGED", "REMOVED", "ColumnChange", "StructuralChange", "check_text", "column_changes",
           "structural_diff"]
