"""Impact preview: the checker's verdicts, the suggested version and who would have to
acknowledge, from the API and the command, opening nothing."""

from __future__ import annotations

import json

import pytest
import yaml
from django.core.management import call_command

from change_requests.impact import as_markdown
from change_requests.models import ChangeRequest
from registry.models import Consumer

from .conftest import proposed_document
from .test_routing import reads

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_readers(contract, dataset, consumer_team, other_team):
    """Analytics reads customer_id (touched); Warehouse reads order_id only."""
    Consumer.objects.create(dataset=dataset, team=other_team)
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "customer_id")
    reads(dataset, other_team, "warehouse_load", "order_id")
    return contract


def test_the_api_previews_verdicts_version_and_teams_without_opening_anything(client, two_readers, owner):
    client.force_login(owner)
    response = client.post(f"/api/contracts/{two_readers.name}/impact/", proposed_document("1.1"),
                           content_type="application/json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["compatible"] is False and body["suggested_version"] == "2.0"
    assert "understates" in body["version_problem"]
    assert body["touched_columns"] == ["customer_id"]
    assert [t["team"] for t in body["affected"]] == ["analytics"]
    assert body["affected"][0]["jobs"][0]["job"] == "airflow/orders_by_customer"
    assert [t["team"] for t in body["not_affected"]] == ["warehouse"]
    assert body["dataset_granular"] == ["analytics", "warehouse"]
    assert not ChangeRequest.objects.exists()


def test_the_api_adds_a_markdown_block_when_asked_for_one(client, two_readers, owner):
    client.force_login(owner)
    response = client.post(f"/api/contracts/{two_readers.name}/impact/?format=markdown", proposed_document("1.1"),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/json")
    assert "analytics" in response.json()["markdown"]


def test_the_api_refuses_a_document_the_gates_refuse_saying_why(client, two_readers, owner):
    client.force_login(owner)
    document = proposed_document()
    del document["payload"]
    response = client.post(f"/api/contracts/{two_readers.name}/impact/", document, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "gate_refused" and response.json()["errors"]


def test_the_api_refuses_a_document_for_another_contract(client, two_readers, owner):
    client.force_login(owner)
    response = client.post("/api/contracts/retail.other.thing/impact/", proposed_document(),
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "name_mismatch"


def test_the_command_prints_a_block_for_a_pull_request_and_exits_1(two_readers, tmp_path, capsys):
    path = tmp_path / "proposed.yaml"
    path.write_text(yaml.safe_dump(proposed_document()))
    with pytest.raises(SystemExit) as exit_:
        call_command("impact_preview", str(path), "--format", "markdown")
    assert exit_.value.code == 1
    out = capsys.readouterr().out
    assert out.startswith("### Impact of retail.checkout.order_placed 2.0")
    assert "**Must acknowledge:**\n- **analytics**: its jobs read customer_id" in out
    assert "Told, not affected:\n- warehouse" in out


def test_the_command_speaks_json_and_exits_0_when_nobody_would_wait(contract, dataset, consumer_team, tmp_path, capsys):
    reads(dataset, consumer_team, "daily_orders", "order_id")
    path = tmp_path / "proposed.json"
    path.write_text(json.dumps(proposed_document()))
    call_command("impact_preview", str(path), "--format", "json")
    body = json.loads(capsys.readouterr().out)
    assert body["affected"] == [] and body["not_affected"][0]["team"] == "analytics"


def test_the_command_exits_2_on_an_unreadable_file(tmp_path, capsys, db):
    path = tmp_path / "broken.yaml"
    path.write_text("schema: [unclosed")
    with pytest.raises(SystemExit) as exit_:
        call_command("impact_preview", str(path))
    assert exit_.value.code == 2
    assert "cannot read it" in capsys.readouterr().err


def test_the_markdown_block_marks_a_change_decided_by_the_budget():
    answer = {"contract": "retail.checkout.order_placed", "proposed_version": "2.0", "compatible": False,
              "mode": "BACKWARD", "suggested_version": "2.0", "touched_columns": None, "affected": [],
              "not_affected": [], "unregistered_readers": [],
              "changes": [{"path": "/payload", "kind": "budget_exceeded", "breaks_backward": True, "breaks_forward": True,
                           "breaking": True, "proof": "undecided",
                           "reason": "not decided within 40000 steps: treated as breaking both ways"}]}
    block = as_markdown(answer)
    assert "| `/payload` | backward + forward | decided by a budget | not decided within 40000 steps" in block
    assert "1 of these was decided by the checker's budget, not by the schemas" in block
