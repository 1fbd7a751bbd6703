"""Contract files, ODCS files and the demo's teams file are read by the one bounded YAML
loader: anchors and aliases are refused naming file, line and column, and nothing is
written or published for that file."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from contracts_app.yamlio import ContractYamlError, dump_yaml, load_yaml, load_yaml_file
from registry import demo

from .conftest import FIXTURES

EVENT = FIXTURES / "domains/retail/checkout/order_placed/v1_0/schema.yaml"
ALIASED = "examples:\n  - &order {order_id: o-1}\n  - *order\n"


def test_the_service_loader_uses_the_settings_bounds(settings):
    settings.YAML_MAX_BYTES, settings.YAML_MAX_DEPTH = 1024, 10
    with pytest.raises(ContractYamlError, match="the document is 2003 bytes; at most 1024 are read"):
        load_yaml("a: " + "x" * 2000)
    with pytest.raises(ContractYamlError, match="line 1, column 11: nested deeper than 10 levels"):
        load_yaml("[" * 11 + "]" * 11)
    # YAML the registry stored itself is read whatever its size (documents published as JSON are not bounded by it)
    assert load_yaml("a: " + "x" * 2000, stored=True) == {"a": "x" * 2000}


def test_what_the_exporter_writes_has_no_alias_even_for_a_shared_value():
    shared = {"type": "string"}
    text = dump_yaml({"a": shared, "b": shared})
    assert "&" not in text and load_yaml(text) == {"a": shared, "b": shared}


def test_validate_contracts_names_the_file_line_and_column_of_an_anchor(demo_copy):
    path = demo_copy / "domains/retail/checkout/order_placed/v1_0/schema.yaml"
    original = path.read_text()
    path.write_text(original + ALIASED)
    anchor_line = len(original.splitlines()) + 2
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("validate_contracts", root=demo_copy, stdout=StringIO(), stderr=err)
    report = err.getvalue()
    assert "domains/retail/checkout/order_placed/v1_0/schema.yaml  1 problem(s)" in report
    assert f"document: line {anchor_line}, column 5: an anchor (&order) is not accepted" in report


@pytest.mark.django_db
def test_import_odcs_refuses_an_aliased_file_and_writes_nothing(tmp_path, capsys):
    odcs = tmp_path / "aliased.odcs.yaml"
    odcs.write_text("apiVersion: v3.1.0\nkind: DataContract\nid: x\nschema:\n  - &table {name: t}\n  - *table\n")
    with pytest.raises(CommandError, match="could not be imported"):
        call_command("import_odcs", str(odcs), "--into", str(tmp_path / "tree"), verbosity=0)
    assert f"{odcs}: line 5, column 5: an anchor (&table) is not accepted" in capsys.readouterr().err
    assert not (tmp_path / "tree" / "domains").exists()


def test_the_demo_teams_file_is_read_by_the_same_loader(tmp_path, settings):
    teams = tmp_path / "demo.yaml"
    teams.write_text("password: x\nusers:\n  - &gina {username: gina}\nteams: [{slug: a, name: A, members: [*gina]}]\n")
    with pytest.raises(ContractYamlError, match=r"line 3, column 5: an anchor \(&gina\)"):
        demo.demo_logins(teams)


def test_the_committed_demo_and_contracts_read_cleanly():
    assert load_yaml_file(EVENT)["schema"]["schema_type"] == "event"
    assert demo._read(demo.DEMO_FILE)["teams"]
