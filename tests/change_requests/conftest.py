"""Change-request fixtures on top of the shared world.

`contract` (retail.checkout.order_placed) is owned by Checkout and bound to
`dataset`, which Analytics (carol) consumes; version 1.0 is published. The
proposed 2.0 makes `customer_id` required: breaking under BACKWARD.
"""

from __future__ import annotations

import copy

import pytest

from client.registry_client.compat import check_compatibility
from contracts_app.change_requests import open_change_request
from contracts_app.models import Contract, ContractVersion, DatasetBinding

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


@pytest.fixture
def contract(dataset, owner_team, owner):
    contract = Contract.objects.create(
        name="retail.checkout.order_placed", domain="retail", subdomains=["checkout"], entity="order_placed",
        schema_type="event", owner_team=owner_team, owner_label="checkout",
    )
    ContractVersion.objects.create(contract=contract, version="1.0", document=BASE_DOCUMENT, checksum="0" * 64,
                                   published_by=owner)
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    return contract


@pytest.fixture
def change_request(contract, owner):
    document = proposed_document()
    return open_change_request(contract, document, by=owner, report=report_for(document),
                               summary="Every order now names its customer.")
