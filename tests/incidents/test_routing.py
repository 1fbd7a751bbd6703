"""Downstream is told, by column: the teams whose jobs read the failed column (on
the dataset or through the columns it feeds, up to 5 hops) are notified with the
path to their job; teams whose jobs provably read other columns are not paged.
The inbox lists the open incidents upstream of a team's jobs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from change_requests.models import TeamChannel
from incidents.hooks import open_incidents
from incidents.models import Incident, IncidentNotification, IncidentTeam
from lineage.models import FieldEdge, Job
from registry.hooks import inbox_for
from registry.models import Consumer, Dataset
from registry.usage import ColumnRead, UsageKind, UsageSource
from tests.conftest import make_team, make_user

from .conftest import ALL_PASS, failed, report

pytestmark = pytest.mark.django_db

FAILING = [*ALL_PASS[1:], failed("not_null", "order_id")]


def incident_items(user, team_ids) -> list:
    """The inbox's incident items only: other apps add their own kinds to the same inbox."""
    return [item for item in inbox_for(user, team_ids) if item.kind.startswith("incident_")]


def reads(dataset, team, job: str, *columns: str) -> None:
    """Lineage saw `job` (posted with `team`'s token) read `columns` of `dataset`; none: all/unknown."""
    now = timezone.now()
    for column in columns or ("",):
        ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name=job, column=column,
                                  kind=UsageKind.DIRECT, source=UsageSource.SQL, token_team=team,
                                  first_seen_at=now, last_seen_at=now, event_time=now)


def feeds(source, column: str, target, target_column: str, job: str = "build_marts") -> None:
    FieldEdge.objects.create(job=Job.objects.get_or_create(namespace="dbt", name=job)[0], dataset=target,
                             field=target_column, input_dataset=source, input_field=column,
                             kind=UsageKind.DIRECT, subtype="IDENTITY", source=UsageSource.SQL)


@pytest.fixture
def finance(db):
    return make_team("Finance", "finance", make_user("erin"))


def told(incident) -> dict[str, bool]:
    return {t.team.slug: t.owner for t in IncidentTeam.objects.filter(incident=incident).select_related("team")}


def test_the_team_whose_job_reads_the_failed_column_is_told_and_the_other_is_not(
        dataset, contract, consumer_team, other_team, consumer, outsider, django_capture_on_commit_callbacks):
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "amount")
    reads(dataset, other_team, "revenue_by_region", "amount", "region")
    with django_capture_on_commit_callbacks(execute=True):
        report(dataset, FAILING)
    incident = Incident.objects.get()
    assert told(incident) == {"analytics": False, "checkout": True}
    [path] = IncidentTeam.objects.get(incident=incident, team=consumer_team).paths
    assert path == ["postgres://retail-db:5432/retail.public.orders (order_id)",
                    "job airflow/orders_by_customer (reads it)"]
    recipients = {m.to[0] for m in mail.outbox}
    assert consumer.email in recipients and outsider.email not in recipients
    assert "orders_by_customer" in next(m for m in mail.outbox if m.to == [consumer.email]).body
    notified = incident.events.get(kind="notified")
    assert notified.detail["not_affected"][0]["team"] == "warehouse"


def test_a_team_reading_a_column_the_failed_one_feeds_downstream_is_told_with_the_path(
        dataset, contract, other_team, finance, django_capture_on_commit_callbacks):
    mart = Dataset.objects.create(namespace="postgres://retail-db:5432", name="marts.order_facts")
    summary = Dataset.objects.create(namespace="postgres://retail-db:5432", name="marts.daily_summary")
    feeds(dataset, "order_id", mart, "order_key")
    feeds(mart, "order_key", summary, "orders", job="build_summary")
    reads(summary, finance, "finance_report", "orders")
    reads(summary, other_team, "ops_dashboard", "day")  # reads another column of the same dataset
    Consumer.objects.filter(dataset=dataset).update(declared_columns=["amount"])  # Analytics reads amount only
    with django_capture_on_commit_callbacks(execute=True):
        report(dataset, FAILING)
    incident = Incident.objects.get()
    assert told(incident) == {"finance": False, "checkout": True}
    [path] = IncidentTeam.objects.get(incident=incident, team=finance).paths
    assert path == ["postgres://retail-db:5432/retail.public.orders (order_id)",
                    "postgres://retail-db:5432/marts.order_facts (order_key)",
                    "postgres://retail-db:5432/marts.daily_summary (orders)",
                    "job airflow/finance_report (reads it)"]


def test_a_job_whose_columns_are_unknown_cannot_be_proved_safe_and_is_told(dataset, contract, other_team):
    reads(dataset, other_team, "export_everything")
    report(dataset, FAILING)
    assert "warehouse" in told(Incident.objects.get())


def test_a_consumer_team_with_no_job_seen_is_told_unless_its_declared_columns_miss(dataset, contract, finance):
    Consumer.objects.filter(dataset=dataset).update(declared_columns=["amount"])  # Analytics declared amount only
    Consumer.objects.create(dataset=dataset, team=finance)  # Finance declared nothing
    report(dataset, FAILING)
    assert told(Incident.objects.get()) == {"finance": False, "checkout": True}


def test_the_teams_channels_get_a_message_too(dataset, contract, consumer_team, django_capture_on_commit_callbacks):
    TeamChannel.objects.add(consumer_team, "email", address="analytics-oncall@example.com")
    reads(dataset, consumer_team, "orders_by_customer", "order_id")
    with django_capture_on_commit_callbacks(execute=True):
        report(dataset, FAILING)
    row = IncidentNotification.objects.get(recipient="analytics-oncall@example.com")
    assert row.sent_at is not None and row.payload["event"] == "incident.opened"
    assert row.payload["paths"][0][-1] == "job airflow/orders_by_customer (reads it)"


def test_the_inbox_lists_open_incidents_upstream_of_my_teams_jobs_and_on_what_it_owns(
        dataset, contract, consumer_team, owner_team, other_team, consumer, owner, outsider):
    reads(dataset, consumer_team, "orders_by_customer", "order_id")
    report(dataset, FAILING)
    incident = Incident.objects.get()
    [item] = incident_items(consumer, [consumer_team.pk])
    assert item.kind == "incident_upstream" and item.team_id == consumer_team.pk
    assert item.url.endswith(f"#incident-{incident.pk}") and "orders_by_customer" in item.detail
    [mine] = incident_items(owner, [owner_team.pk])
    assert mine.kind == "incident_owned" and "must handle" in mine.title
    assert incident_items(outsider, [other_team.pk]) == []
    report(dataset, ALL_PASS, at=incident.opened_at + timedelta(minutes=1))
    assert incident_items(consumer, [consumer_team.pk]) == []


def test_the_inbox_costs_the_same_queries_whatever_the_incidents(dataset, contract, consumer_team, consumer,
                                                                django_assert_num_queries):
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "amount")
    report(dataset, [failed("not_null", "order_id"), failed("unique", "order_id"),
                     failed("dbt_utils.accepted_range", "amount")])
    # The incidents provider's own cost; the other providers pin theirs.
    with django_assert_num_queries(1):
        items = open_incidents(consumer, [consumer_team.pk])
    assert len(items) == 3
