"""Who may write lineage for which dataset, and the record of who did (issue 15, point 7).

`dataset` (retail / orders) is Checkout's; a Checkout pipeline token writes it,
a Warehouse one does not, nor does the token of a person in no team. A refused
event is a 403 that names the dataset, stores nothing and is counted."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from prometheus_client import REGISTRY

from freshness.constants import FreshnessStatus
from freshness.evaluation import evaluate, record_write, set_slo
from freshness.models import DatasetFreshness, FreshnessTransition
from lineage.models import Job, Run, RunEvent, StaticEvent
from registry.models import ApiToken, AuditEvent, Dataset
from tests.conftest import make_user
from tests.lineage.conftest import dataset as ol_dataset
from tests.lineage.conftest import post, run_event

ORDERS = ol_dataset("retail.public.orders", namespace="postgres://retail-db:5432")
HOUR = timedelta(hours=1)


def refusals(reason: str) -> float:
    return REGISTRY.get_sample_value("lineage_writes_refused_total", {"reason": reason}) or 0


def complete(*outputs, at=None, run_id: str | None = None) -> dict:
    at = at or timezone.now() - timedelta(minutes=1)
    return run_event("COMPLETE", run_id=run_id, outputs=[dict(o) for o in outputs] or [dict(ORDERS)], row_count=10,
                     event_time=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


@pytest.fixture
def warehouse_secret(other_team) -> str:
    """The Warehouse team's pipeline token: Warehouse owns nothing here."""
    return ApiToken.issue("warehouse airflow", team=other_team)[1]


@pytest.fixture
def checkout_token(owner_team) -> tuple[ApiToken, str]:
    return ApiToken.issue("airflow", team=owner_team)


@pytest.fixture
def stale_dataset(dataset, owner):
    """Checkout's orders, an hour's SLO, last written two hours ago: stale."""
    set_slo(dataset, max_age=HOUR, by=owner)
    record_write(dataset, at=timezone.now() - 2 * HOUR, row_count=10)
    evaluate()
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.STALE
    return dataset


def test_another_teams_token_may_not_write_the_dataset_and_nothing_of_the_event_is_stored(
        client, dataset, warehouse_secret):
    before = refusals("not_owner")
    event = complete(ORDERS, ol_dataset("warehouse.new_table"))

    response = post(client, event, warehouse_secret)

    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "dataset_not_writable"
    assert body["dataset"] == {"namespace": "postgres://retail-db:5432", "name": "retail.public.orders"}
    assert "retail.public.orders" in body["detail"]
    assert (RunEvent.objects.count(), Run.objects.count(), Job.objects.count()) == (0, 0, 0)
    assert not Dataset.objects.filter(name="warehouse.new_table").exists()
    assert refusals("not_owner") == before + 1


def test_a_person_in_no_team_cannot_reset_another_teams_stale_dataset(client, stale_dataset):
    loner = make_user("erin")
    _, secret = ApiToken.issue("erin's script", user=loner)
    transitions = FreshnessTransition.objects.count()

    response = post(client, complete(ORDERS), secret)

    assert response.status_code == 403
    row = DatasetFreshness.objects.get(dataset=stale_dataset)
    assert row.status == FreshnessStatus.STALE
    assert row.last_write_at < timezone.now() - HOUR
    assert FreshnessTransition.objects.count() == transitions


def test_a_team_token_writes_its_teams_dataset_and_unowned_ones_and_the_event_names_it(
        client, dataset, owner_team, checkout_token):
    token, secret = checkout_token
    run_id = str(uuid.uuid4())

    response = post(client, complete(ORDERS, ol_dataset("checkout.brand_new"), run_id=run_id), secret)

    assert response.status_code == 201, response.json()
    event = RunEvent.objects.get()
    assert (event.token_id, event.token_team_id) == (token.pk, owner_team.pk)
    run = Run.objects.get(run_uuid=run_id)
    assert (run.token_id, run.token_team_id) == (token.pk, owner_team.pk)


def test_a_persons_token_writes_the_datasets_of_their_teams_attributed_to_their_only_team(
        client, dataset, owner, owner_team):
    token, secret = ApiToken.issue("alice's laptop", user=owner)

    assert post(client, complete(ORDERS), secret).status_code == 201

    assert RunEvent.objects.values_list("token_id", "token_team_id").get() == (token.pk, owner_team.pk)


