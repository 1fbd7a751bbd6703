"""Change-request fixtures on top of the shared world.

`contract` (retail.checkout.order_placed) is owned by Checkout and bound to
`dataset`, which Analytics (carol) consumes; version 1.0 is published. The
proposed 2.0 makes `customer_id` required: breaking under BACKWARD.
"""

from __future__ import annotations

import copy

import pytest
from registry_client.compat import check_compatibility

from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from registry.env import parse_contract_store

BASE_DOCUMENT = {
    "schema": {
        "name": "retail.checkout.order_placed", "domain": "retail", "subdomains": ["checkout"],
        "entity": "order_placed", "version": "1.0", "owner": "checkout", "schema_type": "event",
        "description": "An order was placed.",
    },
    "meta": {"tier": "gold", "contract_type": "egress"},
    "payload": {
        "type": "object",
        "required": ["order_id"],
        "properties": {"order_id": {"type": "string"}, "customer_id": {"type": "string"}},
    },
}


def proposed_document(version: str = "2.0") -> dict:
    doc = copy.deepcopy(BASE_DOCUMENT)
    doc["schema"]["version"] = version
    doc["payload"]["required"] = ["order_id", "customer_id"]
    return doc


def report_for(document: dict) -> dict:
    return check_compatibility([BASE_DOCUMENT], document, "BACKWARD").to_dict()


@pytest.fixture(autouse=True)
def contract_store(settings, tmp_path):
    """Each test publishes into its own local contract store."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    return tmp_path / "store"


@pytest.fixture
def loopback_webhooks(settings):
    """Let webhooks reach the test receivers on 127.0.0.1, as WEBHOOK_ALLOWED_NETWORKS lets an
    internal receiver through (without it, a loopback target is refused)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture
def contract(dataset, owner_team, owner):
    """Version 1.0 recorded by the publish service, bound to `dataset`."""
    version = record_version(BASE_DOCUMENT, by=owner)
    version.contract.bind(dataset, by=owner)
    assert version.contract.owner_team == owner_team
    return version.contract


@pytest.fixture
def change_request(contract, owner):
    document = proposed_document()
    return open_change_request(contract, document, by=owner, report=report_for(document),
                               summary="Every order now names its customer.")
