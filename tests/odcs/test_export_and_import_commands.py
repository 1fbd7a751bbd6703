"""`export_contracts --format odcs --out DIR` and `import_odcs FILE --into DIR`."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import CommandError, call_command

from contracts_app.exporting import export_tree
from contracts_app.yamlio import load_yaml_file
from tests.odcs.conftest import DEMO

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported(published_demo, tmp_path):
    out = tmp_path / "odcs"
    call_command("export_contracts", "--format", "odcs", "--out", str(out), verbosity=0)
    return out


def test_every_published_version_is_exported(exported):
    files = sorted(p.name for p in exported.glob("*.odcs.yaml"))
    assert len(files) == len(DEMO) and "retail.sales.orders-1.0.odcs.yaml" in files
    assert yaml.safe_load((exported / "retail.sales.orders-2.0.odcs.yaml").read_text())["version"] == "2.0"


def test_odcs_export_needs_a_folder(published_demo):
    with pytest.raises(CommandError, match="--format odcs needs --out DIR"):
        call_command("export_contracts", "--format", "odcs", verbosity=0)


def test_import_writes_every_demo_contract_back_into_a_tree(exported, tmp_path, capsys):
    root = tmp_path / "tree"
    call_command("import_odcs", *sorted(map(str, exported.glob("*.odcs.yaml"))), "--into", str(root))
    for document in DEMO:
        schema = document["schema"]
        folder = root.joinpath("domains", schema["domain"], *schema["subdomains"], schema["entity"],
                               "v" + schema["version"].replace(".", "_"))
        assert load_yaml_file(folder / "schema.yaml") == document, schema["name"]
        assert (folder / "schema.py").exists() == (schema["schema_type"] == "dataframe")
    # the generated classes are contracts like any other: the exporter finds nothing stale
    report = export_tree(root, check=True)
    assert report.ok and len(report.results) == sum(d["schema"]["schema_type"] == "dataframe" for d in DEMO)
    # registry state is named, not silently dropped
    assert "customProperties[registryCompatibilityMode]: not part of a contract document" in capsys.readouterr().out


def test_an_imported_table_is_an_editable_pandera_class(exported, tmp_path):
    root = tmp_path / "tree"
    call_command("import_odcs", str(exported / "retail.sales.orders-1.0.odcs.yaml"), "--into", str(root), verbosity=0)
    source = (root / "domains/retail/sales/orders/v1_0/schema.py").read_text()
    assert "class OrdersSchema(ContractMixin, BaseDataFrameSchema):" in source
    assert "    item_count: np.int32 = pa.Field(nullable=False, unique=False, coerce=False, gt=0)" in source
    assert "    coupon_code: Optional[str] = pa.Field(" in source


def test_a_version_already_in_the_tree_is_refused_and_nothing_changes(exported, tmp_path):
    root = tmp_path / "tree"
    file = str(exported / "retail.sales.orders-1.0.odcs.yaml")
    call_command("import_odcs", file, "--into", str(root), verbosity=0)
    before = (root / "domains/retail/sales/orders/v1_0/schema.py").read_text()
    with pytest.raises(CommandError, match="could not be imported"):
        call_command("import_odcs", file, "--into", str(root), verbosity=0)
    assert (root / "domains/retail/sales/orders/v1_0/schema.py").read_text() == before


def test_a_contract_failing_the_gates_is_refused_naming_the_problem(exported, tmp_path, capsys):
    odcs = yaml.safe_load((exported / "retail.sales.orders-1.0.odcs.yaml").read_text())
    odcs["customProperties"] = [c for c in odcs["customProperties"] if c["property"] != "registryMeta"] + [
        {"property": "registryMeta", "value": {"tier": "platinum"}}]
    bad = tmp_path / "bad.odcs.yaml"
    bad.write_text(yaml.safe_dump(odcs))
    root = tmp_path / "tree"
    with pytest.raises(CommandError):
        call_command("import_odcs", str(bad), "--into", str(root), verbosity=0)
    assert "platinum" in capsys.readouterr().err
    assert not (root / "domains").exists()


def test_a_file_that_is_not_odcs_is_refused(tmp_path, capsys):
    bad = tmp_path / "not.yaml"
    bad.write_text("apiVersion: v2.2.0\nkind: DataContract\n")
    with pytest.raises(CommandError):
        call_command("import_odcs", str(bad), "--into", str(tmp_path / "tree"), verbosity=0)
    assert "expected an ODCS v3 DataContract" in capsys.readouterr().err
