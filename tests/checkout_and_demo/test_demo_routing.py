"""The demo attributes its jobs to their teams through the ownership rules users get,
so a breaking change asks the team whose job reads a touched column and tells the others;
the job no rule names waits for its team to say "this job is ours"."""

from __future__ import annotations

import copy
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from change_requests.models import ChangeRequest
from contracts_app.models import Contract
from contracts_app.publishing import publish_document
from lineage.models import Job
from registry.env import parse_contract_store
from registry.jobs import DecidedBy, JobTeam, OwnershipRules

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())


def test_the_demos_jobs_are_their_teams_by_the_rules_file_and_loading_again_adds_no_version(demo):
    teams = dict(JobTeam.objects.values_list("job_name", "team__slug"))
    assert teams == {
        "finance.daily_revenue": "finance", "analytics.customer_orders": "analytics",
        "analytics.conversion_funnel": "analytics", "logistics.fulfilment": "logistics",
        "checkout.returns_sync": "checkout", "lab.plate_reader_ingest": "lab-data",
        "lab.bioprocess_summary": "lab-data", "analytics.clickstream_sessions": None,  # spark: claimed on its page
        "retail_dbt.retail.public.orders.test": "checkout",
    }
    assert set(JobTeam.objects.exclude(team=None).values_list("rule", flat=True)) == {DecidedBy.RULES_FILE}
    call_command("load_demo", stdout=io.StringIO())
    assert OwnershipRules.objects.count() == 1


def test_a_breaking_change_to_orders_asks_the_team_whose_job_reads_the_column_and_tells_the_others(demo):
    alice = get_user_model().objects.get(username="alice")
    latest = Contract.objects.get(name="retail.sales.orders").latest_version()
    document = copy.deepcopy(latest.document)
    document["schema"]["version"] = "3.0"
    document["columns"] = [c for c in document["columns"] if c["name"] != "channel"]
    outcome = publish_document(document, by=alice)
    request = outcome.change_request
    assert isinstance(request, ChangeRequest), outcome.message
    assessed = {a.team.slug: a for a in request.assessments.select_related("team")}
    # finance.daily_revenue groups revenue by channel; analytics.customer_orders reads id and customer_id.
    assert assessed["finance"].affected and "channel" in assessed["finance"].why
    assert not assessed["analytics"].affected
    assert sorted(r.team.slug for r in request.reviews.all()) == sorted(
        slug for slug, a in assessed.items() if a.affected)
    assert "analytics" not in [r.team.slug for r in request.reviews.all()]


def test_carol_says_the_spark_job_is_analytics_and_its_readings_follow(demo, client):
    carol = get_user_model().objects.get(username="carol")
    job = Job.objects.get(name="analytics.clickstream_sessions")
    client.force_login(carol)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'id="job-claim-form"' in page
    client.post(f"/lineage/jobs/{job.pk}/claim/", {"team": carol.teams.get(slug="analytics").pk})
    assert JobTeam.objects.get(job_name="analytics.clickstream_sessions").team.slug == "analytics"
    assert 'id="job-claim-form"' not in client.get(job.get_absolute_url()).content.decode()



def test_the_demos_failing_dbt_test_opens_an_incident_that_reaches_the_team_reading_the_column(demo, client):
    from incidents.hooks import open_incidents
    from incidents.models import Cause, ContractState, Incident
    from registry.models import Team

    incident = Incident.objects.get(cause=Cause.CHECK_FAILED, state="open")
    dataset = incident.dataset
    assert dataset.name == "retail.public.orders" and incident.column == "customer_id"
    assert dataset.contract_status.status == ContractState.FAILING
    # The evaluator opened it from the replayed result: its run, and its timeline, are the ingest's.
    assert incident.evidence["job"] == "retail_dbt.retail.public.orders.test"
    assert [e.kind for e in incident.events.all()] == ["opened", "notified"]
    readers = {t.team.slug for t in incident.teams.filter(owner=False).select_related("team")}
    # analytics.customer_orders reads customer_id; finance.daily_revenue provably does not.
    assert "analytics" in readers and "finance" not in readers
    carol = get_user_model().objects.get(username="carol")
    analytics = Team.objects.get(slug="analytics")
    assert any(item.key == f"incident:{incident.pk}:{analytics.pk}" for item in open_incidents(carol, [analytics.pk]))
    client.force_login(carol)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert f'id="incident-{incident.pk}"' in page and "not_null on customer_id failed" in page
    # Loading again replays the same runs: no second incident.
    call_command("load_demo", stdout=io.StringIO())
    assert Incident.objects.filter(cause=Cause.CHECK_FAILED).count() == 1
