"""Declared and observed usage: a team declares the columns it reads when it registers
(page and API); the dataset page and API show declared and observed side by side, flag a
job reading what its team did not declare, and list unregistered readers with a one-click
registration for their team."""

from __future__ import annotations

import pytest
from django.utils import timezone

from registry.models import ApiToken, AuditEvent, Consumer, Dataset
from registry.usage import ColumnRead, UsageSource
from tests.conftest import bearer

pytestmark = pytest.mark.django_db


def seen_reading(dataset, team, job: str, *columns: str) -> None:
    now = timezone.now()
    for column in columns or ("",):
        ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name=job, column=column,
                                  source=UsageSource.COLUMN_LINEAGE, token_team=team, last_seen_at=now)


def test_a_team_declares_the_columns_it_reads_when_it_registers_on_the_page(client, dataset, other_team, outsider):
    client.force_login(outsider)
    response = client.post(f"/datasets/{dataset.pk}/consume/", {"team": other_team.pk, "columns": "order_id, amount"})
    assert response.status_code == 302
    assert Consumer.objects.get(team=other_team).declared_columns == ["amount", "order_id"]
    registered = AuditEvent.objects.get(action="consumer.registered", object_id=str(dataset.pk))
    assert registered.after == {"team": "warehouse", "declared_columns": ["amount", "order_id"]}


def test_declaring_again_updates_the_declaration_and_is_audited(dataset, consumer_team, consumer):
    dataset.register_consumer(consumer_team, by=consumer, columns=["order_id"])
    assert Consumer.objects.get(team=consumer_team).declared_columns == ["order_id"]
    changed = AuditEvent.objects.get(action="consumer.columns_declared")
    assert (changed.before["declared_columns"], changed.after["declared_columns"]) == (None, ["order_id"])


def test_the_api_takes_declared_columns_and_shows_them(client, dataset, other_team, outsider):
    _, secret = ApiToken.issue("ci", team=other_team)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "warehouse", "columns": ["order_id"]},
                           content_type="application/json", **bearer(secret))
    assert response.status_code == 201, response.json()
    assert response.json()["declared_columns"] == ["order_id"]


def test_declared_columns_must_be_a_list_of_names(dataset, consumer_team, consumer):
    with pytest.raises(Exception, match="list of column names"):
        dataset.register_consumer(consumer_team, by=consumer, columns="order_id")


def test_the_dataset_page_shows_declared_and_observed_and_flags_undeclared_reads(client, dataset, consumer_team, consumer):
    Consumer.objects.filter(team=consumer_team).update(declared_columns=["order_id"])
    seen_reading(dataset, consumer_team, "orders_by_customer", "order_id", "customer_id")
    client.force_login(consumer)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert "declared: <code>order_id</code>" in page
    assert "airflow/orders_by_customer" in page and "reads undeclared: customer_id" in page


def test_unregistered_readers_are_listed_and_their_team_registers_in_one_click(client, dataset, other_team, outsider):
    seen_reading(dataset, other_team, "warehouse_load", "order_id")
    client.force_login(outsider)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert "unregistered reader" in page and "Register Warehouse" in page
    client.post(f"/datasets/{dataset.pk}/consume/", {"team": other_team.pk, "columns": ""})
    assert Consumer.objects.filter(dataset=dataset, team=other_team, declared_columns__isnull=True).exists()
    assert "unregistered reader" not in client.get(f"/datasets/{dataset.pk}/").content.decode()


def test_the_dataset_api_lists_readers_with_their_team_and_columns(client, dataset, consumer_team, other_team, consumer):
    seen_reading(dataset, consumer_team, "orders_by_customer", "customer_id")
    seen_reading(dataset, other_team, "warehouse_load")  # all or unknown columns
    client.force_login(consumer)
    readers = {r["job"]: r for r in client.get(f"/api/datasets/{dataset.pk}/").json()["readers"]}
    assert readers["airflow/orders_by_customer"]["registered"] is True
    assert readers["airflow/orders_by_customer"]["columns"] == ["customer_id"]
    assert (readers["airflow/warehouse_load"]["team"], readers["airflow/warehouse_load"]["registered"],
            readers["airflow/warehouse_load"]["columns"]) == ("warehouse", False, None)


def test_a_team_maps_its_job_namespace_and_its_jobs_are_attributed_to_it(client, dataset, other_team, outsider):
    ColumnRead.objects.create(dataset=dataset, job_namespace="warehouse-airflow", job_name="load", column="order_id",
                              source=UsageSource.SQL, last_seen_at=timezone.now())
    client.force_login(outsider)
    response = client.post("/api/teams/warehouse/job-namespaces/", {"namespace": "warehouse-airflow"},
                           content_type="application/json")
    assert response.status_code == 201, response.json()
    assert AuditEvent.objects.filter(action="namespace.mapped", after__namespace="warehouse-airflow").exists()
    [reader] = client.get(f"/api/datasets/{dataset.pk}/").json()["readers"]
    assert (reader["job"], reader["team"]) == ("warehouse-airflow/load", "warehouse")
    assert client.delete("/api/teams/warehouse/job-namespaces/warehouse-airflow/").status_code == 204


def test_only_the_team_holding_a_namespace_or_an_admin_moves_it(client, dataset, other_team, outsider, consumer_team,
                                                                 consumer, admin):
    other_team.map_job_namespace("shared-airflow", by=outsider)
    client.force_login(consumer)
    response = client.post("/api/teams/analytics/job-namespaces/", {"namespace": "shared-airflow"},
                           content_type="application/json")
    assert response.status_code == 403 and "belongs to team warehouse" in response.json()["detail"]
    assert consumer_team.map_job_namespace("shared-airflow", by=admin).team == consumer_team


def test_the_owner_teams_own_job_is_no_unregistered_reader_of_its_dataset(client, dataset, owner_team, other_team,
                                                                          owner):
    seen_reading(dataset, owner_team, "reconcile", "order_id")
    seen_reading(dataset, other_team, "warehouse_load")
    client.force_login(owner)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    readers = page[page.index('id="readers"'):]
    readers = readers[:readers.index("</section>")]
    own = readers[readers.index('data-job="airflow/reconcile"'):]
    own = own[:own.index("</tr>")]
    assert "owner team" in own and "unregistered" not in own
    # As many as the dataset list's badge counts, and change requests would leave unasked.
    assert readers.count("unregistered reader") == Dataset.objects.with_unregistered_readers().get(
        pk=dataset.pk).unregistered_readers == 1
    usage = page[page.index('id="column-usage"'):]
    usage = usage[:usage.index("</section>")]
    assert "Checkout <span" in usage and usage.count(">unregistered<") == 1  # Warehouse's job only

    readers = {r["job"]: r for r in client.get(f"/api/datasets/{dataset.pk}/").json()["readers"]}
    assert (readers["airflow/reconcile"]["registered"], readers["airflow/reconcile"]["owner_team"]) == (False, True)
    assert readers["airflow/warehouse_load"]["owner_team"] is False