def test_a_persons_token_may_not_write_a_dataset_of_a_team_they_are_not_in(client, dataset, outsider):
    _, secret = ApiToken.issue("dave's laptop", user=outsider)

    assert post(client, complete(ORDERS), secret).status_code == 403
    assert not RunEvent.objects.exists()


def test_a_platform_wide_ingest_token_writes_any_dataset(client, dataset, other_team, admin):
    _, secret = ApiToken.issue("platform ingest", team=other_team, by=admin, scopes=["lineage:write:any"])

    assert post(client, complete(ORDERS), secret).status_code == 201
    assert post(client, [complete(ORDERS)], secret, path="/api/v1/lineage/batch").status_code == 201


def test_only_a_governance_admin_creates_a_platform_wide_ingest_token(owner, owner_team):
    with pytest.raises(PermissionDenied, match="governance admin"):
        ApiToken.issue("mine", team=owner_team, by=owner, scopes=["lineage:write:any"])


def test_a_token_without_a_lineage_scope_is_refused_and_counted(client, dataset, read_only_secret):
    before = refusals("token_scope")

    response = post(client, complete(ORDERS), read_only_secret)

    assert response.status_code == 403
    assert response.json()["code"] == "token_cannot_write_lineage"
    assert refusals("token_scope") == before + 1


def test_a_batch_with_one_foreign_output_stores_none_of_its_events(client, dataset, warehouse_secret):
    before = refusals("not_owner")
    batch = [complete(ol_dataset("warehouse.mine")), complete(ORDERS)]

    response = post(client, batch, warehouse_secret, path="/api/v1/lineage/batch")

    assert response.status_code == 403
    assert response.json()["dataset"]["name"] == "retail.public.orders"
    assert not RunEvent.objects.exists()
    assert not Dataset.objects.filter(name="warehouse.mine").exists()
    assert refusals("not_owner") == before + 1


def test_a_batch_records_its_token_on_every_event(client, dataset, owner_team, checkout_token):
    token, secret = checkout_token

    assert post(client, [complete(ORDERS), complete(ORDERS)], secret, path="/api/v1/lineage/batch").status_code == 201

    assert set(RunEvent.objects.values_list("token_id", "token_team_id")) == {(token.pk, owner_team.pk)}


def test_a_dataset_event_for_another_teams_dataset_is_refused(client, dataset, warehouse_secret):
    event = {"eventTime": "2026-11-30T01:00:00.000Z", "producer": "https://example.com/p",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
             "dataset": dict(ORDERS)}

    response = post(client, event, warehouse_secret)

    assert response.status_code == 403
    assert not StaticEvent.objects.exists()


def test_a_write_that_refreshes_a_stale_dataset_is_audited_as_the_token_that_sent_it(
        client, stale_dataset, checkout_token):
    token, secret = checkout_token

    assert post(client, complete(ORDERS), secret).status_code == 201

    assert DatasetFreshness.objects.get(dataset=stale_dataset).status == FreshnessStatus.FRESH
    audit = AuditEvent.objects.filter(action="freshness.transition", object_id=str(stale_dataset.pk)).latest("id")
    assert audit.actor_label == "token:airflow@checkout"
    assert audit.after["token"] == f"airflow ({token.key_prefix}…)"
    assert audit.after["token_team"] == "checkout"
    assert f"with token airflow ({token.key_prefix}…)" in audit.after["reason"]


def test_the_run_lineage_and_the_job_page_name_the_token_that_sent_the_run(client, dataset, owner, checkout_token):
    token, secret = checkout_token
    run_id = str(uuid.uuid4())
    assert post(client, complete(ORDERS, run_id=run_id), secret).status_code == 201

    graph = client.get(f"/api/v1/lineage?runId={run_id}", HTTP_AUTHORIZATION=f"Bearer {secret}").json()
    job_node = next(n for n in graph["graph"] if n["type"] == "JOB")
    assert job_node["data"]["run"]["sentBy"] == {"tokenId": token.pk, "token": "airflow",
                                                  "tokenPrefix": token.key_prefix, "team": "checkout"}

    client.force_login(owner)
    page = client.get(Job.objects.get().get_absolute_url()).content.decode()
    assert f"<code>airflow</code> ({token.key_prefix}…) of Checkout" in page
