import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from contracts_app.exporting import discover_schema_sources, export_tree
from contracts_app.yamlio import load_yaml_file

from .conftest import FIXTURES, REPO, contract_source, write_schema

DEMO_SOURCES = sorted(p.relative_to(FIXTURES) for p in FIXTURES.glob("domains/**/schema.py"))


def run(*args, root: Path) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("export_contracts", *args, root=root, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_committed_demo_yaml_is_up_to_date():
    """The CI gate: a stale or missing demo schema.yaml fails the suite."""
    out, err = run("--check", root=FIXTURES)
    assert f"{len(DEMO_SOURCES)} contracts: {len(DEMO_SOURCES)} unchanged" in out
    assert err == ""


@pytest.mark.parametrize("source", DEMO_SOURCES, ids=str)
def test_every_demo_contract_exports_to_its_committed_yaml(source, demo_copy):
    committed = (FIXTURES / source).with_name("schema.yaml").read_bytes()
    (demo_copy / source).with_name("schema.yaml").unlink()
    report = export_tree(demo_copy)
    result = next(r for r in report.results if r.relative == str(source))
    assert (result.status, result.warnings) == ("written", [])
    assert (demo_copy / source).with_name("schema.yaml").read_bytes() == committed


def test_export_is_deterministic(demo_copy):
    for path in demo_copy.glob("domains/**/schema.py"):
        path.with_name("schema.yaml").unlink()
    run(root=demo_copy)
    first = {p: p.read_bytes() for p in demo_copy.glob("domains/**/schema.yaml")}
    out, _ = run(root=demo_copy)
    second = {p: p.read_bytes() for p in demo_copy.glob("domains/**/schema.yaml")}
    assert first == second
    assert "unchanged" in out and "written" not in out.split("contracts:")[-1]


def test_check_fails_naming_a_hand_edited_yaml_and_writes_nothing(demo_copy):
    target = demo_copy / "domains/retail/sales/orders/v1_0/schema.yaml"
    edited = target.read_text().replace("dtype: float64", "dtype: double", 1)
    target.write_text(edited)
    missing = demo_copy / "domains/lab/analytics/cell_count/v2_0/schema.yaml"
    missing.unlink()

    with pytest.raises(CommandError) as caught:
        run("--check", root=demo_copy)

    message = str(caught.value)
    assert "2 schema.yaml file(s) are stale or missing" in message
    assert "stale: domains/retail/sales/orders/v1_0/schema.yaml" in message
    assert "missing: domains/lab/analytics/cell_count/v2_0/schema.yaml" in message
    assert target.read_text() == edited
    assert not missing.exists()


def test_export_repairs_what_check_reported(demo_copy):
    target = demo_copy / "domains/retail/sales/orders/v1_0/schema.yaml"
    target.write_text(target.read_text() + "\n# a stray comment\n")
    out, _ = run(root=demo_copy)
    assert "retail.sales.orders 1.0  written" in out
    assert target.read_bytes() == (FIXTURES / "domains/retail/sales/orders/v1_0/schema.yaml").read_bytes()
    run("--check", root=demo_copy)


def test_progress_is_shown_for_each_contract(demo_copy):
    out, _ = run("--check", root=demo_copy)
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert len(lines) == len(DEMO_SOURCES)
    assert lines[0].startswith(f"[1/{len(DEMO_SOURCES)}] domains/lab/analytics/cell_count/v1_0/schema.py")


def test_discovery_skips_hidden_and_cache_folders(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source())
    write_schema(tree, "domains/shop/sales/orders/.ipynb_checkpoints/v1_0", contract_source())
    write_schema(tree, "domains/shop/sales/orders/__pycache__/v1_0", contract_source())
    assert [p.relative_to(tree).as_posix() for p in discover_schema_sources(tree)] == [
        "domains/shop/sales/orders/v1_0/schema.py"
    ]


def test_same_named_schema_files_and_classes_do_not_collide(tmp_path):
    """Two roots with the same relative file, and two versions with the same class name."""
    roots = [tmp_path / "a", tmp_path / "b"]
    for index, root in enumerate(roots):
        for version in ("1.0", "2.0"):
            body = f"    col_{index}_{version.replace('.', '_')}: str\n"
            folder = "domains/shop/sales/orders/v" + version.replace(".", "_")
            write_schema(root, folder, contract_source(version=version, body=body))
    for index, root in enumerate(roots):
        report = export_tree(root)
        assert report.ok
        for version in ("1_0", "2_0"):
            document = load_yaml_file(root / f"domains/shop/sales/orders/v{version}/schema.yaml")
            assert [c["name"] for c in document["columns"]] == [f"col_{index}_{version}"]


def test_relative_imports_inside_a_schema_file_keep_working(tree):
    write_schema(tree, "domains/shop", """
        import pandera.pandas as pa
        from registry_client.authoring import BaseDataFrameSchema

        class ShopBase(BaseDataFrameSchema):
            shop_id: str = pa.Field(str_startswith="SHOP-")
    """, filename="common.py")
    write_schema(tree, "domains/shop/sales/orders", "ORDER_STATES = ['open', 'closed']\n", filename="states.py")
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(
        header="from ....common import ShopBase\nfrom ..states import ORDER_STATES",
        body="    state: str = pa.Field(isin=ORDER_STATES)\n",
    ).replace("(ContractMixin, BaseDataFrameSchema)", "(ContractMixin, ShopBase)"))
    report = export_tree(tree)
    assert report.ok, [r.error for r in report.results]
    document = load_yaml_file(tree / "domains/shop/sales/orders/v1_0/schema.yaml")
    assert [(c["name"], c["checks"]) for c in document["columns"]] == [
        ("shop_id", [{"str_startswith": "SHOP-"}]),
        ("state", [{"isin": ["open", "closed"]}]),
    ]


