"""The preflight fails closed: unknown, unbound or never evaluated is unsafe with a
reason; `columns=` narrows it to what touches those columns; `contract=` checks the
version range. Two queries, whatever the world."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.preflight import version_matches
from registry.models import ApiToken, Dataset
from tests.conftest import bearer

from .conftest import ALL_PASS, failed, report

pytestmark = pytest.mark.django_db

URL = "/api/preflight"


@pytest.fixture
def reader(consumer):
    return ApiToken.issue("nightly job", user=consumer, scopes=["read"])[1]


def ask(client, secret, **params):
    response = client.get(URL, params, **bearer(secret))
    assert response.status_code == 200, response.content
    return response.json()


def test_an_unknown_dataset_is_unsafe_with_a_reason(client, reader):
    answer = ask(client, reader, namespace="postgres://nowhere", name="nothing")
    assert answer["safe"] is False and answer["status"] == "unknown"
    assert answer["reasons"] == ["the registry knows no dataset postgres://nowhere/nothing"]


def test_a_dataset_without_a_contract_is_unsafe(client, reader, dataset):
    answer = ask(client, reader, namespace=dataset.namespace, name=dataset.name)
    assert answer["safe"] is False and answer["status"] == "no_contract"
    assert "not bound to a contract" in answer["reasons"][0]


def test_a_bound_dataset_never_evaluated_is_unsafe(client, reader, dataset, contract):
    answer = ask(client, reader, dataset=dataset.pk)
    assert answer["safe"] is False and answer["status"] == "unverified"
    assert len(answer["reasons"]) == 3


def test_every_declared_check_passing_is_safe(client, reader, dataset, contract):
    report(dataset, ALL_PASS)
    answer = ask(client, reader, namespace=dataset.namespace, name=dataset.name)
    assert answer["safe"] is True and answer["status"] == "passing" and answer["incidents"] == []
    assert answer["contract"] == {"name": "retail.checkout.orders", "version": "1.0"}
    assert answer["as_of"]


def test_an_open_incident_makes_it_unsafe_and_is_listed(client, reader, dataset, contract):
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")])
    answer = ask(client, reader, name=dataset.name)  # a unique name needs no namespace
    assert answer["safe"] is False and answer["status"] == "failing"
    [incident] = answer["incidents"]
    assert incident["column"] == "order_id" and incident["cause"] == "check_failed"


def test_columns_narrow_the_answer_to_the_incidents_that_touch_them(client, reader, dataset, contract):
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")])
    theirs = ask(client, reader, name=dataset.name, columns="amount")
    assert theirs["safe"] is True and theirs["incidents"] == []
    mine = ask(client, reader, name=dataset.name, columns="amount,ORDER_ID")
    assert mine["safe"] is False and len(mine["incidents"]) == 1


def test_a_whole_dataset_incident_touches_every_column(client, reader, dataset, contract):
    from incidents.evaluation import record_condition
    from incidents.models import Cause

    report(dataset, ALL_PASS)
    record_condition(dataset.pk, Cause.STALE, "stale: no write for 7h")
    answer = ask(client, reader, name=dataset.name, columns="amount")
    assert answer["safe"] is False and answer["reasons"] == ["stale: no write for 7h"]


def test_columns_still_fail_closed_on_a_check_of_theirs_that_never_ran(client, reader, dataset, contract):
    report(dataset, ALL_PASS[:2])  # amount's range never reported
    assert ask(client, reader, name=dataset.name, columns="order_id")["safe"] is True
    answer = ask(client, reader, name=dataset.name, columns="amount")
    assert answer["safe"] is False and answer["status"] == "unverified"


def test_a_contract_range_the_latest_version_misses_is_unsafe(client, reader, dataset, contract):
    report(dataset, ALL_PASS)
    assert ask(client, reader, name=dataset.name, contract="1.x")["safe"] is True
    answer = ask(client, reader, name=dataset.name, contract="2.x")
    assert answer["safe"] is False and answer["reasons"][0] == "the contract's latest version is 1.0, not 2.x"


def test_a_name_in_two_namespaces_needs_its_namespace(client, reader, dataset, contract):
    Dataset.objects.create(namespace="s3://lake", name=dataset.name)
    answer = ask(client, reader, name=dataset.name)
    assert answer["safe"] is False and "give its namespace" in answer["reasons"][0]


def test_asking_about_nothing_is_a_400_and_no_token_a_401(client, reader):
    response = client.get(URL, **bearer(reader))
    assert response.status_code == 400 and response.json()["code"]
    assert client.get(URL, {"name": "x"}).status_code == 401


def test_the_preflight_is_two_queries_after_authentication(client, reader, dataset, contract):
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")])
    ask(client, reader, name=dataset.name)  # warm the token cache, if any
    with CaptureQueriesContext(connection) as captured:
        ask(client, reader, name=dataset.name, columns="order_id")
    ours = [q["sql"] for q in captured.captured_queries if "incidents_" in q["sql"] or "registry_dataset" in q["sql"]]
    assert len(ours) == 2, ours


@pytest.mark.parametrize(("version", "wanted", "matches"), [
    ("1.0", "1.x", True), ("1.4", "1", True), ("1.2.3", "1.2", True), ("1.2", "1.2.0", True),
    ("2.0", "1.x", False), ("1.3", "1.2.x", False), ("1.0", "*", True),
])
def test_version_ranges(version, wanted, matches):
    assert version_matches(version, wanted) is matches
