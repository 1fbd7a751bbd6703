"""The contract status of a binding, rule by rule: never run, errored, running,
a stale latest result, an undeclared assertion; and where the status is shown."""

from __future__ import annotations

import uuid

import pytest

from incidents.models import ContractState, Incident

from .conftest import ALL_PASS, MINUTE, T0, errored, failed, passed, report, status_of

pytestmark = pytest.mark.django_db


def test_a_contract_whose_checks_never_reported_is_not_passing(dataset, contract):
    status = status_of(dataset)
    assert status.status == ContractState.UNVERIFIED
    assert "not_null on order_id has never reported a final result" in status.reasons
    assert len(status.reasons) == 3


def test_every_declared_check_passing_in_a_final_run_is_passing(dataset, contract):
    report(dataset, ALL_PASS)
    status = status_of(dataset)
    assert status.status == ContractState.PASSING and not status.running
    assert status.reasons == ["all 3 declared check(s) passed in their latest final run"]


def test_one_check_passing_does_not_let_through_another_that_never_ran(dataset, contract):
    report(dataset, ALL_PASS[:2])
    status = status_of(dataset)
    assert status.status == ContractState.UNVERIFIED
    assert status.reasons == ["range on amount has never reported a final result"]


def test_an_errored_check_is_not_passing_even_beside_passing_ones(dataset, contract):
    report(dataset, [*ALL_PASS[:2], errored("dbt_utils.accepted_range", "amount")])
    status = status_of(dataset)
    assert status.status == ContractState.UNVERIFIED
    assert status.reasons[0].startswith("range on amount errored (no verdict)")
    assert not Incident.objects.exists()  # an error is no evidence of bad data: no incident, and not safe


def test_an_aborted_run_errors_every_check_it_reported(dataset, contract):
    report(dataset, ALL_PASS, event_type="ABORT")
    assert status_of(dataset).status == ContractState.UNVERIFIED


def test_a_failed_declared_check_is_failing(dataset, contract):
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")])
    status = status_of(dataset)
    assert status.status == ContractState.FAILING
    assert status.reasons[0].startswith("not_null on order_id failed in run")


def test_a_partial_run_keeps_the_previous_final_status_marked_running(dataset, contract):
    report(dataset, ALL_PASS, at=T0)
    run = str(uuid.uuid4())
    # dbt-ol sends the results with START already: not final until COMPLETE or FAIL.
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], event_type="START", run_id=run, at=T0 + MINUTE)
    status = status_of(dataset)
    assert status.status == ContractState.PASSING and status.running
    assert not Incident.objects.exists()

    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], event_type="FAIL", run_id=run,
           at=T0 + 2 * MINUTE)
    status = status_of(dataset)
    assert status.status == ContractState.FAILING and not status.running


def test_a_partial_run_of_a_check_never_finished_before_is_still_not_passing(dataset, contract):
    report(dataset, ALL_PASS, event_type="RUNNING")
    status = status_of(dataset)
    assert status.status == ContractState.UNVERIFIED and status.running
    assert "not_null on order_id has never reported a final result (a run is reporting now)" in status.reasons


def test_the_latest_final_result_wins_and_a_late_older_one_changes_nothing(dataset, contract):
    report(dataset, ALL_PASS, at=T0 + 10 * MINUTE)
    # An older run's failure arrives late (a retried delivery): it is not the latest evidence.
    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], at=T0)
    assert status_of(dataset).status == ContractState.PASSING
    assert not Incident.objects.exists()


def test_an_assertion_the_contract_does_not_declare_is_shown_but_does_not_decide(dataset, contract):
    report(dataset, [*ALL_PASS, failed("accepted_values", "region")])
    status = status_of(dataset)
    assert status.status == ContractState.PASSING
    undeclared = [c for c in status.checks if not c["declared"]]
    assert [(c["column"], c["kind"], c["verdict"]) for c in undeclared] == [("region", "accepted_values", "failed")]
    assert not Incident.objects.exists()


def test_great_expectations_names_match_the_same_declared_checks(dataset, contract):
    report(dataset, [passed("expect_column_values_to_not_be_null", "order_id"),
                     passed("expect_column_values_to_be_unique", "order_id"),
                     passed("expect_column_values_to_be_between", "amount")])
    assert status_of(dataset).status == ContractState.PASSING


def test_a_new_version_declaring_another_check_makes_the_status_unverified_again(dataset, contract):
    from contracts_app.models import ContractVersion

    from .conftest import orders_document

    report(dataset, ALL_PASS)
    document = orders_document("1.1")
    document["columns"][2]["checks"] = [{"isin": ["eu", "us"]}]
    ContractVersion.objects.create(contract=contract, version="1.1", document=document, checksum="b")
    status = status_of(dataset)
    assert status.version == "1.1" and status.status == ContractState.UNVERIFIED
    assert status.reasons == ["accepted_values on region has never reported a final result"]


def test_unbinding_removes_the_status(dataset, contract, owner):
    report(dataset, ALL_PASS)
    contract.unbind(dataset, by=owner)
    from incidents.models import ContractStatus

    assert not ContractStatus.objects.filter(dataset=dataset).exists()
