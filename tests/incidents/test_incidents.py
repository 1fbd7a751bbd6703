"""Incidents: opened by a failed declared check, a stale or drifted dataset; one per
(dataset, cause) while open; evidence and timeline; acknowledged and resolved by the
owner team (audited); resolved by themselves by a later passing final result."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from freshness.evaluation import evaluate, set_slo
from incidents.evaluation import open_incident
from incidents.handling import IncidentClosed, acknowledge, resolve
from incidents.models import Cause, ContractState, Incident, IncidentState, Resolution
from registry.models import AuditEvent

from .conftest import ALL_PASS, MINUTE, T0, failed, report, status_of

pytestmark = pytest.mark.django_db

FAILING = [*ALL_PASS[1:], failed("not_null", "order_id", actual="3")]


def test_a_failed_declared_check_opens_one_incident_with_its_evidence(dataset, contract):
    run = report(dataset, FAILING, job="dbt/orders.test")
    incident = Incident.objects.get()
    assert (incident.cause, incident.key, incident.column, incident.state) == (
        Cause.CHECK_FAILED, "order_id:not_null", "order_id", IncidentState.OPEN)
    assert incident.evidence["run_id"] == run and incident.evidence["assertion"] == "not_null_orders_order_id"
    assert incident.evidence["actual"] == "3" and incident.evidence["job"] == "dbt/orders.test"
    assert [e.kind for e in incident.events.all()] == ["opened", "notified"]
    assert AuditEvent.objects.filter(action="incident.opened", object_id=str(incident.pk)).exists()


def test_the_same_failure_again_joins_the_open_incident_instead_of_opening_another(dataset, contract):
    report(dataset, FAILING, at=T0)
    report(dataset, FAILING, at=T0 + MINUTE)
    incident = Incident.objects.get()
    assert [e.kind for e in incident.events.all()] == ["opened", "notified", "seen_again"]


def test_the_database_refuses_a_second_open_incident_for_the_same_cause(dataset, contract):
    first = open_incident(dataset.pk, Cause.STALE, "", column="", summary="stale", evidence={})
    second = open_incident(dataset.pk, Cause.STALE, "", column="", summary="stale", evidence={})
    assert first is not None and second is None
    assert Incident.objects.count() == 1


def test_a_later_passing_final_result_resolves_it_by_itself(dataset, contract):
    report(dataset, FAILING, at=T0)
    run = report(dataset, ALL_PASS, at=T0 + 5 * MINUTE)
    incident = Incident.objects.get()
    assert incident.state == IncidentState.RESOLVED and incident.resolution == Resolution.AUTOMATIC
    assert incident.resolved_by is None
    assert incident.events.last().text == f"resolved by itself: not_null on order_id passed in run {run}"
    assert status_of(dataset).status == ContractState.PASSING
    # A later failure opens a new incident: the old one keeps its timeline.
    report(dataset, FAILING, at=T0 + 10 * MINUTE)
    assert Incident.objects.unresolved().count() == 1 and Incident.objects.count() == 2


def test_a_passing_start_event_does_not_resolve_it(dataset, contract):
    report(dataset, FAILING, at=T0)
    report(dataset, ALL_PASS, at=T0 + MINUTE, event_type="START")
    assert Incident.objects.get().state == IncidentState.OPEN


def test_the_owner_team_acknowledges_then_resolves_audited(dataset, contract, owner):
    report(dataset, FAILING)
    incident = Incident.objects.get()
    acknowledge(incident, by=owner)
    incident.refresh_from_db()
    assert incident.state == IncidentState.ACKNOWLEDGED and incident.acknowledged_by == owner
    resolve(incident, by=owner, note="bad batch reloaded")
    incident.refresh_from_db()
    assert incident.state == IncidentState.RESOLVED and incident.resolution == Resolution.OWNER
    assert incident.resolved_by == owner
    actions = list(AuditEvent.objects.filter(object_id=str(incident.pk), action__startswith="incident.")
                   .values_list("action", "actor_label").order_by("id"))
    assert actions == [("incident.opened", "incident evaluator"), ("incident.acknowledged", "alice"),
                       ("incident.resolved", "alice")]
    with pytest.raises(IncidentClosed):
        resolve(incident, by=owner)


def test_a_consumer_may_not_acknowledge_the_owners_incident(dataset, contract, consumer):
    from django.core.exceptions import PermissionDenied

    report(dataset, FAILING)
    with pytest.raises(PermissionDenied):
        acknowledge(Incident.objects.get(), by=consumer)


def test_a_bound_dataset_going_stale_opens_an_incident_and_a_write_resolves_it(dataset, contract, owner):
    report(dataset, ALL_PASS)
    set_slo(dataset, max_age=timedelta(hours=1), by=owner)
    from freshness.evaluation import record_write

    written = timezone.now() - timedelta(hours=2)
    record_write(dataset, at=written, row_count=10, now=written)
    evaluate(timezone.now(), dataset_ids=[dataset.pk])
    incident = Incident.objects.get(cause=Cause.STALE)
    assert incident.summary.startswith("stale: ") and incident.column == ""
    assert status_of(dataset).status == ContractState.FAILING
    record_write(dataset, at=timezone.now(), row_count=10)
    incident.refresh_from_db()
    assert incident.state == IncidentState.RESOLVED and incident.resolution == Resolution.AUTOMATIC
    assert status_of(dataset).status == ContractState.PASSING


def test_a_written_schema_drifting_from_the_contract_opens_an_incident(dataset, contract):
    from lineage.ingest import store_event

    from .conftest import test_event

    def write(*fields):
        event = test_event(dataset, [], job="etl.load_orders")
        event["inputs"] = []
        event["outputs"] = [{"namespace": dataset.namespace, "name": dataset.name, "facets": {"schema": {
            "_producer": "https://example.com", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            "fields": [{"name": n, "type": t} for n, t in fields]}}}]
        store_event(event)

    report(dataset, ALL_PASS)
    write(("order_id", "bigint"))  # amount is missing
    incident = Incident.objects.get(cause=Cause.DRIFT)
    assert "drifted from retail.checkout.orders 1.0" in incident.summary
    assert status_of(dataset).status == ContractState.FAILING
    write(("order_id", "bigint"), ("amount", "double precision"))
    incident.refresh_from_db()
    assert incident.state == IncidentState.RESOLVED
    assert status_of(dataset).status == ContractState.PASSING


def test_an_unbound_dataset_opens_no_incident(dataset):
    report(dataset, FAILING)
    assert not Incident.objects.exists()


def test_a_write_after_a_quality_deadline_whose_task_is_late_records_the_breach_first(dataset, contract, owner):
    """The deadline task waits behind a busy worker; the next write arrives first: the
    checks did not pass in time all the same, and the late task then finds nothing."""
    from incidents import quality_slo

    quality_slo.set_quality_slo(dataset, 30 * MINUTE, by=owner)
    quality_slo.record_write(dataset.pk, T0, now=T0)
    quality_slo.record_write(dataset.pk, T0 + 40 * MINUTE, now=T0 + 40 * MINUTE)
    incident = Incident.objects.get(cause=Cause.CHECK_LATE)
    assert incident.evidence["deadline"] == (T0 + 30 * MINUTE).isoformat()
    assert quality_slo.evaluate(T0 + 45 * MINUTE, [dataset.pk]) == 0  # the next deadline is T0 + 70 min
