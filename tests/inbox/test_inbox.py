"""The inbox: each person and team sees what they must act on now, each item links to
the page where it is done and leaves once it is; the page, the API and the navigation's
count agree, in a number of queries that does not grow with the items.

The world: Checkout (alice, bob) owns retail.public.orders, bound to the contract
retail.checkout.order_placed; Analytics (carol) consumes it; Warehouse (dave) does not."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from change_requests.models import ChangeRequest
from change_requests.workflows import open_change_request
from contracts_app.models import Draft, SchemaDriftCheck
from contracts_app.publishing import record_version
from freshness.constants import FreshnessStatus
from freshness.models import DatasetFreshness
from lineage.models import Job, QualityCheck
from registry.models import ApiToken, AuditEvent, Dataset
from registry.ownership import claim_job
from tests.change_requests.conftest import BASE_DOCUMENT, proposed_document, report_for
from tests.conftest import bearer
from tests.lineage.conftest import post, run_event

pytestmark = pytest.mark.django_db

NS = "postgres://retail-db:5432"


@pytest.fixture(autouse=True)
def contract_store(settings, tmp_path):
    from registry.env import parse_contract_store

    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)


@pytest.fixture
def contract(dataset, owner):
    version = record_version(BASE_DOCUMENT, by=owner)
    version.contract.bind(dataset, by=owner)
    return version.contract


@pytest.fixture
def waiting(contract, owner) -> ChangeRequest:
    """A breaking 2.0 that waits for Analytics."""
    document = proposed_document()
    return open_change_request(contract, document, by=owner, report=report_for(document), summary="Name the customer.")


def titles(client, user, path="/api/inbox/") -> list[str]:
    client.force_login(user)
    return [item["title"] for item in client.get(path).json()["items"]]


def test_carol_must_answer_the_request_with_its_deadline_and_alice_then_publishes_it(client, waiting, owner, consumer,
                                                                                      consumer_team):
    client.force_login(consumer)
    answer = client.get("/api/inbox/").json()
    assert answer["count"] == 1 and answer["teams"] == ["analytics"]
    (item,) = answer["items"]
    assert item["title"] == f"Analytics must answer change request #{waiting.pk}: retail.checkout.order_placed 2.0"
    assert item["kind"] == "acknowledge" and item["team"] == "analytics"
    assert item["url"] == f"/change-requests/{waiting.pk}/" and item["due"].startswith(waiting.deadline_at.date().isoformat())
    page = client.get("/inbox/").content.decode()
    assert f"Analytics must answer change request #{waiting.pk}" in page and "due " in page
    assert titles(client, owner) == []  # the author's team waits; it has nothing to do yet

    waiting.acknowledge(consumer_team, by=consumer)
    assert titles(client, consumer) == []
    assert titles(client, owner) == [f"Checkout may publish retail.checkout.order_placed 2.0: change request "
                                     f"#{waiting.pk} is approved"]

    waiting.publish(by=owner)
    assert titles(client, owner) == []


def test_a_teams_inbox_shows_only_that_team_and_anyone_signed_in_may_look(client, waiting, outsider):
    client.force_login(outsider)
    assert client.get("/api/inbox/").json()["count"] == 0
    theirs = client.get("/api/inbox/?team=analytics").json()
    assert theirs["teams"] == ["analytics"] and [i["kind"] for i in theirs["items"]] == ["acknowledge"]
    page = client.get("/inbox/teams/analytics/").content.decode()
    assert "<h1>Analytics's inbox</h1>" in page
    assert "You are not a member of Analytics" in page


def test_unknown_teams_and_strangers_get_json_errors_with_a_code(client, consumer):
    assert client.get("/api/inbox/").json()["code"] == "token_missing"
    client.force_login(consumer)
    missing = client.get("/api/inbox/?team=nobody")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert client.get("/inbox/teams/nobody/").status_code == 404


def test_a_team_token_reads_its_teams_inbox(client, waiting, consumer_team):
    _, secret = ApiToken.issue("analytics bot", team=consumer_team, scopes=["read"])
    answer = client.get("/api/inbox/", **bearer(secret)).json()
    assert [i["kind"] for i in answer["items"]] == ["acknowledge"]


def test_the_navigation_links_the_inbox_and_its_count_comes_after_the_page(client, waiting, consumer):
    client.force_login(consumer)
    page = client.get("/").content.decode()
    assert 'id="nav-inbox"' in page and 'data-count-url="/api/inbox/count/"' in page
    assert client.get("/api/inbox/count/").json() == {"count": 1, "more": False}


def test_people_land_on_their_inbox_after_logging_in(client, consumer):
    response = client.post("/login/", {"username": "carol", "password": "pw"})
    assert response.status_code == 302 and response.url == "/inbox/"
    assert "Nothing waits for you or your teams" in client.get("/inbox/").content.decode()


# --- each app's items, and each leaves once resolved ----------------------------------------

def stale(dataset, since=None) -> DatasetFreshness:
    since = since or timezone.now() - timedelta(hours=3)
    return DatasetFreshness.objects.create(dataset=dataset, max_age=timedelta(hours=1), status=FreshnessStatus.STALE,
                                           status_since=since, last_write_at=since - timedelta(hours=1))


def drift(dataset, count=2) -> SchemaDriftCheck:
    return SchemaDriftCheck.objects.create(
        dataset=dataset, contract_name="retail.checkout.order_placed", version="1.0", run_uuid=uuid.uuid4(),
        job_namespace="airflow", job_name="checkout.orders", event_type="COMPLETE", event_time=timezone.now(),
        drift_count=count)


def failing(dataset, job="dbt.orders.test") -> QualityCheck:
    return QualityCheck.objects.create(dataset=dataset, run_uuid=uuid.uuid4(), job_namespace="dbt", job_name=job,
                                       event_type="COMPLETE", event_time=timezone.now(), assertion_count=3,
                                       failed_count=1, assertions=[{"assertion": "not_null", "success": False}])


def draft(team, name="retail.checkout.returns") -> Draft:
    return Draft.objects.create(contract_name=name, version="1.0", schema_type="dataframe", owner_team=team,
                                document={}, checksum="x", origin="observed", source="retail.public.returns")


def test_stale_drifted_and_failing_datasets_and_drafts_reach_the_owner_team(client, dataset, owner, owner_team, consumer):
    row = stale(dataset)
    check = drift(dataset)
    failing(dataset)
    pending = draft(owner_team)
    client.force_login(owner)
    items = {i["kind"]: i for i in client.get("/api/inbox/").json()["items"]}
    assert set(items) == {"stale", "drift", "failing_checks", "review_draft"}
    assert items["stale"]["title"].startswith("retail.public.orders is stale since ")
    assert items["stale"]["url"] == f"/datasets/{dataset.pk}/#freshness"
    assert items["drift"]["url"].endswith("#schema-drift") and "2 findings" in items["drift"]["title"]
    assert items["failing_checks"]["url"].endswith("#data-quality")
    assert items["review_draft"]["url"] == f"/drafts/{pending.pk}/"
    assert titles(client, consumer) == []  # the consumer team owns none of it

    DatasetFreshness.objects.filter(pk=row.pk).update(status=FreshnessStatus.FRESH)
    SchemaDriftCheck.objects.create(**{f: getattr(check, f) for f in (
        "dataset", "contract_name", "version", "job_namespace", "job_name", "event_type", "event_time")},
        run_uuid=uuid.uuid4(), drift_count=0)
    failing(dataset).__class__.objects.filter(dataset=dataset).update(failed_count=0)
    Draft.objects.filter(pk=pending.pk).update(state="discarded")
    client.force_login(owner)
    assert client.get("/api/inbox/").json()["items"] == []


def test_jobs_tell_their_team_what_it_owes_unowned_outputs_unregistered_readers_and_unattributed_jobs(
        client, dataset, owner, owner_team, outsider, other_team):
    checkout_token = ApiToken.issue("checkout airflow", team=owner_team)[1]
    warehouse_token = ApiToken.issue("warehouse airflow", team=other_team)[1]
    orders = {"namespace": NS, "name": "retail.public.orders"}
    returns = {"namespace": NS, "name": "retail.public.returns"}
    assert post(client, run_event("COMPLETE", job="checkout.returns_sync", inputs=[orders], outputs=[returns]),
                checkout_token).status_code in (200, 201)
    assert post(client, run_event("COMPLETE", job="warehouse.stock", inputs=[orders]), warehouse_token).status_code in (200, 201)

    alice = {i["kind"]: i for i in (client.force_login(owner) or client.get("/api/inbox/").json()["items"])}
    assert alice["unowned_output"]["title"] == ("retail.public.returns has no owner, and Checkout's job "
                                                "checkout.returns_sync writes it")
    assert alice["unattributed_job"]["title"] == ("Is airflow/checkout.returns_sync Checkout's job? "
                                                  "No rule says whose it is")
    dave = {i["kind"]: i for i in (client.force_login(outsider) or client.get("/api/inbox/").json()["items"])}
    assert dave["unattributed_job"]["title"].startswith("Is airflow/warehouse.stock Warehouse's job?")
    readers = alice["unregistered_readers"]
    assert readers["title"] == "1 job of a team not registered as a consumer reads retail.public.orders"
    assert readers["url"] == f"/datasets/{dataset.pk}/#readers"

    # Checkout claims the job on its page: the rules say so, audited; the item leaves.
    job = Job.objects.get(name="checkout.returns_sync")
    client.force_login(owner)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'id="job-claim-form"' in page and "This job is Checkout" in page
    client.post(f"/lineage/jobs/{job.pk}/claim/", {"team": owner_team.pk})
    assert "decided by ownership rules file" in client.get(job.get_absolute_url()).content.decode()
    assert AuditEvent.objects.filter(action="job.claimed", after__job="airflow/checkout.returns_sync").exists()
    kinds = [i["kind"] for i in client.get("/api/inbox/").json()["items"]]
    assert "unattributed_job" not in kinds and "unowned_output" in kinds

    # Claiming the unowned dataset it writes resolves that one too.
    Dataset.objects.get(name="retail.public.returns").claim(owner_team, owner=owner, by=owner)
    assert "unowned_output" not in [i["kind"] for i in client.get("/api/inbox/").json()["items"]]


def test_only_a_member_claims_a_job_for_a_team_and_an_attributed_job_stays_the_rules_business(
        client, owner, owner_team, outsider):
    from django.core.exceptions import PermissionDenied

    from registry.ownership import JobAlreadyAttributed

    token = ApiToken.issue("checkout airflow", team=owner_team)[1]
    post(client, run_event("COMPLETE", job="checkout.returns_sync", outputs=["x"]), token)
    with pytest.raises(PermissionDenied):
        claim_job("airflow", "checkout.returns_sync", owner_team, by=outsider)
    saved = claim_job("airflow", "checkout.returns_sync", owner_team, by=owner)
    assert saved.reattributed[0].after == "checkout"
    with pytest.raises(JobAlreadyAttributed):
        claim_job("airflow", "checkout.returns_sync", owner_team, by=owner)


def test_a_governance_admin_sees_the_jobs_no_team_owns_at_all(client, admin):
    from lineage.ingest import store_event

    store_event(run_event("COMPLETE", job="mystery.job", outputs=["y"]), by="test")
    client.force_login(admin)
    (item,) = client.get("/api/inbox/").json()["items"]
    assert item["title"] == "1 job belongs to no team at all" and item["url"] == "/jobs/unowned/"


# --- a bounded number of queries ---------------------------------------------------------------

def queries_for(client, user, path) -> int:
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return len(captured)


def more_of_everything(owner_team, owner, n: int) -> None:
    for i in range(n):
        ds = Dataset.objects.create(namespace=NS, name=f"retail.public.t{i}", owner_team=owner_team, owner=owner)
        stale(ds)
        drift(ds)
        failing(ds, job=f"dbt.t{i}.test")
        draft(owner_team, name=f"retail.checkout.t{i}")


def test_the_inbox_takes_the_same_queries_whatever_the_number_of_items(client, waiting, owner, owner_team, consumer,
                                                                        django_assert_num_queries):
    # Per request: the session and the user, the person's teams, then each provider's own few
    # (change requests: reviews to give, approved requests; contracts: drafts, drift; freshness:
    # stale rows; lineage: failing checks, unowned outputs and their teams, unregistered readers,
    # unattributed jobs and their teams) - none of them per item.
    first = {path: queries_for(client, owner, path) for path in ("/api/inbox/", "/inbox/", "/api/inbox/count/")}
    more_of_everything(owner_team, owner, 12)
    client.force_login(owner)
    assert client.get("/api/inbox/").json()["count"] == 48
    for path, count in first.items():
        client.force_login(owner)
        with django_assert_num_queries(count):
            client.get(path)


# --- an approved request waits for its owner, not for a clock ----------------------------------

def test_an_approved_request_says_it_waits_for_its_owner_on_the_list_the_dataset_and_alices_home(
        client, waiting, dataset, owner, consumer, consumer_team):
    client.force_login(owner)
    assert ">1 open change request</a>" in client.get("/").content.decode()
    waiting.acknowledge(consumer_team, by=consumer)
    home = client.get("/").content.decode()
    assert "open change request" not in home and ">approved: ready to publish</a>" in home
    listing = client.get("/change-requests/").content.decode()
    assert "approved-waiting" in listing and "Checkout publishes it" in listing
    row = listing.split(f"#{waiting.pk}</a>")[1].split("</tr>")[0]
    assert "(in " not in row  # no countdown to a deadline that no longer matters
    assert "approved: Checkout publishes it" in client.get(dataset.get_absolute_url()).content.decode()


def test_deadlines_given_as_days_and_as_moments_sort_together_and_answer_one_format():
    """A sunset is due on a day, an incident at a moment: the inbox orders both and the
    API answers both as date-times (mixing them used to answer a 500)."""
    from datetime import date, datetime

    from registry.hooks import InboxItem
    from registry.inbox import Inbox, _in_order

    tz = timezone.get_default_timezone()
    sunset = InboxItem(kind="acknowledge", title="answer", url="/cr/9/", key="cr:9", due=date(2026, 12, 28))
    incident = InboxItem(kind="incident_owned", title="handle", url="/d/1/", key="incident:1:1",
                         due=datetime(2026, 12, 3, 15, 0, tzinfo=tz))
    undated = InboxItem(kind="stale", title="refresh", url="/d/2/", key="stale:2")
    ordered = _in_order([undated, sunset, incident])
    assert [item.key for item in ordered] == ["incident:1:1", "cr:9", "stale:2"]
    inbox = Inbox([], ordered)
    assert [inbox.to_dict(item)["due"] for item in ordered] == [
        incident.due.isoformat(), datetime(2026, 12, 28, tzinfo=tz).isoformat(), None]


# --- a bounded page: the first PER_KIND (25) of each kind, and "25+" ---------------------------

def many_stale(owner_team, owner, n: int) -> list[Dataset]:
    """n stale datasets of Checkout's, the first stale longest ago."""
    datasets = Dataset.objects.bulk_create(
        Dataset(namespace=NS, name=f"retail.public.s{i:03}", owner_team=owner_team, owner=owner) for i in range(n))
    start = timezone.now() - timedelta(days=30)
    DatasetFreshness.objects.bulk_create(
        DatasetFreshness(dataset=d, max_age=timedelta(hours=1), status=FreshnessStatus.STALE,
                         status_since=start + timedelta(minutes=i), last_write_at=start)
        for i, d in enumerate(datasets))
    return datasets


