"""A dataframe contract's changes in the words of its columns ("column `item_count`
removed", "`price` changes dtype from `int64` to `float64`"), never JSON Schema paths.

The checker compares a dataframe contract as the JSON Schema of one row, and says so in
JSON-Schema terms. `column_changes` writes the lines of a diff from the two documents'
columns, each carrying the checker's verdict for the row-schema changes behind it;
`describe_changes` gives each checker change the column it is about and the sentence a
reader of the frame would use, for verdicts, the command line, previews and review pages.
Pure Python, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

# --------------------------------------------------------------------------- dataframe contracts
#
# The checker compares a dataframe contract as the JSON Schema of one row, and says so in
# JSON-Schema terms ("property 'x' added; before, it fell under additionalProperties …",
# the int64 bounds its dtype implies). A reader of the frame thinks in columns: the
# sentences below are written from the two documents' columns, and each carries the
# checker's verdict for the row-schema changes that came from that column.

# The row schema's keywords that stand for a whole-frame setting (documents.py maps them).
_FRAME_KEYWORDS = {
    "additionalProperties": "strict", "dataframeOrdered": "ordered", "dataframeUnique": "unique",
    "dataframeNoCoerce": "coerce", "dataframeDropInvalidRows": "drop_invalid_rows",
}
_STRICT = {
    True: "columns the contract does not name are refused",
    "filter": "columns the contract does not name are dropped",
    False: "columns the contract does not name are kept, unchecked",
}


@dataclass(frozen=True)
class ColumnChange:
    """One line of a dataframe contract's diff, in the words of its columns.

    `column` names the column (None for the frame's own settings and the document's
    header); `before`/`after` are the column's entries (None: absent) or, for a setting,
    its values. The verdict fields sum up the checker's changes behind this line."""

    column: str | None
    sentences: tuple[str, ...]
    before: Any = None
    after: Any = None
    label: str = ""
    breaks_backward: bool = False
    breaks_forward: bool = False
    breaking: bool = False
    proof: str | None = None

    @property
    def direction(self) -> str:
        if self.breaks_backward and self.breaks_forward:
            return "both"
        return "backward" if self.breaks_backward else "forward" if self.breaks_forward else "neither"


def _ticked(values: list) -> str:
    return ", ".join(f"`{v}`" for v in values)


def check_text(check: Any) -> str:
    """`{"ge": 0}` -> `ge 0`; `{"str_length": {"min_value": 1}}` -> `str_length min_value=1`."""
    if not isinstance(check, dict):
        return str(check)
    parts = []
    for kind, value in check.items():
        if isinstance(value, dict):
            value = " ".join(f"{k}={v}" for k, v in value.items() if v is not None)
        elif isinstance(value, list):
            value = "[" + ", ".join(str(v) for v in value) + "]"
        parts.append(f"{kind} {value}")
    return "; ".join(parts)


