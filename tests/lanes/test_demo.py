"""The demo has one contract with two live lanes: retail.sales.orders 1.x (deprecated, a
reader still on it) beside 2.x."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from change_requests.demo import open_demo_change_request
from contracts_app.demo import publish_demo_contracts
from lanes.demo import live_old_lane
from lanes.evidence import lane_usage
from lanes.models import Lane
from registry.demo import load_core_demo

pytestmark = pytest.mark.django_db


def test_the_demo_keeps_a_deprecated_1x_lane_beside_2x_with_a_reader(django_capture_on_commit_callbacks, client):
    load_core_demo()
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        publish_demo_contracts(stdout=out)
        open_demo_change_request(stdout=out)
        live_old_lane(stdout=out)
    lane = Lane.objects.get(contract__name="retail.sales.orders", major=1)
    assert lane.is_deprecated(timezone.localdate()) and not lane.is_past_sunset(timezone.localdate())
    usage = {u.major: u for u in lane_usage([lane.contract])[lane.contract_id]}
    assert usage[1].latest == "1.1" and usage[2].latest == "2.0"
    assert usage[1].team_ids and "still on 1.x" in usage[1].summary
    finance = next(r for r in usage[1].readers if r.who == "airflow/finance.legacy_margin_report")
    assert finance.team == "Finance" and finance.source == "lineage"
    assert "has total_amount, not in 2.x" in finance.detail
    again = io.StringIO()
    live_old_lane(stdout=again)
    assert lane.contract.versions.filter(version="1.1").count() == 1
    client.force_login(get_user_model().objects.get(username="carol"))
    assert client.get("/api/contracts/retail.sales.orders/versions/1.x/").json()["version"] == "1.1"
