"""Reading YAML that somebody else wrote, within bounds: the one loader for every
YAML document the registry and its client read (contracts, ODCS contracts, specs,
the propose page, the demo's teams file, `check_compat`'s inputs, stored documents).

PyYAML's safe loader still expands anchors and aliases: a few kilobytes of nested
aliases (`b: [*a, *a, …]`, `c: [*b, *b, …]`) become a value with billions of
members once anything walks it, and a document can nest deeper than the
interpreter's stack. So `load_yaml`:

1. refuses a text longer than `max_bytes` (UTF-8) before parsing it;
2. walks the parser's events once (libyaml when present) and refuses the first
   anchor (`&name`) or alias (`*name`), and nesting deeper than `max_depth`,
   naming the line and column;
3. only then builds the value, refusing a key that appears twice in one mapping
   (PyYAML would keep the last one silently, hiding an editing mistake).

Every refusal is a `YamlInputError` whose message says what and where; its `line`
and `column` count from 1. Without aliases, the value built is no larger than the
text, so the work stays linear in the input.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_BYTES", "MAX_DEPTH", "YamlInputError", "load_yaml", "NoAliasDumper"]

MAX_BYTES = 1024 * 1024  # a contract of a thousand columns is a few hundred KB
MAX_DEPTH = 100  # mappings and lists within each other, as for JSON bodies

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlInputError(ValueError):
    """YAML the registry will not read; the message says why and where."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None):
        self.line, self.column = line, column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + message)


def _at(mark) -> dict:
    return {"line": mark.line + 1, "column": mark.column + 1} if mark is not None else {}


class _StrictLoader(_Loader):  # type: ignore[misc, valid-type]
    pass


def _construct_mapping(loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            seen = key in mapping
        except TypeError:  # a list or mapping as a key: not hashable
            raise YamlInputError("a mapping key must be a plain value, not a list or a mapping",
                                 **_at(key_node.start_mark)) from None
        if seen:
            raise YamlInputError(f"duplicate key {key!r}", **_at(key_node.start_mark))
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _check_events(text: str, max_depth: int) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise YamlInputError(f"an alias (*{event.anchor}) is not accepted: anchors and aliases are refused, "
                                 "write the value out in full", **_at(event.start_mark))
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            raise YamlInputError(f"an anchor (&{event.anchor}) is not accepted: anchors and aliases are refused, "
                                 "write the value out in full", **_at(event.start_mark))
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlInputError(f"nested deeper than {max_depth} levels of mappings and lists",
                                     **_at(event.start_mark))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load_yaml(text: str | bytes, *, max_bytes: int | None = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The value of the one YAML document in `text`, or YamlInputError saying what
    is wrong and where. `max_bytes=None` leaves the size unbounded (documents the
    registry itself stored); anchors, aliases and the depth are always checked."""
    if isinstance(text, bytes):
        size = len(text)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlInputError(f"not UTF-8 (byte {exc.start}: {exc.reason})") from None
    else:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if max_bytes is not None and size > max_bytes:
        raise YamlInputError(f"the document is {size} bytes; at most {max_bytes} are read")
    try:
        _check_events(text, max_depth)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(filter(None, (exc.context, exc.problem))) or "not valid YAML"
        raise YamlInputError(f"not valid YAML: {problem}", **_at(mark)) from None
    except yaml.YAMLError as exc:
        raise YamlInputError(f"not valid YAML: {exc}") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer longer than Python converts
        if isinstance(exc, YamlInputError):
            raise
        raise YamlInputError(f"a value cannot be read: {exc}") from None


class NoAliasDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, writing a value out again wherever it recurs instead
    of an anchor and alias: what it writes, `load_yaml` reads back."""

    def ignore_aliases(self, data: Any) -> bool:
        return True
