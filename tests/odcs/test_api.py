"""A version in other tools' formats: ?format=odcs, pandera-yaml and json-schema."""

from __future__ import annotations

import pytest
import yaml

pytestmark = pytest.mark.django_db

ORDERS = "/api/contracts/retail.sales.orders/versions/1.0/"


@pytest.fixture
def api_client(client, owner):
    client.force_login(owner)
    return client


def test_a_version_is_an_odcs_contract_with_what_the_registry_knows(api_client, bound_orders, django_assert_max_num_queries):
    with django_assert_max_num_queries(14):
        response = api_client.get(ORDERS, {"format": "odcs"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/yaml")
    odcs = yaml.safe_load(response.content)
    assert (odcs["id"], odcs["version"], odcs["status"]) == ("retail.sales.orders", "1.0", "active")
    assert odcs["team"]["name"] == "checkout"
    assert {(m["username"], m["role"]) for m in odcs["team"]["members"]} == {("alice", "owner"), ("bob", "member")}
    (server,) = odcs["servers"]
    assert {k: server[k] for k in ("type", "host", "port", "database", "schema")} == {
        "type": "postgres", "host": "retail-db", "port": 5432, "database": "retail", "schema": "public"}
    assert odcs["schema"][0]["physicalName"] == "orders"
    # the dataset is bound in the registry, not named by the 1.0 document
    assert {"property": "registryDataset", "value": {"namespace": "postgres://retail-db:5432",
                                                     "name": "retail.public.orders", "inDocument": False}} in server["customProperties"]
    assert {"property": "registryFreshness", "value": {"maxAge": "PT1H", "warnAfter": "PT30M", "emptyWriteCounts": False}} in server["customProperties"]
    assert odcs["slaProperties"][0] | {"description": ""} == {
        "property": "freshness", "value": 1, "unit": "h", "element": "orders.ordered_at", "description": ""}
    custom = {c["property"]: c["value"] for c in odcs["customProperties"]}
    assert custom["registryConsumers"] == [{"team": "analytics", "namespace": "postgres://retail-db:5432",
                                            "name": "retail.public.orders"}]
    assert custom["registryCompatibilityMode"] == "FULL"


def test_the_plain_version_is_unchanged(api_client, published_demo):
    response = api_client.get(ORDERS)
    assert response["Content-Type"] == "application/json" and response.json()["version"] == "1.0"


def test_pandera_yaml_is_what_pandera_writes(api_client, published_demo):
    import pandera.pandas as pa

    response = api_client.get(ORDERS, {"format": "pandera-yaml"})
    assert response.status_code == 200
    schema = pa.DataFrameSchema.from_yaml(response.content.decode())
    assert schema.name == "retail.sales.orders" and list(schema.columns)[:2] == ["order_id", "customer_id"]
    assert (schema.strict, schema.coerce) == ("filter", True)


def test_json_schema_is_what_pandera_writes(api_client, published_demo):
    response = api_client.get(ORDERS, {"format": "json-schema"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/schema+json")
    body = response.json()
    assert body["title"] == "retail.sales.orders"
    assert body["properties"]["item_count"] == {"type": "array", "items": {"type": "integer"}}


def test_a_list_column_is_in_the_json_schema_as_an_array_of_lists(api_client, published_demo):
    # pandera cannot write a list dtype there; inventory 2.0 has `tags: List[str]`.
    response = api_client.get("/api/contracts/retail.warehouse.inventory/versions/2.0/", {"format": "json-schema"})
    assert response.status_code == 200
    properties = response.json()["properties"]
    assert properties["tags"] == {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
    assert properties["sku"] == {"type": "array", "items": {"type": "string"}}
    assert list(properties)[0] == "index"


def test_pandera_formats_are_refused_for_an_event_contract(api_client, published_demo):
    response = api_client.get("/api/contracts/retail.checkout.order_placed/versions/1.0/", {"format": "json-schema"})
    assert response.status_code == 400
    assert "event contract" in response.json()["detail"] and response.json()["code"] == "not_a_dataframe_contract"
    assert api_client.get("/api/contracts/retail.checkout.order_placed/versions/1.0/", {"format": "odcs"}).status_code == 200


def test_an_unknown_version_is_a_404_in_any_format(api_client, published_demo):
    response = api_client.get("/api/contracts/retail.sales.orders/versions/9.0/", {"format": "odcs"})
    assert response.status_code == 404
    assert "has no version '9.0'" in yaml.safe_load(response.content)["detail"]


def test_the_thin_client_gets_the_services_odcs_over_http(bound_orders, owner, live_server, local_store):
    from registry_client import Registry
    from registry_client.backends import HttpBackend

    from registry.models import ApiToken

    _, secret = ApiToken.issue("pipeline", user=owner)
    odcs = Registry(HttpBackend(live_server.url, secret)).get_odcs("retail.sales.orders", "1.0")
    assert odcs["id"] == "retail.sales.orders" and odcs["slaProperties"][0]["element"] == "orders.ordered_at"
    assert {m["username"] for m in odcs["team"]["members"]} == {"alice", "bob"}


def test_the_slos_come_from_freshness_through_the_cores_hook(bound_orders, dataset):
    from registry.hooks import service_levels_of

    assert service_levels_of([dataset.pk])[dataset.pk]["max_age"].total_seconds() == 3600
    assert service_levels_of([]) == {}
