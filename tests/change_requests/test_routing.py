"""Acknowledgements routed by column: a breaking change waits for the consumer teams
whose jobs read what it touches (or whose usage is unknown), tells the others they
are not affected, lists unregistered readers, and adds teams new evidence shows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from change_requests.impact import column_of, touched_columns
from change_requests.models import ChangeRequestAction, Notification, TeamAssessment
from change_requests.workflows import open_change_request, run_clock
from registry.models import AuditEvent, Consumer, Dataset
from registry.usage import ColumnRead, NamespaceTeam, UsageKind, UsageSource

from .conftest import proposed_document, report_for

pytestmark = pytest.mark.django_db

# The proposed 2.0 makes `customer_id` required: it touches customer_id and nothing else.


def reads(dataset, team, job: str, *columns: str, days_ago: int = 0, kind: str = UsageKind.DIRECT,
          namespace: str = "airflow") -> None:
    """Lineage saw `job` (posted with `team`'s token) read `columns` of `dataset`; none: all/unknown."""
    seen = timezone.now() - timedelta(days=days_ago)
    for column in columns or ("",):
        ColumnRead.objects.create(dataset=dataset, job_namespace=namespace, job_name=job, column=column, kind=kind,
                                  source=UsageSource.SQL, token_team=team, first_seen_at=seen, last_seen_at=seen,
                                  event_time=seen)


def open_request(contract, owner):
    doc = proposed_document()
    return open_change_request(contract, doc, by=owner, report=report_for(doc))


def required(request) -> list[str]:
    return [r.team.slug for r in request.reviews.select_related("team")]


def test_the_change_touches_only_the_column_it_makes_required():
    assert touched_columns(report_for(proposed_document()), "event") == ["customer_id"]


def test_changes_map_to_their_column_or_to_every_column():
    assert column_of("/properties/item~1count/type", "type_changed", "", "dataframe") == "item/count"
    assert column_of("/properties/request/properties/amount/minimum", "minimum_raised", "", "api") == "amount"
    assert column_of("/additionalProperties", "additional_properties_closed", "", "dataframe") is None
    assert column_of("/required", "required_removed", "'total' is no longer required; …", "dataframe") == "total"
    assert touched_columns({"changes": [{"breaking": True, "path": "/type", "kind": "type_changed"}]}, "event") is None


def test_a_team_whose_job_reads_a_touched_column_must_acknowledge(contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "customer_id")
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    assessment = TeamAssessment.objects.get(change_request=request, team=consumer_team)
    assert assessment.affected and "customer_id" in assessment.why
    [job] = assessment.jobs
    assert job["job"] == "airflow/orders_by_customer" and job["touched"] == ["customer_id"]
    assert job["evidence"][0]["source"] == "sql"


def test_a_team_whose_jobs_read_other_columns_is_told_it_is_not_affected(contract, dataset, consumer_team, consumer,
                                                                         owner, django_capture_on_commit_callbacks):
    reads(dataset, consumer_team, "daily_orders", "order_id")
    with django_capture_on_commit_callbacks(execute=True):
        request = open_request(contract, owner)
    assert required(request) == []
    assert request.state == "approved"  # nobody to wait for: the owner may publish at once
    assert "No consumer team reads what the change touches (customer_id)" in request.routing_note
    approved = AuditEvent.objects.get(action=ChangeRequestAction.APPROVED, object_id=str(request.pk))
    assert "customer_id" in approved.after["because"]
    assert not TeamAssessment.objects.get(change_request=request, team=consumer_team).affected
    told = [m for m in mail.outbox if m.to == [consumer.email]]
    assert len(told) == 1 and "does not affect your team" in told[0].subject
    assert Notification.objects.filter(event="not_affected", team=consumer_team).exists()


def test_a_job_reading_every_column_makes_its_team_affected(contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "export_everything")  # SELECT * with no schema: all or unknown
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    assert "usage of" in TeamAssessment.objects.get(change_request=request).why


def test_a_team_with_no_evidence_and_no_declaration_must_acknowledge(contract, dataset, owner):
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    assert "unknown" in TeamAssessment.objects.get(change_request=request).why


def test_declared_columns_route_like_observed_ones(contract, dataset, consumer_team, owner):
    Consumer.objects.filter(team=consumer_team).update(declared_columns=["order_id"])
    assert required(open_request(contract, owner)) == []


def test_a_declared_touched_column_counts_even_when_no_job_was_seen_reading_it(contract, dataset, consumer_team, owner):
    Consumer.objects.filter(team=consumer_team).update(declared_columns=["customer_id"])
    reads(dataset, consumer_team, "daily_orders", "order_id")
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    assert "declared customer_id" in TeamAssessment.objects.get(change_request=request).why


def test_an_indirect_read_of_a_touched_column_counts(contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "orders_per_region", "order_id")
    reads(dataset, consumer_team, "orders_per_region", "customer_id", kind=UsageKind.INDIRECT)  # a join key
    assert required(open_request(contract, owner)) == ["analytics"]


def test_a_column_a_job_stopped_reading_stops_counting(contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "orders_by_customer", "customer_id", days_ago=45)
    reads(dataset, consumer_team, "orders_by_customer", "order_id")
    assert required(open_request(contract, owner)) == []


def test_two_consumer_teams_one_affected_one_told(contract, dataset, consumer_team, other_team, outsider, owner):
    Consumer.objects.create(dataset=dataset, team=other_team)
    reads(dataset, consumer_team, "orders_by_customer", "customer_id")
    reads(dataset, other_team, "warehouse_load", "order_id")
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    assert {(a.team.slug, a.affected) for a in request.assessments.select_related("team")} == {
        ("analytics", True), ("warehouse", False)}
    assert "Told, not asked: warehouse" in request.routing_note


def test_a_namespace_mapping_attributes_jobs_posted_without_a_team_token(contract, dataset, consumer_team, owner):
    NamespaceTeam.objects.create(namespace="analytics-airflow", team=consumer_team)
    reads(dataset, None, "daily_orders", "order_id", namespace="analytics-airflow")
    assert required(open_request(contract, owner)) == []


def test_unregistered_readers_are_listed_and_the_owner_is_told(contract, dataset, other_team, owner, teammate,
                                                              django_capture_on_commit_callbacks):
    reads(dataset, other_team, "warehouse_load", "customer_id")
    with django_capture_on_commit_callbacks(execute=True):
        request = open_request(contract, owner)
    [reader] = request.unregistered_readers
    assert (reader["job"], reader["team"], reader["touched"]) == ("airflow/warehouse_load", "warehouse", ["customer_id"])
    to_owner_team = [m for m in mail.outbox if "without registering" in m.subject]
    assert sorted(m.to[0] for m in to_owner_team) == sorted([owner.email, teammate.email])
    assert "airflow/warehouse_load (warehouse) reads customer_id" in to_owner_team[0].body


def test_a_team_new_evidence_shows_affected_is_added_and_never_removed(contract, dataset, consumer_team, other_team,
                                                                       outsider, owner, django_capture_on_commit_callbacks):
    reads(dataset, consumer_team, "orders_by_customer", "customer_id")
    request = open_request(contract, owner)
    assert required(request) == ["analytics"]
    Consumer.objects.create(dataset=dataset, team=other_team)
    reads(dataset, other_team, "warehouse_load", "customer_id")
    ColumnRead.objects.filter(job_name="orders_by_customer").update(column="order_id")  # analytics now reads less
    with django_capture_on_commit_callbacks(execute=True):
        result = run_clock()
    assert result.added == {request.pk: ["warehouse"]}
    assert required(request) == ["analytics", "warehouse"]  # analytics stays: nobody is removed
    assert TeamAssessment.objects.get(change_request=request, team=other_team).added_after_opening
    assert AuditEvent.objects.filter(action=ChangeRequestAction.TEAM_ADDED, after__team="warehouse").count() == 1
    assert any(m.to == [outsider.email] and "acknowledgement is needed" in m.subject for m in mail.outbox)
    assert run_clock().added == {}  # a second pass adds nothing


def test_the_api_shows_each_teams_assessment_and_the_routing(client, contract, dataset, consumer_team, owner):
    reads(dataset, consumer_team, "orders_by_customer", "customer_id")
    request = open_request(contract, owner)
    client.force_login(owner)
    body = client.get(f"/api/change-requests/{request.pk}/").json()
    assert body["touched_columns"] == ["customer_id"] and "Waits for analytics" in body["routing_note"]
    [assessment] = body["assessments"]
    assert (assessment["team"], assessment["affected"]) == ("analytics", True)
    assert assessment["jobs"][0]["touched"] == ["customer_id"]


def test_the_review_page_shows_who_it_breaks_and_why(client, contract, dataset, consumer_team, other_team, owner):
    Consumer.objects.create(dataset=dataset, team=other_team)
    reads(dataset, consumer_team, "orders_by_customer", "order_id", "customer_id")
    reads(dataset, other_team, "warehouse_load", "order_id")
    request = open_request(contract, owner)
    client.force_login(owner)
    page = client.get(request.get_absolute_url()).content.decode()
    assert "must acknowledge" in page and "not affected: told" in page
    assert "<strong>customer_id</strong>" in page and "airflow/warehouse_load" in page
    assert "opened" in page  # the history lists the opening


def test_a_team_reading_what_the_touched_column_feeds_downstream_must_acknowledge(contract, dataset, consumer_team,
                                                                                 other_team, owner):
    """customer_id flows unchanged (SELECT *) into another job's output, which Warehouse reads."""
    from lineage.models import FieldEdge, Job
    from registry.models import Dataset

    public = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders_public")
    job = Job.objects.create(namespace="airflow", name="orders_public")
    FieldEdge.objects.create(job=job, dataset=public, field="customer_id", input_dataset=dataset,
                             input_field="customer_id", kind=UsageKind.DIRECT, source=UsageSource.SQL)
    FieldEdge.objects.create(job=job, dataset=public, field="order_id", input_dataset=dataset,
                             input_field="order_id", kind=UsageKind.DIRECT, source=UsageSource.SQL)
    reads(dataset, consumer_team, "orders_public", "order_id", "customer_id")
    Consumer.objects.create(dataset=public, team=other_team)
    reads(public, other_team, "customer_report", "customer_id")
    Consumer.objects.filter(dataset=dataset, team=consumer_team).delete()  # only the downstream reader is left
    request = open_request(contract, owner)
    assert required(request) == ["warehouse"]
    assert "fed by the changed columns" in TeamAssessment.objects.get(change_request=request, team=other_team).why


def test_downstream_columns_the_change_does_not_feed_do_not_count(contract, dataset, other_team, consumer_team, owner):
    from lineage.models import FieldEdge, Job
    from registry.models import Dataset

    public = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders_public")
    job = Job.objects.create(namespace="airflow", name="orders_public")
    FieldEdge.objects.create(job=job, dataset=public, field="order_id", input_dataset=dataset,
                             input_field="order_id", kind=UsageKind.DIRECT, source=UsageSource.SQL)
    Consumer.objects.filter(dataset=dataset, team=consumer_team).delete()
    Consumer.objects.create(dataset=public, team=other_team)
    assert required(open_request(contract, owner)) == []


# --- how far a change travels downstream: a removal stops at the jobs naming the column ---

def feeds(dataset, into: str, column: str, *, through_star: bool | None, subtype: str = "IDENTITY"):
    """A job writes `into`.`column` from `dataset`.`column` (by SELECT *, or naming it)."""
    from lineage.models import FieldEdge, Job
    from registry.models import Dataset

    target = Dataset.objects.create(namespace="postgres://retail-db:5432", name=into)
    job = Job.objects.create(namespace="airflow", name=into.rsplit(".", 1)[-1])
    FieldEdge.objects.create(job=job, dataset=target, field=column, input_dataset=dataset, input_field=column,
                             kind=UsageKind.DIRECT, subtype=subtype, through_star=through_star, source=UsageSource.SQL)
    return target


def removing_customer_id(contract, owner):
    """Propose 2.0 without customer_id (breaking FULL: writers on 1.0 still send it, typed)."""
    from registry_client.compat import check_compatibility

    from .conftest import BASE_DOCUMENT

    doc = proposed_document()
    del doc["payload"]["properties"]["customer_id"]
    report = check_compatibility([BASE_DOCUMENT], doc, "FULL").to_dict()
    return open_change_request(contract, doc, by=owner, report=report)


def test_a_removed_column_and_whatever_else_the_report_says_of_it_is_a_removal():
    from change_requests.impact import column_effects

    report = {"changes": [
        {"breaking": True, "path": "/properties/total", "kind": "property_removed", "reason": ""},
        {"breaking": True, "path": "/required", "kind": "required_removed", "reason": "'total' is no longer required"},
        {"breaking": True, "path": "/properties/status/enum", "kind": "enum_value_added", "reason": ""},
        {"breaking": True, "path": "/properties/address/properties/zip", "kind": "property_removed", "reason": ""},
    ]}
    # An enum changed is a change of values; a property removed inside a column, one the report does not name.
    assert column_effects(report, "dataframe") == {"total": {"removed"}, "status": {"values"},
                                                   "address": {"changed"}}


def test_a_removed_column_reaches_the_readers_of_a_select_star_that_passes_it_on(contract, dataset, consumer_team,
                                                                                other_team, owner):
    public = feeds(dataset, "retail.public.orders_public", "customer_id", through_star=True)
    Consumer.objects.filter(dataset=dataset, team=consumer_team).delete()
    Consumer.objects.create(dataset=public, team=other_team)
    reads(public, other_team, "customer_report", "customer_id")
    request = removing_customer_id(contract, owner)
    assert required(request) == ["warehouse"]


def test_a_removed_column_stops_at_a_job_that_names_it(contract, dataset, consumer_team, other_team, owner):
    """The job naming customer_id fails, and its team is asked; what it wrote stays as it was."""
    by_name = feeds(dataset, "retail.marts.customer_orders", "customer_id", through_star=False)
    reads(dataset, consumer_team, "customer_orders", "customer_id")
    Consumer.objects.create(dataset=by_name, team=other_team)
    reads(by_name, other_team, "customer_report", "customer_id")
    request = removing_customer_id(contract, owner)
    assert required(request) == ["analytics"]
    assert not TeamAssessment.objects.filter(change_request=request, team=other_team, affected=True).exists()


def test_a_changed_column_travels_through_a_job_that_names_it(contract, dataset, consumer_team, other_team, owner):
    """customer_id now required: its values change, and flow on wherever they are passed."""
    by_name = feeds(dataset, "retail.marts.customer_orders", "customer_id", through_star=False,
                    subtype="TRANSFORMATION")
    Consumer.objects.filter(dataset=dataset, team=consumer_team).delete()
    Consumer.objects.create(dataset=by_name, team=other_team)
    reads(by_name, other_team, "customer_report", "customer_id")
    assert required(open_request(contract, owner)) == ["warehouse"]


def test_a_producer_facet_that_does_not_say_how_passes_a_removal_on_when_it_is_an_identity(dataset, consumer_team,
                                                                                           other_team):
    from change_requests.impact import preview_change

    public = feeds(dataset, "retail.public.orders_public", "customer_id", through_star=None)
    aggregated = feeds(dataset, "retail.marts.customers_by_day", "customer_id", through_star=None,
                       subtype="AGGREGATION")
    Consumer.objects.filter(dataset=dataset, team=consumer_team).delete()
    Consumer.objects.create(dataset=public, team=other_team)
    Consumer.objects.create(dataset=aggregated, team=consumer_team)
    reads(public, other_team, "customer_report", "customer_id")
    reads(aggregated, consumer_team, "daily", "customer_id")
    answer = preview_change(dataset, ["customer_id"], effect="removed")
    assert [t["team"] for t in answer["affected"]] == ["warehouse"]  # not analytics, past the aggregate


def test_the_clock_looks_again_at_the_open_requests_it_looked_at_longest_ago(contract, dataset, consumer_team, owner,
                                                                              monkeypatch):
    """However many requests are open, each pass assesses a few, and every one comes round in turn."""
    from change_requests import workflows
    from contracts_app.publishing import record_version

    from .conftest import BASE_DOCUMENT

    first = open_request(contract, owner)
    other_base = {**BASE_DOCUMENT, "schema": {**BASE_DOCUMENT["schema"], "name": "retail.checkout.order_paid",
                                               "entity": "order_paid"}}
    other = record_version(other_base, by=owner).contract
    payments = Dataset.objects.create(namespace=dataset.namespace, name="checkout.order_paid", owner_team=dataset.owner_team)
    other.bind(payments, by=owner)
    Consumer.objects.create(dataset=payments, team=consumer_team)
    other_doc = {**proposed_document(), "schema": {**other_base["schema"], "version": "2.0"}}
    second = open_change_request(other, other_doc, by=owner, report=report_for(other_doc))
    assert (first.state, second.state) == ("open", "open")
    monkeypatch.setattr(workflows, "REASSESS_BATCH", 1)
    looked_at = []
    for _ in range(3):
        run_clock()
        first.refresh_from_db()
        second.refresh_from_db()
        looked_at.append(first.pk if first.reassessed_at and (not second.reassessed_at
                                                              or first.reassessed_at > second.reassessed_at)
                         else second.pk)
    assert looked_at == [first.pk, second.pk, first.pk]
