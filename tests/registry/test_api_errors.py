"""Every API path answers its failures in JSON with a stable code, whatever fails
and wherever: the database going away, an unknown object, a body Django refuses,
a bug. Pages keep answering pages."""

from __future__ import annotations

import pytest
import requests
from django.db import connections
from django.test import Client
from django.test.client import MULTIPART_CONTENT, encode_multipart

from freshness.models import DatasetFreshness
from registry.models import ApiToken, Consumer
from tests.lineage.test_postgres_outage import crashable_world  # noqa: F401 - a fixture: a server on its own cluster
from tests.servers import free_port

pytestmark = pytest.mark.django_db

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def reader_secret(owner_team) -> str:
    return ApiToken.issue("reader", team=owner_team)[1]


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def assert_api_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"], body
    assert isinstance(body["code"], str) and body["code"], body
    if code is not None:
        assert body["code"] == code, body
    return body


class database_down:
    """The default connection pointed at a port where nothing listens, as when
    PostgreSQL is down; back where it was afterwards."""

    def __enter__(self):
        self.default = connections["default"]
        self.default.close()
        self.saved = self.default.settings_dict["PORT"]
        self.default.settings_dict["PORT"] = str(free_port())

    def __exit__(self, *exc) -> None:
        self.default.close()
        self.default.settings_dict["PORT"] = self.saved


# --- the database away -----------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/api/datasets/", "/api/contracts/", "/api/v1/namespaces",
                                  "/api/v1/lineage?nodeId=dataset:a:b", "/api/teams/"])
def test_a_database_that_is_down_is_a_json_503_with_retry_after_on_every_api_path(client, reader_secret, path):
    with database_down():
        response = client.get(path, **bearer(reader_secret))
    body = assert_api_error(response, 503, "database_unavailable")
    assert response["Retry-After"] == "5"
    assert "5432" not in body["detail"] and "127.0.0.1" not in body["detail"]  # the log has the address
    # Once it is back, the same request is answered.
    assert client.get(path, **bearer(reader_secret)).status_code in (200, 404)


@pytest.mark.django_db(transaction=True)
def test_a_write_with_a_session_while_the_database_is_down_is_a_json_503(client, owner, owner_team, dataset):
    client.force_login(owner)
    with database_down():
        response = client.put(f"/api/datasets/{dataset.pk}/freshness/", {"max_age": "1d"},
                              content_type="application/json")
    assert_api_error(response, 503, "database_unavailable")
    assert response["Retry-After"] == "5"
    assert not DatasetFreshness.objects.filter(max_age__isnull=False).exists()


@pytest.mark.django_db(transaction=True)
def test_a_page_while_the_database_is_down_is_a_503_page_not_a_server_error(owner):
    client = Client(raise_request_exception=False)  # as a server answers: through handler500
    client.force_login(owner)
    with database_down():
        response = client.get("/", HTTP_ACCEPT=BROWSER)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/html")
    assert b"The database is unavailable" in response.content


@pytest.mark.slow
def test_while_postgres_is_stopped_the_production_server_answers_503s_not_500s(crashable_world):  # noqa: F811
    """granian, DEBUG off, a cluster of its own stopped under it: the API answers the
    API's 503, a page a 503 page, and both come back once PostgreSQL does."""
    cluster, url, secret = crashable_world
    token = {"Authorization": f"Bearer {secret}"}
    paths = ["/api/datasets/", "/api/teams/", "/api/contracts/", "/api/v1/namespaces", "/api/change-requests/"]
    assert [requests.get(url + path, headers=token, timeout=30).status_code for path in paths] == [200] * len(paths)
    cluster.stop("fast")
    try:
        answers = [requests.get(url + path, headers=token, timeout=30) for path in paths]
        answers.append(requests.post(f"{url}/api/teams/checkout/job-namespaces/", json={"namespace": "kafka://x"},
                                     headers=token, timeout=30))
        # A session cookie makes a page look its session up in the database.
        page = requests.get(f"{url}/", headers={"Accept": BROWSER}, cookies={"sessionid": "x" * 32}, timeout=30)
    finally:
        cluster.resume()
    for answer in answers:
        assert answer.status_code == 503, (answer.url, answer.status_code, answer.text[:300])
        assert answer.headers["Content-Type"] == "application/json" and answer.headers["Retry-After"] == "5"
        assert answer.json()["code"] == "database_unavailable"
    assert page.status_code == 503 and page.headers["Retry-After"] == "5"
    assert "The database is unavailable" in page.text
    # Back without a restart: at most the request that meets its lost connection fails.
    for path in paths:
        statuses = [requests.get(url + path, headers=token, timeout=30).status_code for _ in range(2)]
        assert statuses[-1] == 200, (path, statuses)


