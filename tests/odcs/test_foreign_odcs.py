"""ODCS written by another tool keeps what it says: each column's physical type comes back in the
export as the warehouse spelled it, every problem of a file is reported at once with its JSON path,
and `--id` / `--team` fill in what the file lacks. Over datacontract-cli's own `init`, `import sql`
and example contract: export -> import -> export gives the same ODCS, and `datacontract test`
passes the exported contract against the real PostgreSQL table the DDL describes."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess

import psycopg
import pytest
import yaml
from django.core.management import CommandError, call_command
from django.db import connection
from psycopg import sql
from registry_client.odcs import OdcsError, from_odcs, to_odcs

from contracts_app.exporting import export_tree
from contracts_app.yamlio import load_yaml_file
from tests.odcs.tools import TOOLS

# --- the mapping, without the CLI ----------------------------------------------------------

FOREIGN = {
    "apiVersion": "v3.2.0", "kind": "DataContract", "id": "shop.orders", "version": "1.0.0", "status": "draft",
    "team": {"name": "checkout"},
    "schema": [{"name": "orders", "physicalType": "table", "properties": [
        {"name": "order_id", "logicalType": "string", "physicalType": "VARCHAR", "required": True},
        {"name": "item_count", "logicalType": "integer", "physicalType": "INT", "required": True},
        {"name": "total", "logicalType": "number", "physicalType": "DECIMAL(10, 2)"},
        {"name": "big", "logicalType": "integer", "physicalType": "bigint"},
        {"name": "day", "logicalType": "date", "physicalType": "DATE"},
    ]}],
}


def round_trip(odcs: dict, **options) -> tuple[dict, dict]:
    """(the document `odcs` imports as, its export); the export imports as the same document and
    exports again byte for byte the same."""
    document = from_odcs(odcs, **options).document
    exported = to_odcs(document)
    again = from_odcs(yaml.safe_load(yaml.safe_dump(exported, sort_keys=False))).document
    assert again == document
    assert yaml.safe_dump(to_odcs(again), sort_keys=False) == yaml.safe_dump(exported, sort_keys=False)
    return document, exported


def test_the_logical_type_picks_the_dtype_and_the_physical_type_is_kept_as_the_warehouse_spells_it():
    document, exported = round_trip(FOREIGN)
    columns = {c["name"]: c for c in document["columns"]}
    assert {n: (c["dtype"], c.get("physical_type")) for n, c in columns.items()} == {
        "order_id": ("str", "VARCHAR"), "item_count": ("int64", "INT"), "total": ("float64", "DECIMAL(10, 2)"),
        "big": ("int64", None),  # the portable spelling of int64 already: nothing to keep
        "day": ("datetime64[ns]", "DATE")}
    physical = {p["name"]: p["physicalType"] for p in exported["schema"][0]["properties"]}
    assert physical == {"order_id": "VARCHAR", "item_count": "INT", "total": "DECIMAL(10, 2)", "big": "bigint",
                        "day": "DATE"}


def test_a_property_with_only_a_physical_type_takes_its_dtype_from_it():
    odcs = json.loads(json.dumps(FOREIGN))
    del odcs["schema"][0]["properties"][1]["logicalType"]
    odcs["schema"][0]["properties"][1]["physicalType"] = "integer"
    column = from_odcs(odcs).document["columns"][1]
    assert column["dtype"] == "int32" and "physical_type" not in column  # `integer` is int32's own spelling


def test_every_problem_of_a_file_is_reported_at_once_with_its_path():
    odcs = {"apiVersion": "v3.2.0", "kind": "DataContract", "id": "my-data-contract-id", "version": "1.0.0 beta",
            "schema": [{"name": "a", "physicalType": "table", "properties": [
                {"name": "x", "logicalType": "geometry"}, {"name": "y", "logicalType": "string"},
                {"logicalType": "string"}]}]}
    with pytest.raises(OdcsError) as refused:
        from_odcs(odcs)
    problems = refused.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "id", "version", "team.name", "schema[0].properties[0]", "schema[0].properties[2]"]
    assert "--id" in problems[0] and "--team" in problems[2]
    assert all(p in str(refused.value) for p in problems)


def test_id_and_team_fill_in_what_the_file_lacks_and_say_what_they_replaced():
    odcs = json.loads(json.dumps(FOREIGN)) | {"id": "orders", "domain": "sales"}
    del odcs["team"]
    imported = from_odcs(odcs, name="shop.sales.orders", team="checkout")
    section = imported.document["schema"]
    assert (section["name"], section["domain"], section["subdomains"], section["entity"], section["owner"]) == (
        "shop.sales.orders", "shop", ["sales"], "orders", "checkout")
    assert "id: 'orders' not imported; the contract is named 'shop.sales.orders' (--id)" in imported.notes
    assert "domain: 'sales' not imported; the contract's domain is 'shop' (--id)" in imported.notes
    with pytest.raises(OdcsError, match=r"--id: 'orders' is not a dotted contract name"):
        from_odcs(odcs, name="orders", team="checkout")


def test_several_tables_are_refused_naming_every_tables_problems():
    odcs = json.loads(json.dumps(FOREIGN))
    odcs["schema"].append({"name": "items", "physicalType": "table", "properties": [{"name": "z", "logicalType": "map"}]})
    with pytest.raises(OdcsError) as refused:
        from_odcs(odcs)
    assert [p.split(":")[0] for p in refused.value.problems] == ["schema", "schema[1].properties[0]"]
    assert "import each table as a contract of its own" in refused.value.problems[0]


def test_the_import_writes_a_class_that_keeps_the_physical_types(tmp_path, capsys):
    source = tmp_path / "orders.odcs.yaml"
    source.write_text(yaml.safe_dump(FOREIGN, sort_keys=False))
    root = tmp_path / "tree"
    call_command("import_odcs", str(source), "--into", str(root))
    folder = root / "domains/shop/orders/v1_0_0"
    assert "item_count: np.int64 = pa.Field(nullable=False, unique=False, coerce=False, metadata={'physical_type': 'INT'})" in (
        folder / "schema.py").read_text()
    assert load_yaml_file(folder / "schema.yaml")["columns"][2]["physical_type"] == "DECIMAL(10, 2)"
    assert export_tree(root, check=True).ok


def test_the_import_command_reports_every_problem_and_writes_nothing(tmp_path, capsys):
    odcs = json.loads(json.dumps(FOREIGN)) | {"id": "my-data-contract-id"}
    del odcs["team"]
    odcs["schema"][0]["properties"][0]["logicalType"] = "geometry"
    source = tmp_path / "bad.odcs.yaml"
    source.write_text(yaml.safe_dump(odcs, sort_keys=False))
    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("import_odcs", str(source), "--into", str(tmp_path / "tree"), verbosity=0)
    err = capsys.readouterr().err
    assert "3 problem(s), nothing was written" in err
    for path in ("id:", "team.name:", "schema[0].properties[0]:"):
        assert f"\n  {path}" in err
    assert not (tmp_path / "tree" / "domains").exists()


def test_a_gate_problem_is_reported_at_the_odcs_path(tmp_path, capsys):
    odcs = json.loads(json.dumps(FOREIGN))
    odcs["schema"][0]["properties"][1]["name"] = "order_id"  # twice
    source = tmp_path / "twice.odcs.yaml"
    source.write_text(yaml.safe_dump(odcs, sort_keys=False))
    with pytest.raises(CommandError):
        call_command("import_odcs", str(source), "--into", str(tmp_path / "tree"), verbosity=0)
    assert "schema[0].properties[0]: is declared more than once" in capsys.readouterr().err


# --- datacontract-cli's own documents ------------------------------------------------------


def run(cli, *args, cwd=None, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=180, cwd=cwd,
                            env={**os.environ, **(env or {})})
    return result


@pytest.mark.datacontract
def test_datacontract_init_output_is_refused_with_every_problem_then_imports_with_id_and_team(
        datacontract_cli, tmp_path, capsys):
    init = tmp_path / "init.odcs.yaml"
    assert run(datacontract_cli, "init", str(init)).returncode == 0
    root = tmp_path / "tree"
    with pytest.raises(CommandError):
        call_command("import_odcs", str(init), "--into", str(root), verbosity=0)
    err = capsys.readouterr().err
    assert re.search(r"id: 'my-data-contract-id' is not a dotted contract name.*--id", err)
    assert "team.name: missing" in err and "schema: missing" in err
    # init's schema, servers and team are commented out: with them, and --id and --team, it imports
    text = re.sub(r"^#", "", init.read_text(), flags=re.M)
    filled = tmp_path / "filled.odcs.yaml"
    filled.write_text(text)
    call_command("import_odcs", str(filled), "--into", str(root), "--id", "shop.my_table", "--team", "checkout",
                 verbosity=0)
    document = load_yaml_file(root / "domains/shop/my_table/v1_0_0/schema.yaml")
    assert document["schema"]["owner"] == "checkout" and document["columns"][0]["name"] == "my_field"
    assert document["datasets"] == [{"namespace": "postgres://localhost:5432", "name": "my_database.public.my_table"}]
    round_trip(yaml.safe_load(text), name="shop.my_table", team="checkout")


def example_contract() -> dict:
    """The example contract datacontract-cli ships (its API's example payload; read from the source,
    as the API itself needs an extra the tool's virtualenv has no use for)."""
    (source,) = TOOLS.glob("lib/python*/site-packages/datacontract/api.py")
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [
                "DATA_CONTRACT_EXAMPLE_PAYLOAD"]:
            return yaml.safe_load(ast.literal_eval(node.value))
    raise AssertionError(f"{source} no longer holds DATA_CONTRACT_EXAMPLE_PAYLOAD")


@pytest.mark.datacontract
def test_datacontract_clis_example_contract_imports_table_by_table(datacontract_cli, tmp_path):
    example = example_contract()
    with pytest.raises(OdcsError) as refused:
        from_odcs(example)
    assert [p.split(":")[0] for p in refused.value.problems] == ["id", "schema"]
    assert "two" not in refused.value.problems[1] and "this has 2" in refused.value.problems[1]
    for table in example["schema"]:
        one = {**example, "schema": [table]}
        document, exported = round_trip(one, name=f"sales.{table['name']}")
        assert document["schema"]["owner"] == "sales"
        given = {p["name"]: p["physicalType"] for p in table["properties"]}
        assert {p["name"]: p["physicalType"] for p in exported["schema"][0]["properties"]} == given
        assert {c["name"]: c["dtype"] for c in document["columns"]} == {
            "orders": {"order_id": "str", "customer_id": "str", "order_total": "int64",
                       "order_timestamp": "datetime64[ns]", "order_status": "str"},
            "line_items": {"line_item_id": "str", "sku": "str", "price": "int64", "order_id": "str"},
        }[table["name"]]


DDL = """CREATE TABLE public.orders (
    order_id varchar NOT NULL PRIMARY KEY,
    customer_id varchar(36) NOT NULL,
    ordered_at timestamp NOT NULL,
    status text NOT NULL,
    total_amount numeric(10, 2) NOT NULL,
    weight double precision,
    item_count integer NOT NULL,
    points bigint,
    rank smallint,
    paid boolean NOT NULL,
    delivery_day date,
    coupon_code varchar(20))"""


@pytest.fixture
def warehouse(db):
    """A real database holding the table the DDL describes, with rows that keep to it."""
    info = connection.settings_dict
    server = {"host": info["HOST"] or "127.0.0.1", "port": int(info["PORT"] or 5432), "user": info["USER"] or "postgres"}
    name = f"{info['NAME']}_foreign"[:63]
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(dbname=name, autocommit=True, **server) as db:
        db.execute(DDL)
        db.execute("""INSERT INTO public.orders VALUES
            ('A1', 'cust-1', now(), 'paid', 12.50, 1.5, 2, 10, 1, true, '2026-01-02', NULL),
            ('A2', 'cust-2', now(), 'placed', 0, NULL, 1, NULL, NULL, false, NULL, 'SAVE10')""")
    yield server, name
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.datacontract
@pytest.mark.django_db
def test_datacontract_import_sql_then_our_import_publish_and_export_passes_datacontract_test(
        datacontract_cli, warehouse, owner_team, local_store, tmp_path, django_capture_on_commit_callbacks):
    from contracts_app.odcs import odcs_yaml
    from contracts_app.publishing import record_version

    server, database = warehouse
    (tmp_path / "orders.sql").write_text(DDL + ";\n")
    imported = tmp_path / "orders.odcs.yaml"
    result = run(datacontract_cli, "import", "sql", "--source", str(tmp_path / "orders.sql"), "--dialect", "postgres",
                 "--output", str(imported))
    assert result.returncode == 0, result.stdout + result.stderr
    odcs = yaml.safe_load(imported.read_text())
    # the DDL names no server: point it at the database, as its author would
    odcs["servers"][0].update(host=server["host"], port=server["port"], database=database)
    imported.write_text(yaml.safe_dump(odcs, sort_keys=False))

    root = tmp_path / "tree"
    call_command("import_odcs", str(imported), "--into", str(root), "--id", "shop.sales.orders", "--team", "checkout",
                 verbosity=0)
    document = load_yaml_file(root / "domains/shop/sales/orders/v1_0_0/schema.yaml")
    with django_capture_on_commit_callbacks(execute=True):
        version = record_version(document, by=None, store=local_store)
    exported_text = odcs_yaml(version)
    exported = yaml.safe_load(exported_text)
    given = {p["name"]: p["physicalType"] for p in odcs["schema"][0]["properties"]}
    assert {p["name"]: p["physicalType"] for p in exported["schema"][0]["properties"]} == given

    # export -> import -> export: the same document, the same ODCS
    assert from_odcs(exported).document == version.document
    assert to_odcs(from_odcs(exported).document) == to_odcs(version.document)

    path = tmp_path / "exported.odcs.yaml"
    path.write_text(exported_text)
    report_file = tmp_path / "report.json"
    server_id = exported["servers"][0]["server"]
    result = run(datacontract_cli, "test", str(path), "--server", server_id, "--output-format", "json",
                 "--output", str(report_file),
                 env={"DATACONTRACT_POSTGRES_USERNAME": server["user"],
                      "DATACONTRACT_POSTGRES_PASSWORD": os.environ.get("PGPASSWORD", "unused")})
    report = json.loads(report_file.read_text())
    failed = [(c["name"], c.get("reason")) for c in report["checks"] if c["result"] != "passed"]
    assert report["result"] == "passed" and result.returncode == 0, f"{failed}\n{result.stdout}{result.stderr}"
    names = {c["name"] for c in report["checks"]}
    # one physical type check per column, each against the type as `import sql` spelled it
    assert {f"Check that field {column} has physical type {physical}" for column, physical in given.items()} <= names
    assert len(given) == 12 and len(report["checks"]) >= 34
