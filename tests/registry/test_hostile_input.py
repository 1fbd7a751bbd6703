"""Bad input anywhere is a 4xx with a JSON body that names the problem, never a 500:
NUL characters in paths, query strings and bodies; JSON nested past any stack,
huge integers, NaN and lone surrogates on every POST endpoint; durations past
what a timedelta holds."""

from __future__ import annotations

import pytest

from contracts_app.models import Contract, ContractVersion
from registry.env import parse_duration
from registry.models import ApiToken, Dataset

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_BODIES = {
    "nested 100,000 deep": DEEP,
    "an object nested 100,000 deep": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "a lone surrogate": '{"team": "a\\ud800b", "namespace": "\\ud800", "owner": "x"}',
    "a lone low surrogate": '{"team": "\\udc00"}',
    "a 5,000-digit integer": '{"team": 1' + "0" * 5000 + "}",
    "NaN": '{"team": NaN}',
    "a number out of range": '{"max_age": 1e400}',
}


@pytest.fixture
def contract(db) -> Contract:
    contract = Contract.objects.create(name="retail.checkout.order_placed", domain="retail", entity="order_placed",
                                       schema_type="event")
    ContractVersion.objects.create(contract=contract, version="1.0", checksum="x", document={
        "schema": {"schema_type": "event", "name": contract.name}, "payload": {"type": "object"}})
    return contract


def post_endpoints(dataset: Dataset, contract: Contract) -> list[tuple[str, str]]:
    """Every endpoint that reads a JSON body, with a method it reads one on."""
    return [
        ("post", f"/api/datasets/{dataset.pk}/claim/"),
        ("post", f"/api/datasets/{dataset.pk}/consumers/"),
        ("post", "/api/teams/checkout/job-namespaces/"),
        ("put", f"/api/datasets/{dataset.pk}/freshness/"),
        ("patch", f"/api/contracts/{contract.name}/"),
        ("post", f"/api/contracts/{contract.name}/bindings/"),
        ("post", f"/api/contracts/{contract.name}/versions/1.0/validate/"),
        ("post", f"/api/contracts/{contract.name}/impact/"),
        ("post", "/api/change-requests/"),
        ("post", "/api/v1/lineage"),
        ("post", "/api/v1/lineage/"),
        ("post", "/api/v1/lineage/batch"),
    ]


def assert_refused(response, status: int = 400) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    body = response.json()
    assert body["detail"] and body["code"], body
    return body


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def assert_refused_on_a_page(response, status: int = 400) -> str:
    """A browser on a page is answered a page, not the API's JSON, saying what was wrong."""
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "NUL character" in page, page
    return page


@pytest.mark.parametrize("what", list(HOSTILE_BODIES))
def test_every_post_endpoint_refuses_json_it_cannot_read_with_a_400_naming_it(client, admin, dataset, owner_team,
                                                                             contract, what, settings):
    # Each endpoint's own refusal: the token's budget of refused bodies (tests/lineage/test_token_rate.py)
    # would otherwise answer 429 once some megabytes of them were read.
    settings.LINEAGE_TOKEN_BYTES_PER_SECOND = 0
    secret = ApiToken.issue("admin's", user=admin)[1]
    client.force_login(admin)
    for method, path in post_endpoints(dataset, contract):
        response = getattr(client, method)(path, HOSTILE_BODIES[what], content_type="application/json",
                                           HTTP_AUTHORIZATION=f"Bearer {secret}")
        body = assert_refused(response)
        assert body["code"] in {"too_deep", "lone_surrogate", "number_too_large", "bad_json"}, (path, body)


def test_the_refusals_say_what_and_where(client, admin, dataset):
    client.force_login(admin)
    path = f"/api/datasets/{dataset.pk}/claim/"
    deep = assert_refused(client.post(path, DEEP, content_type="application/json"))
    assert deep["code"] == "too_deep" and "100000 deep; the limit is 100" in deep["detail"]
    lone = assert_refused(client.post(path, '{\n  "team": "a\\ud800"}', content_type="application/json"))
    assert lone["code"] == "lone_surrogate" and "\\ud800 at line 2, column 13" in lone["detail"]
    huge = assert_refused(client.post(path, '{"team": -1' + "0" * 5000 + "}", content_type="application/json"))
    assert huge["code"] == "number_too_large" and "5001 digits" in huge["detail"]


