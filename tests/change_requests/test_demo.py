"""The demo leaves one breaking change waiting for its consumer team, and nothing half-done."""

from __future__ import annotations

import io

import pytest

from change_requests.demo import open_demo_change_request
from change_requests.models import ChangeRequest
from contracts_app.demo import publish_demo_contracts
from registry.demo import load_core_demo

pytestmark = pytest.mark.django_db


def test_the_demo_opens_one_request_for_analytics_and_publishes_the_approved_ones(django_capture_on_commit_callbacks):
    load_core_demo()
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        publish_demo_contracts(stdout=out)
        open_demo_change_request(stdout=out)
    waiting = ChangeRequest.objects.get(state="open")
    assert waiting.contract.name == "retail.checkout.order_placed"
    assert [r.team.slug for r in waiting.reviews.all()] == ["analytics"]
    assert waiting.summary.startswith("Every order now carries")
    assert not ChangeRequest.objects.filter(state="approved").exists()
    again = io.StringIO()
    open_demo_change_request(stdout=again)
    assert "nothing to open" in again.getvalue()
    assert ChangeRequest.objects.filter(state="open").count() == 1
