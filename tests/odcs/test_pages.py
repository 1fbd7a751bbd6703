"""The contract page offers the version in every export format it has."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_a_table_contract_page_links_odcs_and_pandera_formats(client, owner, published_demo):
    client.force_login(owner)
    page = client.get("/contracts/retail.sales.orders/?version=1.0").content.decode()
    assert 'href="/api/contracts/retail.sales.orders/versions/1.0/?format=odcs"' in page
    assert 'href="/api/contracts/retail.sales.orders/versions/1.0/?format=pandera-yaml"' in page
    assert 'href="/api/contracts/retail.sales.orders/versions/1.0/?format=pandera-json"' in page
    assert 'href="/api/contracts/retail.sales.orders/versions/1.0/?format=json-schema"' in page
    assert client.get("/api/contracts/retail.sales.orders/versions/1.0/?format=odcs").status_code == 200


def test_an_event_contract_page_links_odcs_but_not_pandera(client, owner, published_demo):
    client.force_login(owner)
    page = client.get("/contracts/retail.checkout.order_placed/").content.decode()
    assert "?format=odcs" in page and "?format=pandera-yaml" not in page
