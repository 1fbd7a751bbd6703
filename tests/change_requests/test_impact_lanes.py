"""The impact preview of a new major says which teams would stay on the old lane and which
could move to the new one (the old lane stays served)."""

from __future__ import annotations

import pytest

from change_requests.impact import as_markdown
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


def test_a_new_major_keeps_the_teams_it_breaks_on_the_old_lane(client, two_readers, owner):
    client.force_login(owner)
    body = client.post(f"/api/contracts/{two_readers.name}/impact/", proposed_document("2.0"),
                       content_type="application/json").json()
    assert body["lanes"]["new_lane"] == "2.x" and body["lanes"]["old_lane"] == "1.x"
    assert [(t["team"], t["lane"]) for t in body["lanes"]["stay"]] == [("analytics", "1.x")]
    assert [(t["team"], t["lane"]) for t in body["lanes"]["move"]] == [("warehouse", "2.x")]
    text = as_markdown(body)
    assert "analytics stays on 1.x until it approves or migrates" in text
    assert "warehouse can move to 2.x at once" in text


def test_a_version_inside_the_lane_opens_no_new_lane(client, two_readers, owner):
    client.force_login(owner)
    body = client.post(f"/api/contracts/{two_readers.name}/impact/", proposed_document("1.1"),
                       content_type="application/json").json()
    assert body["lanes"] is None
