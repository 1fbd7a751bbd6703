"""At most one unfinished request per contract: a partial unique index, not only Python."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connections

from change_requests.models import ChangeRequest, UnfinishedRequestExists
from change_requests.workflows import open_change_request
from tests.celery_broker import database_url

from .conftest import proposed_document, report_for


@pytest.mark.django_db
def test_a_second_proposal_names_the_open_request(change_request, contract, owner):
    doc = proposed_document("3.0")
    with pytest.raises(UnfinishedRequestExists, match=rf"unfinished change request #{change_request.pk} \(open, proposing version 2.0\)"):
        open_change_request(contract, doc, by=owner, report=report_for(doc))
    assert ChangeRequest.objects.count() == 1


@pytest.mark.django_db
def test_an_approved_request_also_blocks_a_new_proposal(change_request, contract, owner, consumer_team, consumer):
    change_request.acknowledge(consumer_team, by=consumer)
    doc = proposed_document("3.0")
    with pytest.raises(UnfinishedRequestExists, match="approved"):
        open_change_request(contract, doc, by=owner, report=report_for(doc))


@pytest.mark.django_db
def test_a_new_proposal_is_welcome_once_the_last_one_finished(change_request, contract, owner):
    change_request.withdraw(by=owner)
    doc = proposed_document("3.0")
    assert open_change_request(contract, doc, by=owner, report=report_for(doc)).state == "open"


@pytest.mark.django_db
def test_the_database_itself_refuses_a_second_unfinished_request(change_request):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError, match="change_request_one_unfinished_per_contract"), transaction.atomic():
        ChangeRequest.objects.create(contract=change_request.contract, proposed_version="9.0", proposed_document={},
                                     deadline_at=change_request.deadline_at, remind_at=change_request.remind_at)


def test_two_connections_inserting_at_once_exactly_one_wins(transactional_db, change_request):
    """Raw SQL from two PostgreSQL sessions: the second INSERT waits on the index, then fails."""
    ChangeRequest.objects.filter(pk=change_request.pk).update(state="withdrawn")
    insert = (f"INSERT INTO {ChangeRequest._meta.db_table} (contract_id, state, proposed_version, proposed_document, report,"
              " summary, opened_by_label, opened_at, deadline_at, remind_at, finished_by_label, closing_comment)"
              " VALUES (%s, 'open', %s, '{}', '{}', '', '', now(), now(), now(), '', '')")
    contract_id = change_request.contract_id
    first, second = psycopg.connect(database_url()), psycopg.connect(database_url())
    outcome: dict[str, object] = {}
    try:
        first.execute(insert, (contract_id, "3.0"))  # in an open transaction, not committed

        def second_session():
            try:
                second.execute(insert, (contract_id, "4.0"))
                second.commit()
                outcome["second"] = "committed"
            except psycopg.errors.UniqueViolation as exc:
                second.rollback()
                outcome["second"] = exc.diag.constraint_name

        waiter = threading.Thread(target=second_session)
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive(), "the second INSERT must wait for the first transaction"
        first.commit()
        waiter.join(timeout=10)
    finally:
        first.close()
        second.close()
    assert outcome["second"] == "change_request_one_unfinished_per_contract"
    assert list(ChangeRequest.objects.unfinished().values_list("proposed_version", flat=True)) == ["3.0"]


def test_two_concurrent_proposals_through_the_service_exactly_one_wins(transactional_db, contract, owner, teammate, monkeypatch):
    """Both threads pass the Python pre-check before either commits; the index decides,
    and the loser is told which request won."""
    barrier = threading.Barrier(2)
    results: dict[str, object] = {}
    original_create = ChangeRequest.objects.create

    def create_after_both_checked(**kwargs):
        barrier.wait(timeout=10)  # both sessions have seen "no unfinished request"
        return original_create(**kwargs)

    def propose(name, person, version):
        try:
            doc = proposed_document(version)
            results[name] = open_change_request(contract, doc, by=person, report=report_for(doc))
        except UnfinishedRequestExists as exc:
            results[name] = exc
        finally:
            connections.close_all()

    monkeypatch.setattr(ChangeRequest.objects, "create", create_after_both_checked)
    threads = [threading.Thread(target=propose, args=("alice", owner, "2.0")),
               threading.Thread(target=propose, args=("bob", teammate, "3.0"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    monkeypatch.undo()
    winners = [r for r in results.values() if isinstance(r, ChangeRequest)]
    losers = [r for r in results.values() if isinstance(r, UnfinishedRequestExists)]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0].existing.pk == winners[0].pk
    assert f"#{winners[0].pk}" in str(losers[0])
    assert ChangeRequest.objects.unfinished().count() == 1