def _by_kind(checks: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for check in checks or []:
        if isinstance(check, dict) and len(check) == 1:
            (kind, value), = check.items()
            out.setdefault(kind, []).append(value)
        else:
            out.setdefault(repr(check), []).append(check)
    return out


def _check_sentences(name: str, before: list, after: list) -> list[str]:
    old, new = _by_kind(before), _by_kind(after)
    out: list[str] = []
    for kind in list(old) + [k for k in new if k not in old]:
        was, now = old.get(kind, []), new.get(kind, [])
        if was == now:
            continue
        if kind in ("isin", "notin") and len(was) == len(now) == 1 and all(isinstance(v, list) for v in (*was, *now)):
            gained = [v for v in now[0] if v not in was[0]]
            lost = [v for v in was[0] if v not in now[0]]
            if kind == "isin":
                if gained:
                    out.append(f"`{name}` accepts {_ticked(gained)}")
                if lost:
                    out.append(f"`{name}` no longer accepts {_ticked(lost)} — rows holding {'it' if len(lost) == 1 else 'them'} fail")
            else:
                if gained:
                    out.append(f"`{name}` refuses {_ticked(gained)} — rows holding {'it' if len(gained) == 1 else 'them'} fail")
                if lost:
                    out.append(f"`{name}` no longer refuses {_ticked(lost)}")
            continue
        for i in range(max(len(was), len(now))):
            a = check_text({kind: was[i]}) if i < len(was) else None
            b = check_text({kind: now[i]}) if i < len(now) else None
            if a == b:
                continue
            if a is None:
                out.append(f"`{name}` gains the check `{b}`")
            elif b is None:
                out.append(f"`{name}` drops the check `{a}`")
            else:
                out.append(f"`{name}` check `{a}` becomes `{b}`")
    return out


def _flag(column: dict, key: str, default: bool) -> bool:
    value = column.get(key, default)
    return default if value is None else bool(value)


def _changed_column_sentences(name: str, before: dict, after: dict) -> list[str]:
    out: list[str] = []
    if before.get("dtype") != after.get("dtype"):
        out.append(f"`{name}` changes dtype from `{before.get('dtype')}` to `{after.get('dtype')}`")
    was, now = _flag(before, "required", True), _flag(after, "required", True)
    if not was and now:
        out.append(f"`{name}` is now required — rows written without it fail")
    elif was and not now:
        out.append(f"`{name}` is now optional — consumers reading it may find it missing")
    was, now = _flag(before, "nullable", False), _flag(after, "nullable", False)
    if not was and now:
        out.append(f"`{name}` accepts nulls — consumers expecting a value can get none")
    elif was and not now:
        out.append(f"`{name}` no longer accepts nulls — rows with a null `{name}` fail")
    was, now = _flag(before, "unique", False), _flag(after, "unique", False)
    if not was and now:
        out.append(f"`{name}` must be unique — frames repeating a value fail")
    elif was and not now:
        out.append(f"`{name}` may repeat — consumers relying on unique values break")
    out += _check_sentences(name, before.get("checks") or [], after.get("checks") or [])
    was, now = _flag(before, "coerce", False), _flag(after, "coerce", False)
    if was != now:
        out.append(f"`{name}` is now coerced to its dtype" if now else f"`{name}` is no longer coerced: values must already be `{after.get('dtype')}`")
    if (before.get("description") or "") != (after.get("description") or ""):
        out.append(f"`{name}`'s description changes")
    known = {"name", "dtype", "required", "nullable", "unique", "checks", "coerce", "description"}
    for key in [k for k in before if k not in known] + [k for k in after if k not in known and k not in before]:
        if before.get(key) != after.get(key):
            out.append(f"`{name}` `{key}`: `{before.get(key)}` → `{after.get(key)}`")
    return out


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def _line_of(change: dict, names: set[str]) -> str | None:
    """Which line a checker change belongs to: a column's name, `config.<key>`, or None."""
    parts = [_unescape(p) for p in (change.get("path") or "").split("/")[1:]]
    if len(parts) >= 2 and parts[0] == "properties" and parts[1] in names:
        return parts[1]
    if parts == ["required"]:
        reason = change.get("reason") or ""
        # The checker names the property first, as Python's repr of it.
        for name in sorted(names, key=len, reverse=True):
            if reason.startswith(repr(name)):
                return name
    if parts and parts[0] in _FRAME_KEYWORDS:
        return "config." + _FRAME_KEYWORDS[parts[0]]
    return None


def _with_verdict(change: ColumnChange, found: list[dict]) -> ColumnChange:
    if not found:
        return change
    proofs = {c.get("proof") for c in found}
    return replace(
        change,
        breaks_backward=any(c.get("breaks_backward") for c in found),
        breaks_forward=any(c.get("breaks_forward") for c in found),
        breaking=any(c.get("breaking") for c in found),
        # a budget-decided change is shown as such, apart from proven and assumed breaks
        proof=next((p for p in ("proven", "undecided", "assumed") if p in proofs), None),
    )


def column_changes(before: dict, after: dict, checker_changes: list[dict] | None = None) -> list[ColumnChange]:
    """A dataframe contract's changes from `before` to `after`, column by column, each with
    the checker's verdict (`checker_changes`: the report's changes as dicts)."""
    before, after = before or {}, after or {}
    old = {c.get("name"): c for c in before.get("columns") or [] if isinstance(c, dict)}
    new = {c.get("name"): c for c in after.get("columns") or [] if isinstance(c, dict)}
    names = set(old) | set(new)
    by_line: dict[str | None, list[dict]] = {}
    for change in checker_changes or []:
        by_line.setdefault(_line_of(change, names), []).append(change)

    lines: list[ColumnChange] = []
    for key in ("description", *[k for k in (after.get("schema") or {}) if k not in ("description", "version")]):
        was, now = (before.get("schema") or {}).get(key), (after.get("schema") or {}).get(key)
        if was != now:
            what = "the description changes" if key == "description" else f"`{key}`: `{was}` → `{now}`"
            lines.append(ColumnChange(None, (what,), was, now, label=key))
    for section in ("meta", "config"):
        was_all, now_all = before.get(section) or {}, after.get(section) or {}
        for key in list(was_all) + [k for k in now_all if k not in was_all]:
            was, now = was_all.get(key), now_all.get(key)
            if was == now:
                continue
            what = f"`{section}.{key}`: `{was}` → `{now}`"
            if section == "config" and key == "strict" and now in _STRICT:
                what += f" — {_STRICT[now]}"
            line = ColumnChange(None, (what,), was, now, label=f"{section}.{key}")
            lines.append(_with_verdict(line, by_line.pop(f"{section}.{key}", [])) if section == "config" else line)

    for name in list(old) + [n for n in new if n not in old]:
        found = by_line.pop(name, [])
        if name not in new:
            sentences = [f"column `{name}` removed — consumers reading it break"]
        elif name not in old:
            if _flag(new[name], "required", True):
                sentences = [f"column `{name}` added, required — rows written before it lack it"]
            else:
                sentence = f"column `{name}` added, optional — rows without it stay valid"
                if any(c.get("breaks_backward") for c in found):
                    sentence += f"; a `{name}` the old version let through unchecked must now fit it"
                sentences = [sentence]
        else:
            sentences = _changed_column_sentences(name, old[name], new[name])
            if not sentences and found:
                sentences = [f"`{name}`: {c.get('reason')}" for c in found]
        if sentences:
            lines.append(_with_verdict(ColumnChange(name, tuple(sentences), old.get(name), new.get(name)), found))

    old_order = [n for n in old if n in new]
    new_order = [n for n in new if n in old]
    if old_order != new_order:
        lines.append(_with_verdict(ColumnChange(None, (f"the columns are reordered: {_ticked(new_order)}",),
                                                old_order, new_order, label="column order"),
                                   by_line.pop("config.ordered", [])))
    # What the checker found that no line above explains (its own errors, a budget
    # running out) is shown in its words.
    for key, found in by_line.items():
        for change in found:
            lines.append(_with_verdict(ColumnChange(None, (change.get("reason") or change.get("kind") or "",),
                                                    label=key or "the frame"), [change]))
    return lines


def is_dataframe_document(document: Any) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("schema"), dict)
            and document["schema"].get("schema_type") == "dataframe")