# --- unknown objects and paths -----------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/datasets/999999/", "/api/datasets/999999/consumers/",
                                  "/api/datasets/999999/freshness/", "/api/contracts/no-such-contract/",
                                  "/api/change-requests/999999/", "/api/teams/nobody/job-namespaces/",
                                  "/api/v1/namespaces/nowhere/datasets/nothing",
                                  "/api/nothing/here/"])
def test_an_unknown_object_or_path_is_a_json_404_with_a_code(client, reader_secret, path):
    assert_api_error(client.get(path, **bearer(reader_secret)), 404, "not_found")


def test_an_unknown_dataset_says_so(client, reader_secret):
    body = assert_api_error(client.get("/api/datasets/999999/", **bearer(reader_secret)), 404, "not_found")
    assert "Dataset" in body["detail"]


# --- what Django or DRF refuses before a view answers ----------------------------------

def test_no_credentials_is_a_json_401(client, dataset):
    assert_api_error(client.get(f"/api/datasets/{dataset.pk}/"), 401, "token_missing")


def test_a_read_only_token_writing_is_a_json_403(client, dataset, owner_team):
    secret = ApiToken.issue("reader", team=owner_team, scopes=["read"])[1]
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "checkout"},
                           content_type="application/json", **bearer(secret))
    assert_api_error(response, 403, "token_scope_missing")


def test_a_method_the_path_does_not_take_is_a_json_405(client, reader_secret):
    response = client.delete("/api/teams/", **bearer(reader_secret))
    assert_api_error(response, 405, "method_not_allowed")


def test_a_body_of_an_unknown_type_is_a_json_415(client, admin, dataset):
    client.force_login(admin)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", "team=x", content_type="text/plain")
    assert_api_error(response, 415, "unsupported_media_type")


def test_an_accept_header_nothing_matches_is_a_json_406(client, reader_secret):
    response = client.get("/api/teams/", HTTP_ACCEPT="image/png", **bearer(reader_secret))
    assert_api_error(response, 406, "not_acceptable")


def test_a_body_larger_than_the_server_takes_is_a_json_413(client, admin, dataset, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client.force_login(admin)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "x" * 2000},
                           content_type="application/json")
    assert_api_error(response, 413, "request_too_large")


def test_a_field_error_names_the_field_in_the_detail_and_under_fields(client, admin, dataset):
    client.force_login(admin)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {}, content_type="application/json")
    body = assert_api_error(response, 400, "invalid")
    assert body["detail"].startswith("team: ") and "team" in body["fields"]


def test_a_malformed_multipart_body_is_a_json_400_saying_so(client, admin, dataset):
    client.force_login(admin)
    response = client.generic("POST", f"/api/datasets/{dataset.pk}/consumers/", b"--nope\r\ngarbage",
                              content_type="multipart/form-data")
    assert "multipart" in assert_api_error(response, 400, "bad_request")["detail"].lower()


def test_a_bug_under_the_api_is_a_json_500_that_says_nothing_of_it(admin, dataset, monkeypatch):
    from registry.api import views

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(views.DatasetDetail, "retrieve", broken)
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    body = assert_api_error(client.get(f"/api/datasets/{dataset.pk}/"), 500, "server_error")
    assert "secret" not in body["detail"]


# --- a NUL byte in a multipart form -----------------------------------------------------

def multipart(**fields: str) -> bytes:
    return encode_multipart("BoUnDaRy", fields)


MULTIPART = MULTIPART_CONTENT.replace("BoUnDaRyStRiNg", "BoUnDaRy")


def test_a_nul_in_a_multipart_field_on_the_api_is_a_json_400_naming_it(client, admin, dataset, owner_team):
    client.force_login(admin)
    response = client.generic("POST", f"/api/datasets/{dataset.pk}/consumers/", multipart(team="check\x00out"),
                              content_type=MULTIPART)
    body = assert_api_error(response, 400, "nul_character")
    assert "'team'" in body["detail"]
    assert not Consumer.objects.filter(dataset=dataset, team__slug="checkout").exists()


