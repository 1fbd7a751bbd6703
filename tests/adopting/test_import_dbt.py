"""manage.py import_dbt over tests/adopting/dbt_shop: every dbt artefact field it uses,
re-runs, dry runs and what a person changed since."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from contracts_app.dbt import import_project, load_json, read_project
from contracts_app.models import Draft, DraftAction
from registry.jobs import DbtOwner
from registry.models import AuditEvent, Consumer, Dataset
from tests.adopting.conftest import CATALOG, MANIFEST, NAMESPACE

pytestmark = pytest.mark.django_db


def run(*extra: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("import_dbt", "--manifest", str(MANIFEST), "--catalog", str(CATALOG), "--namespace", NAMESPACE,
                     *extra, stdout=out, stderr=err)
    except CommandError as exc:
        err.write(f"CommandError: {exc}")
    return out.getvalue(), err.getvalue()


def dataset(name: str) -> Dataset:
    return Dataset.objects.select_related("owner_team").get(namespace=NAMESPACE, name=name)


def draft_of(name: str) -> Draft:
    return Draft.objects.get(contract_name=name)


def column(draft: Draft, name: str) -> dict:
    return next(c for c in draft.document["columns"] if c["name"] == name)


def test_models_seeds_snapshots_and_sources_become_datasets_named_as_dbt_ol_names_them(shop_teams):
    run()
    names = set(Dataset.objects.filter(namespace=NAMESPACE).values_list("name", flat=True))
    # <database>.<schema>.<alias>; a source by its identifier, a model by its alias
    assert names == {"wh.raw.orders_landed", "wh.platform.stg_orders", "wh.sales.orders", "wh.finance.revenue_by_country",
                     "wh.platform.country_codes", "wh.snapshots.orders_snapshot", "wh.misc.mystery"}


def test_owner_teams_come_from_meta_owner_then_the_group_owner_then_the_group_name(shop_teams):
    out, _ = run()
    assert dataset("wh.sales.orders").owner_team.slug == "sales"                 # meta.owner
    assert dataset("wh.snapshots.orders_snapshot").owner_team.slug == "sales"    # config.meta.owner
    assert dataset("wh.platform.country_codes").owner_team.slug == "platform"    # config.meta.owner_team
    assert dataset("wh.raw.orders_landed").owner_team.slug == "platform"         # a source's source_meta.owner
    assert dataset("wh.finance.revenue_by_country").owner_team.slug == "finance"  # group money's owner.name
    assert dataset("wh.platform.stg_orders").owner_team.slug == "platform"       # group platform's name
    assert dataset("wh.misc.mystery").owner_team is None
    assert "meta.owner 'nobody-here' name no team" in out


def test_a_team_alias_answers_for_a_dbt_owner_name(shop_teams, admin):
    from registry.ownership import declare_alias

    declare_alias(shop_teams["sales"], "nobody-here", by=admin)
    run()
    assert dataset("wh.misc.mystery").owner_team.slug == "sales"


def test_cross_team_refs_and_sources_make_the_reading_team_a_declared_consumer(shop_teams):
    run()
    consumers = {(c.dataset.name, c.team.slug) for c in Consumer.objects.select_related("dataset", "team")}
    assert consumers == {
        ("wh.raw.orders_landed", "platform"),   # no: platform owns both ends
    } - {("wh.raw.orders_landed", "platform")} | {
        ("wh.platform.stg_orders", "sales"),      # orders refs stg_orders
        ("wh.sales.orders", "finance"),            # revenue refs orders
        ("wh.platform.country_codes", "finance"),  # revenue refs the seed
    }
    audit = AuditEvent.objects.get(action="consumer.registered", object_id=str(dataset("wh.sales.orders").pk))
    assert audit.after == {"team": "finance", "declared_columns": None, "source": "dbt model.shop.revenue reads it"}


def test_the_catalog_types_the_columns_and_tests_give_nullability_uniqueness_and_accepted_values(shop_teams):
    run()
    revenue = draft_of("wh.finance.revenue_by_country")
    assert [c["name"] for c in revenue.document["columns"]] == ["order_id", "country", "revenue", "is_refund"]
    assert column(revenue, "order_id") == {"name": "order_id", "dtype": "int32", "nullable": False, "coerce": False,
                                           "required": True, "unique": True, "checks": []}
    assert column(revenue, "country")["checks"] == [{"isin": ["NL", "DE", "FR"]}]
    assert column(revenue, "country")["nullable"] is True
    assert column(revenue, "revenue")["dtype"] == "float64"             # numeric(12,2)
    assert column(revenue, "revenue")["description"] == "Net revenue in euros."  # from the manifest's docs
    assert column(revenue, "is_refund")["dtype"] == "bool"
    assert revenue.owner_team.slug == "finance" and revenue.state == "pending" and revenue.origin == "dbt"
    assert revenue.document["datasets"] == [{"namespace": NAMESPACE, "name": "wh.finance.revenue_by_country"}]
    assert any("relationships" in note for note in revenue.notes)


def test_an_enforced_model_contract_gives_its_columns_data_types_and_constraints(shop_teams):
    run()
    orders = draft_of("wh.sales.orders")
    # the contract's declared types, not the catalog's (character varying, numeric, ARRAY)
    assert {c["name"]: c["dtype"] for c in orders.document["columns"]} == {
        "order_id": "int32", "status": "str", "amount": "float64", "ordered_at": "datetime64[ns]", "tags": "List[str]"}
    assert column(orders, "order_id")["nullable"] is False and column(orders, "order_id")["unique"] is True  # primary key
    assert column(orders, "status")["checks"] == [{"isin": ["placed", "shipped"]}]
    assert column(orders, "status")["description"] == "Where the order is."
    assert any("'amount': constraints check are not carried" in note for note in orders.notes)
    assert orders.document["schema"]["description"] == "One row per order."


def test_a_type_the_table_cannot_map_is_named_and_its_draft_is_not_made(shop_teams):
    out, err = run()
    assert ("snapshot.shop.orders_snapshot column 'payload': postgres type 'jsonb' has no canonical dtype "
            "(a JSON document has no column dtype)") in err
    assert "CommandError: 1 node(s) could not be drafted" in err
    assert not Draft.objects.filter(contract_name="wh.snapshots.orders_snapshot").exists()
    assert dataset("wh.snapshots.orders_snapshot").owner_team.slug == "sales"  # the rest of the node is imported


def test_owners_are_recorded_for_job_attribution(shop_teams):
    run()
    owners = {o.unique_id: (o.team.slug, o.original_file_path, o.source) for o in DbtOwner.objects.select_related("team")}
    assert owners["model.shop.revenue"] == ("finance", "models/finance/revenue.sql", "group:money owner.name")
    assert owners["model.shop.stg_orders"] == ("platform", "models/platform/stg_orders.sql", "group:platform")
    assert "model.shop.mystery" not in owners


def test_a_dry_run_prints_the_changes_and_stores_nothing(shop_teams):
    out, _ = run("--dry-run")
    assert "would: created   dataset postgres://127.0.0.1:5432/wh.sales.orders" in out
    assert "would: owner     postgres://127.0.0.1:5432/wh.sales.orders: sales (from meta.owner)" in out
    assert "would: consumer  finance reads postgres://127.0.0.1:5432/wh.sales.orders" in out
    assert "would: created   draft wh.sales.orders 1.0" in out
    assert "dry run, nothing stored" in out
    assert not Dataset.objects.exists() and not Draft.objects.exists() and not DbtOwner.objects.exists()
    assert not AuditEvent.objects.exists()


def test_a_second_run_changes_nothing_and_its_dry_run_says_so(shop_teams):
    run()
    audits = AuditEvent.objects.count()
    out, _ = run("--dry-run")
    assert "would:" not in out
    out, _ = run()
    assert "nothing changed" in out or "draft unchanged" in out
    assert AuditEvent.objects.count() == audits


def test_a_rerun_refreshes_a_generated_draft_and_shows_what_changed(shop_teams, tmp_path):
    run()
    catalog = json.loads(CATALOG.read_text())
    catalog["nodes"]["model.shop.revenue"]["columns"]["channel"] = {"type": "text", "index": 9, "name": "channel"}
    changed = tmp_path / "catalog.json"
    changed.write_text(json.dumps(catalog))
    out = StringIO()
    with pytest.raises(CommandError):  # the snapshot's jsonb column still cannot be drafted
        call_command("import_dbt", "--manifest", str(MANIFEST), "--catalog", str(changed), "--namespace", NAMESPACE,
                     "--dry-run", stdout=out, stderr=StringIO())
    assert "would: refreshed draft wh.finance.revenue_by_country 1.0: columns added: channel" in out.getvalue()
    assert "channel" not in [c["name"] for c in draft_of("wh.finance.revenue_by_country").document["columns"]]
    project = read_project(load_json(MANIFEST, "manifest"), catalog)
    import_project(project, namespace=NAMESPACE)
    revenue = draft_of("wh.finance.revenue_by_country")
    assert "channel" in [c["name"] for c in revenue.document["columns"]]
    assert AuditEvent.objects.filter(action=DraftAction.REFRESHED, object_id=str(revenue.pk)).count() == 1


def test_a_rerun_touches_no_draft_a_person_edited_nor_a_dataset_another_team_owns(shop_teams, consumer, admin):
    run()
    revenue = draft_of("wh.finance.revenue_by_country")
    edited = json.loads(json.dumps(revenue.document))
    edited["columns"][1]["checks"] = [{"isin": ["NL", "DE", "FR", "BE"]}]
    revenue.edit(edited, by=consumer)
    stg = dataset("wh.platform.stg_orders")
    stg.assign_owner(shop_teams["sales"], by=admin, reason="sales runs staging now")

    catalog = json.loads(CATALOG.read_text())
    catalog["nodes"]["model.shop.revenue"]["columns"]["channel"] = {"type": "text", "index": 9, "name": "channel"}
    report = import_project(read_project(load_json(MANIFEST, "manifest"), catalog), namespace=NAMESPACE)

    assert draft_of("wh.finance.revenue_by_country").document == edited
    assert any(line.startswith("kept      draft wh.finance.revenue_by_country 1.0: edited by carol") for line in report.notices)
    assert dataset("wh.platform.stg_orders").owner_team.slug == "sales"
    assert any("kept      postgres://127.0.0.1:5432/wh.platform.stg_orders: owned by sales; dbt's group:platform says "
               "platform" in line for line in report.notices)


def test_a_missing_or_broken_manifest_is_a_clear_error(shop_teams, tmp_path):
    broken = tmp_path / "manifest.json"
    broken.write_text("{not json")
    with pytest.raises(CommandError, match=r"manifest .*manifest.json is not JSON"):
        call_command("import_dbt", "--manifest", str(broken), stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="no metadata or nodes"):
        broken.write_text("{}")
        call_command("import_dbt", "--manifest", str(broken), stdout=StringIO(), stderr=StringIO())


def test_without_a_namespace_the_one_lineage_already_uses_is_taken(shop_teams):
    Dataset.objects.create(namespace="postgres://wh-db:5432", name="wh.sales.orders")
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="could not be drafted"):  # without the catalog, revenue has no types
        call_command("import_dbt", "--manifest", str(MANIFEST), stdout=out, stderr=err, dry_run=True)
    assert "(namespace postgres://wh-db:5432)" in out.getvalue()
    assert ("model.shop.revenue column 'revenue': postgres type '' has no canonical dtype (the warehouse gave no "
            "type)") in err.getvalue()
    assert "run `dbt docs generate` for catalog.json" in err.getvalue()
    with pytest.raises(CommandError, match="pass it with --namespace"):
        Dataset.objects.all().delete()
        call_command("import_dbt", "--manifest", str(MANIFEST), stdout=StringIO(), stderr=StringIO())


def test_an_ephemeral_model_has_no_dataset(shop_teams):
    manifest = json.loads(MANIFEST.read_text())
    manifest["nodes"]["model.shop.mystery"]["config"]["materialized"] = "ephemeral"
    project = read_project(manifest, json.loads(CATALOG.read_text()))
    assert "model.shop.mystery" not in project.nodes