def test_a_kind_with_more_items_than_the_page_shows_its_first_and_says_25_plus(
        client, waiting, owner, owner_team):
    from registry.inbox import PER_KIND

    datasets = many_stale(owner_team, owner, PER_KIND + 5)
    client.force_login(owner)
    answer = client.get("/api/inbox/").json()
    stale_items = [i for i in answer["items"] if i["kind"] == "stale"]
    # Stale longest ago first: the first PER_KIND, in that order.
    assert [i["key"].split(":")[1] for i in stale_items] == [str(d.pk) for d in datasets[:PER_KIND]]
    assert answer["more"] == ["stale"] and answer["count"] == PER_KIND
    assert client.get("/api/inbox/count/").json() == {"count": PER_KIND, "more": True}
    page = client.get("/inbox/").content.decode()
    assert f"<strong>{PER_KIND}+</strong> items need action" in page
    assert f'<span class="tag">{PER_KIND}+</span>' in page
    assert f"retail.public.s{PER_KIND - 1:03} is stale" in page and f"retail.public.s{PER_KIND:03} is stale" not in page


def test_a_kind_of_exactly_the_page_is_complete(client, owner, owner_team):
    from registry.inbox import PER_KIND

    many_stale(owner_team, owner, PER_KIND)
    client.force_login(owner)
    answer = client.get("/api/inbox/").json()
    assert answer["count"] == PER_KIND and answer["more"] == []
    assert f"<strong>{PER_KIND}</strong> items need action" in client.get("/inbox/").content.decode()


