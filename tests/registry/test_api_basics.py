"""What every API endpoint has in common: JSON in and out, JSON errors with
snake_case codes, and an OpenAPI document that generated clients can use."""

from __future__ import annotations

import json

import pytest
import yaml
from django.core.management import call_command
from django.http import HttpResponse, HttpResponseNotAllowed
from django.test import RequestFactory

from lineage.models import RunEvent
from registry.middleware import JsonApiErrorsMiddleware
from registry.models import ApiToken
from tests.lineage.conftest import run_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def lineage_secret(owner_team) -> str:
    return ApiToken.issue("airflow", team=owner_team)[1]


def send(client, path: str, body: bytes, content_type: str, secret: str):
    return client.generic("POST", path, body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
@pytest.mark.parametrize("path", ["/api/v1/lineage", "/api/v1/lineage/batch"])
def test_the_ingest_refuses_a_body_that_is_not_json_with_415(client, lineage_secret, path, content_type):
    event = run_event("START", outputs=["mart.orders"])
    body = json.dumps([event] if path.endswith("batch") else event).encode()
    response = send(client, path, body, content_type, lineage_secret)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type" and "application/json" in response.json()["detail"]
    assert not RunEvent.objects.exists()


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"])
def test_the_ingest_takes_json_with_or_without_parameters(client, lineage_secret, content_type):
    body = json.dumps(run_event("START", outputs=["mart.orders"])).encode()
    assert send(client, "/api/v1/lineage", body, content_type, lineage_secret).status_code == 201


def test_a_bad_token_is_still_reported_before_a_bad_content_type(client):
    response = send(client, "/api/v1/lineage", b"{}", "text/plain", "dr_nope")
    assert response.status_code == 401


def test_an_unknown_api_path_is_a_json_404(client, owner):
    client.force_login(owner)
    response = client.get("/api/nothing/here/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "No API endpoint at /api/nothing/here/ (the list is at /api/docs/).",
                               "code": "not_found"}


def test_an_unknown_page_stays_html_for_a_browser(client, owner):
    client.force_login(owner)
    response = client.get("/nothing/here/", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert response.status_code == 404 and "application/json" not in response["Content-Type"]


def test_an_unknown_page_answers_a_script_in_json_with_its_code(client, owner):
    client.force_login(owner)
    response = client.get("/nothing/here/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_method_an_api_view_does_not_take_is_a_json_405(client, owner):
    client.force_login(owner)
    response = client.delete("/api/datasets/")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


def test_a_plain_views_405_under_api_becomes_json():
    request = RequestFactory().put("/api/anything")
    response = JsonApiErrorsMiddleware(lambda r: HttpResponseNotAllowed(["GET"]))(request)
    assert response.status_code == 405 and response["Allow"] == "GET"
    assert json.loads(response.content) == {"detail": "Method PUT is not allowed here; allowed: GET.", "code": "method_not_allowed"}
    page = JsonApiErrorsMiddleware(lambda r: HttpResponse(status=405))(RequestFactory().put("/datasets/1/"))
    assert "application/json" not in page["Content-Type"]


def test_domain_errors_have_snake_case_codes(client, unowned_dataset, consumer_team, consumer):
    client.force_login(consumer)
    response = client.post(f"/api/datasets/{unowned_dataset.pk}/consumers/", {"team": "analytics"},
                           content_type="application/json")
    assert response.status_code == 409 and response.json()["code"] == "dataset_unowned"


def test_the_openapi_document_declares_the_bearer_scheme_on_every_operation(tmp_path):
    out = tmp_path / "schema.yaml"
    # --fail-on-warn: the document generates without a single warning (make test runs this too).
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    document = yaml.safe_load(out.read_text())
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["bearerAuth"]["description"]}
    operations = [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]
    assert operations
    missing = [(path, method) for path, method, op in operations
               if not any("bearerAuth" in requirement for requirement in op.get("security", []))]
    assert missing == []
