"""--write-tree: drafts as contracts-as-code, which the export, the gates and publish_contracts
treat like any authored contract; a re-run leaves the team's edits alone."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from contracts_app.models import ContractVersion
from contracts_app.yamlio import load_yaml_file
from tests.adopting.conftest import CATALOG, MANIFEST, NAMESPACE

pytestmark = pytest.mark.django_db


def run(tree, *extra) -> str:
    out = StringIO()
    with pytest.raises(CommandError, match="1 node"):  # the snapshot's jsonb column, named and not drafted
        call_command("import_dbt", "--manifest", str(MANIFEST), "--catalog", str(CATALOG), "--namespace", NAMESPACE,
                     "--write-tree", str(tree), *extra, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_each_draft_is_written_as_schema_py_and_schema_yaml_in_its_version_folder(shop_teams, tmp_path):
    out = run(tmp_path)
    folder = tmp_path / "domains" / "wh" / "sales" / "orders" / "v1_0"
    assert sorted(p.name for p in folder.iterdir()) == ["schema.py", "schema.yaml"]
    assert "tree      wrote     domains/wh/sales/orders/v1_0/schema.py, domains/wh/sales/orders/v1_0/schema.yaml" in out
    document = load_yaml_file(folder / "schema.yaml")
    assert document["schema"]["name"] == "wh.sales.orders" and document["schema"]["owner"] == "sales"
    assert "drafted from dbt artefacts by import_dbt" in (folder / "schema.py").read_text()
    assert (tmp_path / "domains" / "wh" / "finance" / "revenue_by_country" / "v1_0" / "schema.py").exists()


def test_the_export_and_the_gates_treat_the_written_drafts_like_any_authored_contract(shop_teams, tmp_path, owner):
    run(tmp_path)
    call_command("export_contracts", "--root", str(tmp_path), "--check", stdout=StringIO(), stderr=StringIO())
    call_command("validate_contracts", "--root", str(tmp_path), stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("publish_contracts", "--root", str(tmp_path), "--dry-run", stdout=out, stderr=StringIO())
    assert "would publish 5, unchanged 0, refused 0" in out.getvalue()
    assert not ContractVersion.objects.exists()


def test_a_rerun_leaves_files_the_team_edited_in_its_pull_request(shop_teams, tmp_path):
    run(tmp_path)
    schema_py = tmp_path / "domains" / "wh" / "sales" / "orders" / "v1_0" / "schema.py"
    schema_yaml = schema_py.with_name("schema.yaml")
    schema_yaml.write_text(schema_yaml.read_text().replace("One row per order.", "One row per placed order."))
    edited_py = schema_py.read_text() + "\n# reviewed by sales\n"
    schema_py.write_text(edited_py)
    out = run(tmp_path)
    assert "kept      domains/wh/sales/orders/v1_0: files there differ from the draft; left as they are" in out
    assert "unchanged domains/wh/finance/revenue_by_country/v1_0" in out
    assert schema_py.read_text() == edited_py


def test_a_dry_run_writes_nothing_into_the_tree(shop_teams, tmp_path):
    run(tmp_path, "--dry-run")
    assert not (tmp_path / "domains").exists()
