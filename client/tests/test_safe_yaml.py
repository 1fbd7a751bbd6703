"""registry_client.safeyaml: the one loader for YAML somebody else wrote. No anchors or
aliases, no duplicate keys, bounded size and depth; every refusal names line and column."""

from __future__ import annotations

import pytest
import yaml
from registry_client import InvalidContract, Registry
from registry_client.backends import LocalBackend
from registry_client.compat.cli import main as check_compat
from registry_client.safeyaml import MAX_DEPTH, NoAliasDumper, YamlInputError, load_yaml

LAUGHS = "a: &a [lol, lol, lol]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n"


def refusal(text, **bounds) -> YamlInputError:
    with pytest.raises(YamlInputError) as caught:
        load_yaml(text, **bounds)
    return caught.value


def test_plain_yaml_reads_as_pyyaml_reads_it():
    text = "schema:\n  name: a.b\n  version: '1.0'\ncolumns:\n- {name: id, dtype: str}\nwhen: 2026-01-01\n"
    assert load_yaml(text) == yaml.safe_load(text)


def test_an_anchor_is_refused_naming_its_line_and_column():
    error = refusal(LAUGHS)
    assert (error.line, error.column) == (1, 4)
    assert str(error) == ("line 1, column 4: an anchor (&a) is not accepted: anchors and aliases are refused, "
                          "write the value out in full")


def test_an_alias_without_its_anchor_is_refused_where_it_stands():
    error = refusal("a: 1\nb:\n  - *nowhere\n")
    assert (error.line, error.column) == (3, 5)
    assert "an alias (*nowhere) is not accepted" in str(error)


def test_a_merge_key_needs_an_alias_so_it_is_refused_too():
    assert "an anchor (&base)" in str(refusal("base: &base {a: 1}\nother:\n  <<: *base\n  b: 2\n"))


def test_a_duplicate_key_is_refused_naming_its_line_and_column():
    assert str(refusal("name: a\ncolumns:\n  x: 1\n  x: 2\n")) == "line 4, column 3: duplicate key 'x'"


def test_a_document_over_the_size_bound_is_refused_before_it_is_parsed():
    text = "a: " + "x" * 100 + "\n"
    assert str(refusal(text, max_bytes=50)) == f"the document is {len(text)} bytes; at most 50 are read"
    assert load_yaml(text, max_bytes=None) == {"a": "x" * 100}


def test_the_size_counts_utf8_bytes_not_characters():
    text = "a: " + "é" * 30  # 33 characters, 63 bytes
    assert "the document is 63 bytes" in str(refusal(text, max_bytes=40))
    assert "the document is 63 bytes" in str(refusal(text.encode(), max_bytes=40))


def test_nesting_deeper_than_the_bound_is_refused_where_it_goes_too_deep():
    assert load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    error = refusal("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert (error.line, error.column) == (1, MAX_DEPTH + 1)
    assert f"nested deeper than {MAX_DEPTH} levels" in str(error)
    block = "".join("  " * i + f"k{i}:\n" for i in range(5)) + "  " * 5 + "v\n"
    assert "nested deeper than 3 levels" in str(refusal(block, max_depth=3))


def test_broken_yaml_and_unreadable_values_say_where_or_what():
    assert str(refusal("a: [1, 2")).startswith("line 2, column 1: not valid YAML: ")
    assert "a value cannot be read" in str(refusal("a: " + "9" * 5000))
    assert "a mapping key must be a plain value" in str(refusal("? [1]\n: 2\n"))
    assert "not UTF-8" in str(refusal(b"a: \xff\n"))


def test_what_the_no_alias_dumper_writes_reads_back():
    shared = {"type": "string"}
    document = {"a": shared, "b": shared}
    assert "&id001" in yaml.safe_dump(document)  # PyYAML's own dumper writes an anchor and an alias
    assert load_yaml(yaml.dump(document, Dumper=NoAliasDumper)) == document


def test_the_registry_refuses_a_stored_document_with_aliases(store, docs):
    store.publish(docs.event())
    path = next(store.root.rglob("schema.yaml"))
    path.write_text(path.read_text() + "extra: &x [1]\nmore: *x\n")
    with pytest.raises(InvalidContract, match=r"is not valid YAML: line \d+, column 8: an anchor \(&x\)"):
        Registry(LocalBackend(store.root)).get_schema("retail.checkout.order_placed")


def test_check_compat_refuses_aliases_naming_file_line_and_column(tmp_path, capsys):
    old = tmp_path / "old.yaml"
    old.write_text("type: object\nproperties:\n  a: &s {type: string}\n  b: *s\n")
    assert check_compat([str(old), str(old)]) == 2
    assert f"{old}: line 3, column 6: an anchor (&s) is not accepted" in capsys.readouterr().err
