"""A quality result waits to be judged in the row the ingest writes anyway
(lineage's QualityCheck, `judged` false): the ingest pays no statement for the
evaluator, a result replaced while it is judged is judged again as it now reads,
and one whose judgement keeps failing is given up after a few attempts."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents import evaluation, pending, receivers
from lineage.ingest import store_event
from lineage.models import QualityCheck
from lineage.signals import quality_reported

from .conftest import ALL_PASS, MINUTE, T0, failed, status_of
from .conftest import test_event as dbt_test_event

pytestmark = pytest.mark.django_db


def test_a_stored_result_waits_in_its_quality_check_row_until_it_is_judged(dataset, contract):
    store_event(dbt_test_event(dataset, ALL_PASS))  # no commit in a test: nobody was woken
    check = QualityCheck.objects.get(dataset=dataset)
    assert not check.judged
    assert pending.evaluate_pending([dataset.pk]) == 1
    check.refresh_from_db()
    assert check.judged
    assert status_of(dataset).status == "passing"
    assert pending.evaluate_pending([dataset.pk]) == 0


def test_the_ingest_writes_the_same_statements_with_the_evaluator_listening_or_not(dataset, contract):
    def statements(run_id: str) -> tuple[int, list[str]]:
        """How many statements storing a test event costs, and the tables it writes."""
        with CaptureQueriesContext(connection) as queries:
            store_event(dbt_test_event(dataset, ALL_PASS, run_id=run_id))
        writes = [m.group(1) for q in queries.captured_queries
                  if (m := re.match(r'(?:INSERT INTO|UPDATE|DELETE FROM) "?(\w+)', q["sql"] or ""))]
        return len(queries.captured_queries), writes

    store_event(dbt_test_event(dataset, ALL_PASS))  # the job's first event creates its rows
    listening = statements("0193a1b2-0000-7000-8000-000000000001")
    quality_reported.disconnect(dispatch_uid="incidents.on_quality_reported")
    try:
        alone = statements("0193a1b2-0000-7000-8000-000000000002")
    finally:
        quality_reported.connect(receivers.on_quality_reported, dispatch_uid="incidents.on_quality_reported")
    assert listening == alone
    assert "lineage_qualitycheck" in listening[1]


def test_a_result_replaced_while_it_is_judged_is_judged_again_as_it_now_reads(dataset, contract, monkeypatch):
    run_id = "0193a1b2-0000-7000-8000-000000000003"
    store_event(dbt_test_event(dataset, ALL_PASS, event_type="START", run_id=run_id, at=T0))
    judge = evaluation.record_quality

    def the_complete_arrives_meanwhile(*args, **kwargs):
        monkeypatch.setattr(pending, "record_quality", judge)
        judge(*args, **kwargs)
        store_event(dbt_test_event(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], run_id=run_id,
                                   at=T0 + MINUTE))

    monkeypatch.setattr(pending, "record_quality", the_complete_arrives_meanwhile)
    assert pending.evaluate_pending([dataset.pk]) == 1
    assert not QualityCheck.objects.get(dataset=dataset).judged  # the COMPLETE, not the START it replaced
    assert pending.evaluate_pending([dataset.pk]) == 1
    assert QualityCheck.objects.get(dataset=dataset).judged
    assert status_of(dataset).status == "failing"


def test_a_result_whose_judgement_keeps_failing_is_given_up_and_a_later_event_tries_again(dataset, contract,
                                                                                         monkeypatch):
    run_id = "0193a1b2-0000-7000-8000-000000000004"
    store_event(dbt_test_event(dataset, ALL_PASS, event_type="START", run_id=run_id, at=T0))

    def broken(*args, **kwargs):
        raise RuntimeError("the evaluator is broken")

    monkeypatch.setattr(pending, "record_quality", broken)
    for _ in range(pending.MAX_ATTEMPTS + 2):
        assert pending.evaluate_pending([dataset.pk]) == 0
    check = QualityCheck.objects.get(dataset=dataset)
    assert (check.judged, check.judge_attempts) == (False, pending.MAX_ATTEMPTS)
    assert not pending.waiting().exists()

    monkeypatch.undo()
    store_event(dbt_test_event(dataset, ALL_PASS, run_id=run_id, at=T0 + MINUTE))
    assert pending.evaluate_pending([dataset.pk]) == 1
    assert status_of(dataset).status == "passing"