def test_surrogate_pairs_and_escaped_backslashes_are_ordinary_text(client, admin, owner_team, dataset):
    client.force_login(admin)
    # 😀 as ensure_ascii encoders write it, and a literal backslash-u text.
    body = '{"namespace": "emoji-\\ud83d\\ude00-\\\\ud800"}'
    response = client.post("/api/teams/checkout/job-namespaces/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["namespace"] == "emoji-\U0001F600-\\ud800"


def test_a_bad_token_is_told_so_before_anything_about_a_hostile_body(client):
    for path in ("/api/v1/lineage", "/api/v1/lineage/batch"):
        for body in HOSTILE_BODIES.values():
            response = client.post(path, body, content_type="application/json", HTTP_AUTHORIZATION="Bearer x")
            assert assert_refused(response, 401)["code"] == "token_invalid"


NUL_REQUESTS = [
    ("get", "/api/datasets/?search=a%00b", None),
    ("get", "/api/datasets/?owner_team=%00", None),
    ("get", "/api/contracts/?tier=%00", None),
    ("get", "/api/contracts/?domain=a%00", None),
    ("get", "/api/v1/lineage?nodeId=dataset:a%00:b", None),
    ("get", "/api/v1/column-lineage?nodeId=datasetField:a%00:b:c", None),
    ("get", "/api/v1/search?q=a%00", None),
    ("get", "/api/v1/namespaces/a%00b/jobs", None),
    ("get", "/api/contracts/a%00b/", None),
    ("get", "/api/change-requests/?status=%00", None),
    ("get", "/?q=a%00b", None),
    ("get", "/lineage/jobs/?q=%00", None),
    ("post", "/api/datasets/{pk}/claim/", '{"team": "a\\u0000b", "owner": "alice"}'),
    ("post", "/api/datasets/{pk}/consumers/", '{"team": "\\u0000"}'),
    ("post", "/api/teams/checkout/job-namespaces/", '{"namespace": "a\\u0000"}'),
    ("put", "/api/datasets/{pk}/freshness/", '{"max_age": "1\\u0000d"}'),
]


@pytest.mark.parametrize(("method", "path", "body"), NUL_REQUESTS)
def test_a_nul_character_anywhere_is_a_400_that_says_where(client, admin, dataset, owner_team, method, path, body):
    client.force_login(admin)
    path = path.format(pk=dataset.pk)
    if body is None:
        response = getattr(client, method)(path)
    else:
        response = getattr(client, method)(path, body, content_type="application/json")
    refused = assert_refused(response)
    assert refused["code"] == "nul_character"
    assert "NUL" in refused["detail"]


def test_a_nul_in_a_query_parameter_is_named(client, admin):
    client.force_login(admin)
    assert "'search'" in assert_refused(client.get("/api/datasets/?search=a%00b"))["detail"]


@pytest.mark.parametrize("path", ["/?q=a%00b", "/lineage/jobs/?q=%00"])
def test_a_browser_is_told_of_a_nul_on_a_page(client, owner, path):
    client.force_login(owner)
    assert_refused_on_a_page(client.get(path, HTTP_ACCEPT=BROWSER))


def test_a_nul_in_a_web_form_is_a_400_and_nothing_changes(client, owner, owner_team, unowned_dataset):
    client.force_login(owner)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", "team=check%00out",
                           content_type="application/x-www-form-urlencoded", HTTP_ACCEPT=BROWSER)
    assert_refused_on_a_page(response)
    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team is None


def test_an_escaped_backslash_before_u0000_is_no_nul(client, admin, owner_team):
    client.force_login(admin)
    response = client.post("/api/teams/checkout/job-namespaces/", '{"namespace": "a\\\\u0000"}',
                           content_type="application/json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("max_age", ["99999999999999999d", "1e300", "1e300w", "inf", "nan", 1e300, 99999999999999999999])
def test_an_slo_longer_than_any_duration_is_a_400_naming_the_field(client, admin, dataset, max_age):
    client.force_login(admin)
    response = client.put(f"/api/datasets/{dataset.pk}/freshness/", {"max_age": max_age},
                          content_type="application/json")
    assert response.status_code == 400, response.content
    assert "max_age" in response.json() or "max_age" in response.json().get("detail", ""), response.json()


def test_the_slo_page_refuses_an_endless_duration_on_the_form(client, owner, dataset):
    client.force_login(owner)
    response = client.post(f"/datasets/{dataset.pk}/freshness/", {"max_age": "99999999999999999d"}, follow=True)
    assert response.status_code == 200
    assert b"The SLO was not saved" in response.content and b"longest duration" in response.content


def test_parse_duration_bounds_its_value():
    for text in ("99999999999999999d", "1e300", "inf", "nan"):
        with pytest.raises(ValueError):
            parse_duration(text)
    assert parse_duration("36500d").days == 36500


def test_a_chunked_body_elsewhere_than_the_ingest_is_a_411_not_an_empty_body(client, admin, dataset):
    from io import BytesIO

    client.force_login(admin)
    response = client.generic("POST", f"/api/datasets/{dataset.pk}/claim/", b"", CONTENT_TYPE="application/json",
                              HTTP_TRANSFER_ENCODING="chunked",
                              **{"wsgi.input": BytesIO(b'{"team": "checkout", "owner": "alice"}')})
    assert assert_refused(response, 411)["code"] == "length_required"