def test_the_next_items_show_as_the_first_are_done(client, owner, owner_team):
    from registry.inbox import PER_KIND

    datasets = many_stale(owner_team, owner, PER_KIND + 1)
    DatasetFreshness.objects.filter(dataset=datasets[0]).update(status=FreshnessStatus.FRESH)
    client.force_login(owner)
    answer = client.get("/api/inbox/").json()
    assert answer["more"] == [] and answer["count"] == PER_KIND
    assert answer["items"][-1]["key"].startswith(f"stale:{datasets[-1].pk}:")


def test_a_bounded_inbox_costs_the_queries_of_a_small_one(client, waiting, owner, owner_team,
                                                         django_assert_num_queries):
    from registry.inbox import PER_KIND

    small = {path: queries_for(client, owner, path) for path in ("/api/inbox/", "/inbox/", "/api/inbox/count/")}
    many_stale(owner_team, owner, 3 * PER_KIND)
    for path, count in small.items():
        client.force_login(owner)
        with django_assert_num_queries(count):
            client.get(path)


def test_the_digest_still_says_everything_waiting(owner, owner_team):
    from registry.inbox import PER_KIND, inbox_of_team

    many_stale(owner_team, owner, PER_KIND + 5)
    whole = inbox_of_team(owner_team, per_kind=None)
    assert whole.count == PER_KIND + 5 and not whole.more