def test_an_edited_schema_is_re_imported_in_the_same_process(tree):
    path = write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body="    a: str\n"))
    export_tree(tree)
    path.write_text(path.read_text().replace("    a: str\n", "    b: str\n"))
    assert export_tree(tree, check=True).results[0].status == "stale"
    export_tree(tree)
    assert [c["name"] for c in load_yaml_file(path.with_name("schema.yaml"))["columns"]] == ["b"]


@pytest.mark.parametrize(
    ("folder", "source", "message"),
    [
        ("domains/shop/sales/orders/v1_0", contract_source(entity="order"),
         "declares the name 'shop.sales.order' but lives in"),
        ("domains/shop/orders/v1_0", contract_source(),
         "whose folders spell 'shop.orders'; move it under domains/shop/sales/orders/"),
        ("domains/shop/sales/orders/v1_0", contract_source(version="1.1"),
         "declares version '1.1' but lives in folder 'v1_0' (version '1.0'); it belongs in v1_1/"),
        ("domains/shop/sales/orders/v1_0", "x = 1\n",
         "defines no contract: decorate one DataFrameModel with @register_dataframe_schema"),
        ("domains/shop/sales/orders/v1_0",
         contract_source() + "\n\n" + contract_source(class_name="Again").split("\n\n", 1)[1],
         "defines 2 contracts (Again, OrdersSchema)"),
        ("domains/shop/sales/orders/v1_0", contract_source(body="    a: str\n    b: complex\n"),
         "column 'b': unknown dtype"),
        ("domains/shop/sales/orders/v1_0", contract_source(header="import not_a_module_anywhere"),
         "import failed (line 3: import not_a_module_anywhere): ModuleNotFoundError"),
        ("domains/shop/sales/orders/v1_0",
         contract_source().replace("(ContractMixin, BaseDataFrameSchema)", "(BaseDataFrameSchema)"),
         "must mix in ContractMixin"),
    ],
    ids=["wrong-entity", "wrong-folders", "wrong-version", "no-contract", "two-contracts", "unknown-dtype",
         "import-error", "no-mixin"],
)
def test_a_contract_that_cannot_be_exported_is_reported_and_the_rest_still_export(tree, folder, source, message):
    write_schema(tree, folder, source)
    good = write_schema(tree, "domains/shop/crm/customers/v1_0", contract_source(subdomains=("crm",), entity="customers"))
    with pytest.raises(CommandError) as caught:
        run(root=tree)
    assert "1 contract(s) could not be exported" in str(caught.value)
    assert message in str(caught.value)
    assert good.with_name("schema.yaml").exists()
    assert not (tree / folder / "schema.yaml").exists()


