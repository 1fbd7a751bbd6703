"""A breaking change to a dataframe contract is said of its columns on the review page and
in the e-mail that asks the consumer team, never in JSON Schema paths."""

from __future__ import annotations

import pytest
from django.core import mail

from change_requests.workflows import submit_version
from contracts_app.publishing import record_version
from tests.publish.conftest import cell_count

pytestmark = pytest.mark.django_db
SCHEMA_WORDS = ("/properties", "/required", "additionalProperties", "property_removed")


@pytest.fixture
def waiting_request(owner, dataset, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        contract = record_version(cell_count(), by=owner).contract
        contract.bind(dataset, by=owner)
        proposed = cell_count("2.0")
        proposed["columns"] = [c for c in proposed["columns"] if c["name"] != "viability"]
        outcome = submit_version(proposed, by=owner)
    assert outcome.change_request is not None, outcome.message
    return outcome.change_request


def test_the_review_page_names_the_removed_column(client, waiting_request, consumer):
    client.force_login(consumer)
    page = client.get(waiting_request.get_absolute_url()).content.decode()
    report = page[page.index('id="report"'):]
    report = report[:report.index("</section>")]
    assert "column `viability` removed" in report
    assert "<th>Column</th>" in report
    assert not any(word in report for word in SCHEMA_WORDS), report


def test_the_email_asking_the_consumer_team_names_the_column(waiting_request):
    asked = [m for m in mail.outbox if "acknowledgement is needed" in m.subject]
    assert asked and "column `viability` removed" in asked[0].body
    assert not any(word in asked[0].body for word in SCHEMA_WORDS)
