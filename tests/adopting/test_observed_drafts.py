"""Drafting a contract from a dataset's observed schema: the page button, the API and
manage.py draft_contracts, all over a schema facet the ingest really stored."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from contracts_app.models import Draft, DraftAction
from lineage.ingest import store_event
from registry.models import AuditEvent, Dataset
from tests.conftest import bearer
from tests.lineage.conftest import dataset as ol_dataset
from tests.lineage.conftest import run_event, schema_facet

pytestmark = pytest.mark.django_db

NAMESPACE = "postgres://retail-db:5432"


def observe(name: str, *fields: tuple[str, str], namespace: str = NAMESPACE) -> None:
    store_event(run_event("COMPLETE", job="etl.orders", outputs=[
        ol_dataset(name, namespace=namespace, schema=schema_facet(*fields))]))


@pytest.fixture
def observed(dataset):
    observe("retail.public.orders", ("order_id", "bigint"), ("amount", "numeric(10,2)"),
            ("placed_at", "timestamp with time zone"), ("tags", "text[]"), ("note", "varchar(200)"))
    return dataset


def test_draft_contracts_drafts_every_owned_dataset_with_a_schema_and_no_contract(observed, owner_team):
    out = StringIO()
    call_command("draft_contracts", stdout=out, stderr=StringIO())
    assert "[1/1] created   draft retail.public.orders 1.0" in out.getvalue()
    draft = Draft.objects.get()
    assert draft.owner_team == owner_team and draft.origin == "observed" and draft.dataset == observed
    assert [(c["name"], c["dtype"], c["nullable"]) for c in draft.document["columns"]] == [
        ("order_id", "int64", True), ("amount", "float64", True), ("placed_at", "datetime64[ns]", True),
        ("tags", "List[str]", True), ("note", "str", True)]
    assert draft.document["datasets"] == [{"namespace": NAMESPACE, "name": "retail.public.orders"}]
    assert AuditEvent.objects.filter(action=DraftAction.CREATED, object_id=str(draft.pk)).exists()


def test_draft_contracts_names_an_unmappable_type_and_guesses_nothing(dataset):
    observe("retail.public.orders", ("order_id", "bigint"), ("payload", "jsonb"), ("shape", "geometry"))
    err = StringIO()
    with pytest.raises(CommandError, match="1 of 1 dataset"):
        call_command("draft_contracts", stdout=StringIO(), stderr=err)
    assert ("column 'payload' of postgres://retail-db:5432/retail.public.orders: postgres type 'jsonb' has no "
            "canonical dtype (a JSON document has no column dtype)") in err.getvalue()
    assert "column 'shape'" in err.getvalue() and "no spatial dtype" in err.getvalue()
    assert not Draft.objects.exists()


def test_draft_contracts_dry_run_stores_nothing_and_a_rerun_is_unchanged(observed):
    out = StringIO()
    call_command("draft_contracts", "--dry-run", stdout=out, stderr=StringIO())
    assert "would: created   draft retail.public.orders 1.0" in out.getvalue()
    assert not Draft.objects.exists()
    call_command("draft_contracts", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("draft_contracts", stdout=out, stderr=StringIO())
    assert "unchanged draft retail.public.orders 1.0" in out.getvalue()
    assert Draft.objects.count() == 1


def test_a_namespace_that_names_no_warehouse_needs_a_dialect(owner_team, owner):
    Dataset.objects.create(namespace="kafka://broker:9092", name="orders", owner_team=owner_team, owner=owner)
    observe("orders", ("order_id", "bigint"), namespace="kafka://broker:9092")
    with pytest.raises(CommandError):
        call_command("draft_contracts", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("draft_contracts", "--dialect", "trino", stdout=out, stderr=StringIO())
    assert "created   draft checkout.orders 1.0" in out.getvalue()  # a one-part name goes under its team


def test_the_dataset_page_offers_draft_a_contract_to_the_owner_team_only(client, observed, owner, outsider):
    client.force_login(outsider)
    assert "dataset-draft-form" not in client.get(observed.get_absolute_url()).content.decode()
    assert client.post(reverse("contract-dataset-draft", args=[observed.pk])).status_code == 403
    client.force_login(owner)
    assert "Draft a contract" in client.get(observed.get_absolute_url()).content.decode()
    response = client.post(reverse("contract-dataset-draft", args=[observed.pk]))
    draft = Draft.objects.get()
    assert response.url == draft.get_absolute_url()
    page = client.get(observed.get_absolute_url()).content.decode()
    assert "dataset-pending-draft" in page and "dataset-draft-form" not in page


def test_the_api_drafts_a_contract_and_says_what_cannot_be_drafted(client, observed, owner, owner_token, outsider,
                                                                  unowned_dataset):
    _, secret = owner_token
    url = reverse("api-dataset-draft", args=[observed.pk])
    response = client.post(url, {}, content_type="application/json", **bearer(secret))
    assert response.status_code == 201, response.content
    assert response.json()["action"] == "created" and response.json()["contract"] == "retail.public.orders"
    again = client.post(url, {}, content_type="application/json", **bearer(secret))
    assert again.status_code == 200 and again.json()["action"] == "unchanged"
    client.force_login(outsider)
    assert client.post(url, {}, content_type="application/json").status_code == 403


def test_the_api_answers_409_naming_a_missing_schema(client, dataset, owner_token):
    _, secret = owner_token
    response = client.post(reverse("api-dataset-draft", args=[dataset.pk]), {}, content_type="application/json",
                           **bearer(secret))
    assert response.status_code == 409
    assert response.json() == {"detail": "postgres://retail-db:5432/retail.public.orders has no observed schema: no "
                                         "lineage event or dataset event has carried a schema facet for it yet.",
                               "code": "cannot_draft"}


def test_a_partial_schema_without_types_is_named_not_guessed(dataset):
    observe("retail.public.orders", ("order_id", "bigint"), ("status", ""))
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("draft_contracts", stdout=StringIO(), stderr=err)
    assert "its observed schema lists 'status' without a type" in err.getvalue()
