"""The review page's document diff comes in hunks, and only an open request counts down."""

from __future__ import annotations

import copy
import re

import pytest

from change_requests.views import DiffRow, in_hunks, side_by_side
from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version

from .conftest import BASE_DOCUMENT, report_for

pytestmark = pytest.mark.django_db

FIELDS = {f"field_{i:02}": {"type": "string", "description": f"Field number {i}."} for i in range(30)}


def _long(version: str, required: list[str]) -> dict:
    document = copy.deepcopy(BASE_DOCUMENT)
    document["schema"]["version"] = version
    document["payload"]["properties"].update(FIELDS)
    document["payload"]["required"] = required
    return document


@pytest.fixture
def long_request(dataset, owner):
    """A 100-line document whose proposed version changes its version and, a few lines
    below, the required list; thirty unchanged properties follow."""
    contract = record_version(_long("1.0", ["order_id"]), by=owner).contract
    contract.bind(dataset, by=owner)
    proposed = _long("2.0", ["order_id", "customer_id"])
    return open_change_request(contract, proposed, by=owner, report=report_for(proposed))


def _rows(kinds: str) -> list[DiffRow]:
    """'==x==' -> rows equal, equal, replace, equal, equal."""
    return [DiffRow("equal" if k == "=" else "replace", i + 1, f"l{i}", i + 1, f"r{i}") for i, k in enumerate(kinds)]


def test_a_change_is_shown_with_three_lines_around_it_and_the_rest_folded():
    blocks = in_hunks(_rows("=" * 10 + "x" + "=" * 10))
    assert [(b.folded, len(b.rows)) for b in blocks] == [(True, 7), (False, 7), (True, 7)]
    assert (blocks[0].first_line, blocks[0].last_line) == (1, 7)


def test_a_short_unchanged_run_between_two_changes_is_not_folded():
    blocks = in_hunks(_rows("x" + "=" * 9 + "x"))
    assert [(b.folded, len(b.rows)) for b in blocks] == [(False, 11)]


def test_the_whole_document_folds_nothing():
    assert [(b.folded, len(b.rows)) for b in in_hunks(_rows("=" * 20 + "x"), context=None)] == [(False, 21)]


def test_the_review_page_shows_the_changed_lines_and_folds_the_rest(client, long_request, consumer):
    client.force_login(consumer)
    page = client.get(long_request.get_absolute_url()).content.decode()
    diff = page[page.index('id="document-diff"'):page.index("</table>", page.index('id="document-diff"'))]
    shown = re.sub(r'<tbody id="fold-\d+" class="folded" hidden>.*?</tbody>', "", diff, flags=re.S)
    long_request.refresh_from_db()  # the documents as the page reads them (jsonb orders their keys)
    total = len(side_by_side(long_request.base_version.document, long_request.proposed_document))
    assert total > 90
    # One hunk (the two changes are close) with three lines either side, not the whole document.
    assert shown.count("<tr class=") < 20
    assert "version: &#x27;2.0&#x27;" in shown and "- customer_id" in shown
    assert re.search(r'data-unfold="fold-\d+"[^>]*>Show \d+ unchanged lines</a>', diff)
    # The folded lines are on the page, to unfold in place.
    assert diff.count("<tr class=") == total


def test_the_whole_document_is_one_click_away_without_scripts(client, long_request, consumer):
    client.force_login(consumer)
    assert 'href="?context=all#diff"' in client.get(long_request.get_absolute_url()).content.decode()
    page = client.get(long_request.get_absolute_url() + "?context=all").content.decode()
    assert "data-unfold" not in page and 'class="folded"' not in page
    assert 'href="?#diff">Show only the changes' in page


def test_an_open_request_counts_down_to_its_deadline(client, change_request, consumer):
    client.force_login(consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert 'id="countdown"' in page and change_request.deadline_at.strftime("%Y-%m-%d %H:%M") in page


def test_an_approved_request_shows_no_countdown(client, change_request, consumer, consumer_team):
    change_request.acknowledge(consumer_team, by=consumer)
    client.force_login(consumer)
    page = client.get(change_request.get_absolute_url()).content.decode()
    assert 'id="cr-state">Approved' in page
    assert 'id="countdown"' not in page and "Deadline" not in page


def test_a_withdrawn_request_shows_no_countdown(client, change_request, owner):
    change_request.withdraw(by=owner)
    client.force_login(owner)
    assert "Deadline" not in client.get(change_request.get_absolute_url()).content.decode()