def test_a_nul_in_a_multipart_put_is_refused_too(client, admin, dataset):
    client.force_login(admin)
    response = client.generic("PUT", f"/api/datasets/{dataset.pk}/freshness/", multipart(max_age="1\x00d"),
                              content_type=MULTIPART)
    assert_api_error(response, 400, "nul_character")
    assert not DatasetFreshness.objects.filter(max_age__isnull=False).exists()


def test_a_clean_multipart_put_still_reaches_the_view(client, admin, dataset):
    client.force_login(admin)
    response = client.generic("PUT", f"/api/datasets/{dataset.pk}/freshness/", multipart(max_age="1d"),
                              content_type=MULTIPART)
    assert response.status_code == 200, response.content
    assert DatasetFreshness.objects.filter(dataset=dataset, max_age__isnull=False).exists()


def test_a_nul_in_a_multipart_web_form_is_a_400_page_and_nothing_changes(client, owner, owner_team,
                                                                         unowned_dataset):
    client.force_login(owner)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": "check\x00out"}, HTTP_ACCEPT=BROWSER)
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")
    assert b"NUL character" in response.content and b"&#x27;team&#x27;" in response.content
    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team is None


def test_a_file_in_a_multipart_form_may_hold_nul_bytes(client, owner, owner_team, unowned_dataset):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(owner)
    binary = SimpleUploadedFile("data.bin", b"\x00\x01\x00")
    accepted = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": "checkout", "f": binary})
    assert accepted.status_code in (200, 302), accepted.content[:300]


def test_a_pages_script_sending_a_nul_in_a_multipart_form_is_answered_json(client, owner, owner_team,
                                                                          unowned_dataset):
    # fetch() asks for */*: a page's script reads the refusal as it reads the view's own JSON errors.
    client.force_login(owner)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": "check\x00out"}, HTTP_ACCEPT="*/*")
    assert_api_error(response, 400, "nul_character")


# --- what the OpenAPI document says ----------------------------------------------------

def test_every_operation_documents_the_errors_it_can_answer_in_the_error_shape(tmp_path):
    import yaml
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    document = yaml.safe_load(out.read_text())
    assert document["components"]["schemas"]["Error"]["required"] == ["detail", "code"]
    error = {"$ref": "#/components/schemas/Error"}
    operations = [(path, method.upper(), op) for path, item in document["paths"].items()
                  for method, op in item.items() if isinstance(op, dict) and "responses" in op]
    assert len(operations) > 40
    for path, method, op in operations:
        responses = op["responses"]
        for status in ("400", "401", "403", "503"):
            assert responses[status]["content"]["application/json"]["schema"] == error, (path, method, status)
        assert "Retry-After" in responses["503"]["headers"], (path, method)
        if "{" in path:
            assert "404" in responses, (path, method)
        if "requestBody" in op:
            assert {"413", "415"} <= responses.keys(), (path, method)
        for status, response in responses.items():
            assert status < "400" or response["description"], (path, method, status)
    ingest = document["paths"]["/api/v1/lineage"]["post"]["responses"]
    assert "406" not in ingest and "409" not in ingest  # the hot path skips DRF's negotiation; no domain rule
    assert ingest["422"]["content"]["application/json"]["schema"] == error


def test_a_host_the_site_does_not_serve_is_a_json_400_that_names_no_setting(admin):
    client = Client(raise_request_exception=False)
    response = client.get("/api/teams/", HTTP_HOST="evil.example")
    body = assert_api_error(response, 400, "bad_request")
    assert "ALLOWED_HOSTS" not in body["detail"]


def test_an_unknown_dataset_page_answers_a_script_with_json_and_a_code(client, consumer):
    client.force_login(consumer)
    response = client.get("/datasets/999999/", HTTP_ACCEPT="application/json")
    assert response.status_code == 404
    assert response.json() == {"detail": "No dataset #999999.", "code": "not_found"}


def test_an_unknown_dataset_page_shows_a_browser_the_error_page_with_its_code(client, consumer):
    client.force_login(consumer)
    response = client.get("/datasets/999999/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert b"No dataset #999999." in response.content and b"not_found" in response.content
