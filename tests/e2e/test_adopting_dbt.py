"""Adopting from dbt in a real browser: a governance admin uploads a dbt project's manifest and
catalog (a dry run first), then the owner team reviews a drafted contract and publishes it; a
governance admin uploads the teams file, and a consumer team confirms its readings in one action."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from contracts_app.models import ContractVersion, DatasetBinding
from registry.env import parse_contract_store
from registry.models import ApiToken, Consumer, Dataset, Team
from registry.ownership import save_ownership_rules
from tests.adopting.conftest import CATALOG, MANIFEST, NAMESPACE
from tests.conftest import bearer, make_team, make_user
from tests.lineage.conftest import column_lineage_facet, input_field, run_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    make_user("gina", is_staff=True, is_superuser=True)
    make_team("Sales", "sales", make_user("alice"))
    make_team("Finance", "finance", make_user("carol"))
    make_team("Platform", "platform", make_user("bob"))


def test_an_admin_imports_dbt_and_the_owner_team_reviews_and_publishes_a_draft(world, person):
    admin = person("gina")
    admin.goto("/drafts/")
    admin.click("#import-dbt-link")
    admin.set_input_files("input[name=manifest]", str(MANIFEST))
    admin.set_input_files("input[name=catalog]", str(CATALOG))
    admin.fill("input[name=namespace]", NAMESPACE)
    admin.click("#dbt-import-form button[type=submit]")
    expect(admin.locator("#dbt-import-report h2")).to_contain_text("Dry run: nothing was stored")
    expect(admin.locator("#dbt-import-changes")).to_contain_text("created   draft wh.sales.orders 1.0")
    assert not Dataset.objects.exists()

    admin.set_input_files("input[name=manifest]", str(MANIFEST))
    admin.set_input_files("input[name=catalog]", str(CATALOG))
    admin.fill("input[name=namespace]", NAMESPACE)
    admin.uncheck("input[name=dry_run]")
    admin.click("#dbt-import-form button[type=submit]")
    expect(admin.locator("#dbt-import-report h2")).to_contain_text("Imported")
    expect(admin.locator("#dbt-import-errors")).to_contain_text("postgres type 'jsonb' has no canonical dtype")

    outsider = person("carol")  # Finance: not the owner of wh.sales.orders
    outsider.goto("/drafts/?team=sales")
    outsider.click("text=wh.sales.orders")
    expect(outsider.locator("#cannot-approve")).to_be_visible()

    owner = person("alice")
    owner.goto("/drafts/")
    expect(owner.locator("#queue-sales")).to_contain_text("wh.sales.orders")
    owner.click("#queue-sales >> text=wh.sales.orders")
    expect(owner.locator("#draft-gate")).to_contain_text("passes")
    expect(owner.locator("#impact-verdict")).to_contain_text("a new contract")
    owner.click("text=Approve and publish")
    owner.wait_for_url("**/contracts/wh.sales.orders/")
    assert ContractVersion.objects.filter(contract__name="wh.sales.orders", version="1.0").exists()
    assert DatasetBinding.objects.get(dataset__name="wh.sales.orders").contract.name == "wh.sales.orders"


TEAMS_FILE = """\
teams:
  - slug: marketing
    name: Marketing
    members:
      - username: dora
        role: lead
"""

DBT_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"
DBT_FACET = "https://github.com/OpenLineage/OpenLineage/tree/main/integration/common/openlineage/schema/dbt-node-job-facet.json"


def a_marketing_model_reads(client, dataset, column: str) -> None:
    """dbt-ol's event for models/marketing/campaigns.sql reading `column` of `dataset`, sent
    with the project's one platform-wide token."""
    token = ApiToken.issue("dbt-ol", team=Team.objects.get(slug="platform"), scopes=["read", "lineage:write:any"])[1]
    source = {"namespace": dataset.namespace, "name": dataset.name}
    lineage = column_lineage_facet({column: [input_field(dataset.name, column, "DIRECT", namespace=dataset.namespace)]})
    event = run_event("COMPLETE", job="mart.campaigns", job_namespace="dbt_shop", inputs=[source],
                      outputs=[{"namespace": dataset.namespace, "name": "mart.campaigns",
                                "facets": {"columnLineage": lineage}}],
                      event_time=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                      job_facets={"dbt_node": {"_producer": DBT_PRODUCER, "_schemaURL": DBT_FACET,
                                               "unique_id": "model.shop.campaigns",
                                               "original_file_path": "models/marketing/campaigns.sql"}})
    answer = client.post("/api/v1/lineage", json.dumps(event), content_type="application/json", **bearer(token))
    assert answer.status_code == 201, answer.content


def test_an_admin_syncs_the_teams_file_and_a_consumer_team_confirms_its_readings_in_one_action(
        world, person, client, tmp_path):
    make_user("dora")
    teams_file = tmp_path / "teams.yaml"
    teams_file.write_text(TEAMS_FILE)
    admin = person("gina")
    admin.goto("/teams/sync/")
    admin.set_input_files("input[name=teams_file]", str(teams_file))
    admin.click("#teams-sync-form button[type=submit]")
    expect(admin.locator("#teams-sync-report h2")).to_contain_text("Dry run: nothing was stored")
    expect(admin.locator("#teams-sync-changes")).to_contain_text("marketing")
    assert not Team.objects.filter(slug="marketing").exists()

    admin.set_input_files("input[name=teams_file]", str(teams_file))
    admin.uncheck("input[name=dry_run]")
    admin.click("#teams-sync-form button[type=submit]")
    expect(admin.locator("#teams-sync-report h2")).to_contain_text("Applied")
    marketing = Team.objects.get(slug="marketing")
    assert list(marketing.memberships.values_list("user__username", flat=True)) == ["dora"]

    orders = Dataset.objects.create(namespace=NAMESPACE, name="wh.sales.orders", owner_team=Team.objects.get(slug="sales"))
    save_ownership_rules("models/marketing/ @marketing\n", by=make_user("olga", is_staff=True, is_superuser=True))
    a_marketing_model_reads(client, orders, "amount")

    consumer = person("dora")
    consumer.goto("/readings/")
    expect(consumer.locator("#team-marketing")).to_contain_text("wh.sales.orders")
    consumer.click("#team-marketing >> text=Confirm Marketing consumes these 1 dataset")
    expect(consumer.locator("#team-marketing")).not_to_contain_text("wh.sales.orders")
    assert Consumer.objects.filter(dataset=orders, team=marketing).exists()