def _subject(line: ColumnChange) -> str:
    if line.column is not None:
        return f"column `{line.column}`"
    return {"column order": "the column order", "the frame": "the frame"}.get(line.label, f"`{line.label}`")


# The row schema's keyword a checker change ends on -> words its column's sentence uses.
_KEYWORD_WORDS = {
    "minimum": ("`ge ", "`in_range"), "exclusiveMinimum": ("`gt ", "`in_range"),
    "maximum": ("`le ", "`in_range"), "exclusiveMaximum": ("`lt ", "`in_range"),
    "minLength": ("`str_length",), "maxLength": ("`str_length",), "pattern": ("`str_matches", "`str_startswith",
                                                                              "`str_endswith", "`str_contains"),
    "enum": ("accepts", "refuses", "`isin", "`notin"), "type": ("dtype", "nulls"),
}


def _sentences_for(change: dict, line: ColumnChange) -> tuple[str, ...]:
    """The sentences of `line` the change is about (a column gaining two checks is two changes)."""
    keyword = _unescape((change.get("path") or "").rsplit("/", 1)[-1])
    words = _KEYWORD_WORDS.get(keyword)
    if words:
        matching = tuple(s for s in line.sentences if any(w in s for w in words))
        if matching:
            return matching
    return line.sentences


def describe_changes(before: dict, after: dict, changes: list[dict]) -> list[dict[str, str | None]]:
    """For each checker change (as a dict), `{"column", "subject", "summary"}` in the frame's
    words: the column it is about (None for the frame's own settings), what a reader calls that
    place ("column `price`", "`config.strict`", "the frame") and the sentence of the diff line
    it belongs to. The order and length follow `changes`."""
    old = {c.get("name") for c in (before or {}).get("columns") or [] if isinstance(c, dict)}
    new = {c.get("name") for c in (after or {}).get("columns") or [] if isinstance(c, dict)}
    names = old | new
    lines = column_changes(before, after, changes)
    by_column = {line.column: line for line in lines if line.column is not None}
    by_label = {line.label: line for line in lines if line.column is None}
    out: list[dict[str, str | None]] = []
    for change in changes:
        key = _line_of(change, names)
        line = by_column.get(key) if key in names else by_label.get(key) if key else None
        if key == "config.ordered":
            line = by_label.get("column order") or line
        if line is None:
            # a place no diff line explains (the checker's own error, a budget running out)
            column = key if key in names else None
            subject = f"column `{column}`" if column else "the frame"
            reason = change.get("reason") or change.get("kind") or ""
            if change.get("kind") in ("checker_error",) or change.get("kind", "").startswith("budget"):
                summary = reason
            else:
                summary = f"{subject}: {change.get('kind', 'changed').replace('_', ' ')}"
            out.append({"column": column, "subject": subject, "summary": summary})
            continue
        out.append({"column": line.column, "subject": _subject(line), "summary": "; ".join(_sentences_for(change, line))})
    return out
