"""Who is still on the old lane: the thin client's reports (per token or team) and the
columns lineage shows reader jobs reading, matched against each lane's columns."""

from __future__ import annotations

import pytest
from registry_client import Registry
from registry_client.backends import HttpBackend

from contracts_app.publishing import record_version
from lanes.evidence import lane_usage
from lanes.models import LaneRead
from registry.models import ApiToken, Membership
from registry.usage import ColumnRead
from tests.conftest import make_team, make_user
from tests.lineage.conftest import column_lineage_facet, dataset, input_field, post, run_event

from .conftest import optional_column, version, without_viability

RETAIL = "postgres://retail-db:5432"


def lane(usage, contract, major):
    return next(u for u in usage[contract.pk] if u.major == major)


@pytest.fixture
def live_lanes(transactional_db, dataset, owner_team, owner):
    """The two lanes, committed and uploaded (a live server reads them)."""
    record_version(version("2.0"), by=owner)
    record_version(version("2.1", extra=optional_column("operator")), by=owner)
    contract = record_version(without_viability("3.0"), by=owner).contract
    contract.bind(dataset, by=owner)
    return contract


def test_the_thin_client_reports_what_it_resolved_and_a_moved_reader_leaves_the_old_lane(
        live_lanes, live_server, consumer_team):
    _, secret = ApiToken.issue("nightly viability job", team=consumer_team)
    Registry(HttpBackend(live_server.url, secret)).get_pandera_model("lab.analytics.cell_count", version="2")
    read = LaneRead.objects.get()
    assert (read.major, read.version, read.selector, read.team_id) == (2, "2.1", "2", consumer_team.pk)
    old = lane(lane_usage([live_lanes]), live_lanes, 2)
    assert old.summary == "1 team, 1 job still on 2.x"
    assert old.teams[0][0] == "Analytics" and old.teams[0][1] is not None

    Registry(HttpBackend(live_server.url, secret)).get_pandera_model("lab.analytics.cell_count", version="3.x")
    usage = lane_usage([live_lanes])
    assert lane(usage, live_lanes, 2).readers == []
    assert lane(usage, live_lanes, 3).summary == "1 team, 1 job on 3.x"


def test_a_client_that_opts_out_reports_nothing(live_lanes, live_server, consumer_team):
    _, secret = ApiToken.issue("quiet job", team=consumer_team)
    registry = Registry(HttpBackend(live_server.url, secret, report_resolved=False))
    assert registry.resolve("lab.analytics.cell_count", "2.x") == "2.1"
    registry.get_schema("lab.analytics.cell_count", "2.x")
    assert not LaneRead.objects.exists()


def test_fetches_are_counted_per_token(two_lanes, client, consumer_team):
    _, secret = ApiToken.issue("hourly job", team=consumer_team)
    for _ in range(3):
        client.get("/api/contracts/lab.analytics.cell_count/versions/2.x/document/",
                   HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_X_REGISTRY_RESOLVED="selector=2.x; version=2.1")
    read = LaneRead.objects.get()
    assert read.fetches == 3 and read.team_id == consumer_team.pk and read.selector == "2.x"


def test_a_job_reading_a_column_the_newest_lane_dropped_is_on_the_old_lane(two_lanes, client, consumer_team):
    """A real OpenLineage event: the job's output says which input columns fed it."""
    _, secret = ApiToken.issue("analytics airflow", team=consumer_team, scopes=["lineage:write"])
    orders = dataset("retail.public.orders", namespace=RETAIL)
    report = dataset("analytics.viability_report", columnLineage=column_lineage_facet(
        {"mean_viability": [input_field("retail.public.orders", "viability", "DIRECT/AGGREGATION", namespace=RETAIL)]}))
    response = post(client, run_event("COMPLETE", job="viability_report", inputs=[orders], outputs=[report]), secret)
    assert response.status_code in (200, 201), response.content
    assert ColumnRead.objects.filter(column="viability").exists()
    old = lane(lane_usage([two_lanes]), two_lanes, 2)
    assert [(r.who, r.team, r.source) for r in old.readers] == [("airflow/viability_report", "Analytics", "lineage")]
    assert "viability" in old.readers[0].detail
    assert old.summary == "1 team, 1 job still on 2.x"


def test_a_job_reading_only_columns_the_newest_lane_keeps_is_not_on_the_old_lane(two_lanes, dataset):
    ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name="row_counts", column="run_row_id",
                              source="column_lineage")
    assert lane(lane_usage([two_lanes]), two_lanes, 2).readers == []


def test_the_owner_sees_teams_and_jobs_still_on_the_old_lane(two_lanes, dataset, client, owner):
    for n, name in enumerate(["Billing", "Finance", "Research"]):
        team = make_team(name, name.lower())
        person = make_user(f"reader{n}")
        Membership.objects.create(team=team, user=make_user(f"spare{n}"))
        for job in range(2 + (n == 0)):
            ColumnRead.objects.create(dataset=dataset, job_namespace=f"{name.lower()}-airflow",
                                      job_name=f"job{job}", column="viability", source="column_lineage",
                                      token_team=team)
        LaneRead.objects.create(contract=two_lanes, reader=f"user:{person.pk}", reader_label=person.username,
                                team=team, major=2, version="2.1", selector="2.x")
    client.force_login(owner)
    page = client.get("/contracts/lab.analytics.cell_count/lanes/").content.decode()
    assert "3 teams, 10 jobs still on 2.x" in page
    assert "Billing" in page and "Research" in page


def test_the_still_on_query_takes_the_same_queries_whatever_the_readers(two_lanes, dataset, django_assert_num_queries):
    def readers(n):
        for i in range(n):
            ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name=f"j{n}-{i}",
                                      column="viability", source="column_lineage")
            LaneRead.objects.create(contract=two_lanes, reader=f"token:{n * 100 + i}", reader_label=f"t{i}",
                                    major=2, version="2.1", selector="2")
    readers(2)
    with django_assert_num_queries(6):
        lane_usage([two_lanes])
    readers(20)
    with django_assert_num_queries(6):
        assert lane(lane_usage([two_lanes]), two_lanes, 2).jobs == 44