def test_a_missing_owner_is_refused_at_export(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source().replace("owner='checkout', ", ""))
    with pytest.raises(CommandError, match=r"shop.sales.orders: declare owner=<team slug>"):
        run(root=tree)


def test_a_root_without_domains_is_refused(tmp_path):
    with pytest.raises(CommandError, match="expected a 'domains' folder"):
        run(root=tmp_path)


def test_an_orphaned_generated_yaml_fails_check(demo_copy):
    (demo_copy / "domains/retail/crm/customers/v2_0/schema.py").unlink()
    with pytest.raises(CommandError, match="have no schema.py:\n  domains/retail/crm/customers/v2_0/schema.yaml"):
        run("--check", root=demo_copy)


def test_skipped_checks_are_warned_on_stderr_during_export(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    amount: float = pa.Field(ge=0)\n\n"
        "    @pa.check('amount', name='cents_only')\n"
        "    def cents_only(cls, s):\n"
        "        return (s * 100) % 1 == 0\n"
    )))
    _, err = run(root=tree)
    assert "shop.sales.orders: column 'amount': check 'cents_only' skipped" in err


def test_output_does_not_depend_on_the_hash_seed(tree):
    """Sets (isin={...}) iterate in hash order; the exporter must not leak that order into the YAML."""
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    state: str = pa.Field(isin={'open', 'paid', 'shipped', 'closed', 'void', 'held'})\n"
        "    code: str = pa.Field(notin=frozenset({'x', 'y', 'z', 'w'}))\n"
    )))
    target = tree / "domains/shop/sales/orders/v1_0/schema.yaml"
    export_tree(tree)  # this process: a random hash seed, unless one was fixed
    outputs = {target.read_bytes()}
    target.unlink()
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": seed, "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "export_contracts", "--root", str(tree), "-v0"],
        env=env, cwd=REPO, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    outputs.add(target.read_bytes())
    assert len(outputs) == 1
    assert b"isin: [closed, held, open, paid, shipped, void]" in outputs.pop()


def test_a_single_unique_column_name_in_config_is_written_as_a_list(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    order_id: str\n\n"
        "    class Config:\n"
        "        unique = 'order_id'\n"
    )))
    export_tree(tree)
    assert load_yaml_file(tree / "domains/shop/sales/orders/v1_0/schema.yaml")["config"]["unique"] == ["order_id"]


def test_column_titles_and_descriptions_are_exported(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    order_id: str = pa.Field(title='Order number', description='As printed on the receipt.')\n"
        "    note: str\n"
    )))
    export_tree(tree)
    columns = load_yaml_file(tree / "domains/shop/sales/orders/v1_0/schema.yaml")["columns"]
    assert (columns[0]["title"], columns[0]["description"]) == ("Order number", "As printed on the receipt.")
    assert "title" not in columns[1] and "description" not in columns[1]


def test_a_columns_physical_type_is_exported_from_its_field_metadata(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    total: float = pa.Field(metadata={'physical_type': 'DECIMAL(10, 2)'})\n"
        "    note: str = pa.Field(metadata={'owner_note': 'not a type'})\n"
        "    count: int = pa.Field(metadata={'physical_type': 'bigint'})\n"
    )))
    export_tree(tree)
    columns = load_yaml_file(tree / "domains/shop/sales/orders/v1_0/schema.yaml")["columns"]
    assert columns[0]["physical_type"] == "DECIMAL(10, 2)" and list(columns[0])[:3] == ["name", "dtype", "physical_type"]
    assert "physical_type" not in columns[1]
    assert "physical_type" not in columns[2]  # int64's portable spelling: the export writes it anyway


def test_a_physical_type_that_is_not_a_name_is_refused_at_export(tree):
    write_schema(tree, "domains/shop/sales/orders/v1_0", contract_source(body=(
        "    total: float = pa.Field(metadata={'physical_type': 10})\n")))
    with pytest.raises(CommandError, match=r"column 'total': metadata physical_type must be a type name"):
        run(root=tree)
