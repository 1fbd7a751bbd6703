"""The contract API: browse, documents, diff, validate."""

from __future__ import annotations

import pytest
import yaml

from contracts_app.publishing import publish_document, record_version
from tests.publish.conftest import cell_count, order_placed, refund_api, with_column

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(owner, owner_team, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for document in (cell_count(), order_placed(), refund_api()):
            assert publish_document(document, by=owner, store=local_store).status == "published"
        record_version(with_column(cell_count("2.0"), {"name": "vcd", "dtype": "float64", "nullable": True,
                                                       "coerce": True, "required": True, "unique": False, "checks": []}),
                       by=owner, store=local_store)


@pytest.fixture
def api_client(client, owner):
    client.force_login(owner)
    return client


def test_the_api_needs_authentication(client, published):
    response = client.get("/api/contracts/")
    assert response.status_code == 401 and response.json()["code"] == "token_missing"


def test_a_bearer_token_reads_the_index(client, published, owner_token):
    _, secret = owner_token
    response = client.get("/api/contracts/index/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    assert [(r["name"], r["version"]) for r in response.json()["contracts"]] == [
        ("lab.analytics.cell_count", "1.0"), ("lab.analytics.cell_count", "2.0"),
        ("retail.checkout.order_placed", "1.0"), ("retail.payments.refund_api", "1.0"),
    ]


def test_domains_list_their_contracts_and_subdomains(api_client, published):
    assert api_client.get("/api/contracts/domains/").json() == [
        {"domain": "lab", "contracts": 1, "subdomains": ["analytics"]},
        {"domain": "retail", "contracts": 2, "subdomains": ["checkout", "payments"]},
    ]


def test_contracts_filter_by_meta_with_list_valued_source_systems(api_client, published, django_assert_num_queries):
    # 1: session, 2: user, 3: contracts with owner team (no count), 4: their versions
    with django_assert_num_queries(4):
        response = api_client.get("/api/contracts/", {"source_system": "eln"})
    body = response.json()
    assert [c["name"] for c in body["results"]] == ["lab.analytics.cell_count"]
    assert body["results"][0]["versions"] == ["1.0", "2.0"] and body["results"][0]["latest"] == "2.0"
    assert [c["name"] for c in api_client.get("/api/contracts/", {"tier": "gold"}).json()["results"]] == [
        "retail.payments.refund_api"]


def test_the_document_of_a_version_as_yaml_or_json(api_client, published):
    as_json = api_client.get("/api/contracts/lab.analytics.cell_count/versions/1.0/document/")
    assert as_json.json() == cell_count()
    as_yaml = api_client.get("/api/contracts/lab.analytics.cell_count/versions/1.0/document/", {"format": "yaml"})
    assert as_yaml["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(as_yaml.content) == cell_count()


@pytest.mark.parametrize("media_type", ["application/yaml", "application/x-yaml", "text/yaml"])
def test_the_document_comes_as_yaml_under_each_name_yaml_goes_by(api_client, published, media_type):
    response = api_client.get("/api/contracts/lab.analytics.cell_count/versions/1.0/document/", HTTP_ACCEPT=media_type)
    assert response.status_code == 200 and response["Content-Type"].startswith(media_type)
    assert yaml.safe_load(response.content) == cell_count()


def test_unknown_versions_say_which_exist(api_client, published):
    response = api_client.get("/api/contracts/lab.analytics.cell_count/versions/9.9/")
    assert response.status_code == 404
    assert response.json()["detail"] == "Contract 'lab.analytics.cell_count' has no version '9.9' (published: 1.0, 2.0)."


def test_diff_lists_structural_changes_and_the_checkers_verdict(api_client, published):
    body = api_client.get("/api/contracts/lab.analytics.cell_count/diff/", {"from": "1.0", "to": "2.0"}).json()
    assert {"path": "/columns/vcd", "kind": "added", "before": None, "after": {
        "name": "vcd", "dtype": "float64", "nullable": True, "coerce": True, "required": True, "unique": False,
        "checks": []}} in body["changes"]
    assert body["compatibility"]["compatible"] is False
    assert api_client.get("/api/contracts/lab.analytics.cell_count/diff/").status_code == 400


def test_validate_an_event_payload(api_client, published):
    url = "/api/contracts/retail.checkout.order_placed/versions/1.0/validate/"
    ok = api_client.post(url, {"order_id": "o-1", "total": 3}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["valid"] is True
    bad = api_client.post(url, {"order_id": 5, "total": -1}, content_type="application/json")
    assert bad.status_code == 422
    assert [(e["path"], e["validator"]) for e in bad.json()["errors"]] == [("/order_id", "type"), ("/total", "minimum")]


def test_validate_a_named_section_of_an_api_contract(api_client, published):
    url = "/api/contracts/retail.payments.refund_api/versions/1.0/validate/"
    missing = api_client.post(url, {}, content_type="application/json")
    assert missing.status_code == 400 and "request, response, callbacks.refund_settled" in missing.json()["detail"]
    bad = api_client.post(url + "?section=callbacks.refund_settled", {"refund_id": "r"}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["errors"][0]["message"] == "'settled_at' is a required property"
    good = api_client.post(url + "?section=request", {"payment_id": "p", "amount": 1.5}, content_type="application/json")
    assert good.status_code == 200


def test_a_dataframe_contract_cannot_validate_payloads(api_client, published):
    response = api_client.post("/api/contracts/lab.analytics.cell_count/versions/1.0/validate/", {},
                               content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "dataframe_contract"
    assert "describes a table, not a JSON payload" in response.json()["detail"]
