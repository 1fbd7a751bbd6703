"""Who is still on the old lane: the thin client's reports (per token or team), and
lineage: the schema reader jobs' events give the contract's dataset as an input, and the
columns they read, matched against each lane's columns."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from registry_client import Registry
from registry_client.backends import HttpBackend

from contracts_app.publishing import record_version
from lanes.evidence import lane_usage
from lanes.models import LaneRead
from registry.models import ApiToken, Membership
from registry.usage import ColumnRead, InputSchema
from tests.conftest import make_team, make_user
from tests.lineage.conftest import (
    column_lineage_facet,
    dataset,
    input_field,
    post,
    run_event,
    schema_facet,
)

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
    # The versions, the lanes, the thin client's reports, the bindings, the input schemas (none),
    # the column reads, the namespaces' teams (no team is attributed: no names asked).
    with django_assert_num_queries(7):
        lane_usage([two_lanes])
    readers(20)
    with django_assert_num_queries(7):
        assert lane(lane_usage([two_lanes]), two_lanes, 2).jobs == 44


# --- lineage: the schema readers' events give the contract's dataset as an input -----------

def orders_as_seen(*fields: tuple[str, str]) -> dict:
    """retail.public.orders as a reader's event lists it: an input with a `schema` facet."""
    return dataset("retail.public.orders", namespace=RETAIL, schema=schema_facet(*fields))


OLD_SHAPE = (("run_row_id", "VARCHAR"), ("viability", "DOUBLE PRECISION"), ("run_date", "TIMESTAMP"))
NEW_SHAPE = (("run_row_id", "VARCHAR"), ("run_date", "TIMESTAMP"))


@pytest.fixture
def analytics_secret(consumer_team) -> str:
    return ApiToken.issue("analytics airflow", team=consumer_team, scopes=["lineage:write"])[1]


def read_orders(client, secret, job: str, *fields: tuple[str, str]) -> None:
    event = run_event("COMPLETE", job=job, inputs=[orders_as_seen(*fields)], outputs=[f"analytics.{job}"])
    response = post(client, event, secret)
    assert response.status_code in (200, 201), response.content


def test_a_reader_whose_input_schema_shows_the_old_lanes_columns_is_on_the_old_lane(
        two_lanes, client, analytics_secret):
    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    assert ColumnRead.objects.get().column == ""  # no column evidence: only the schema tells
    usage = lane_usage([two_lanes])
    old = lane(usage, two_lanes, 2)
    assert [(r.who, r.team, r.source) for r in old.readers] == [("airflow/viability_report", "Analytics", "lineage")]
    assert old.readers[0].detail == "input schema: has viability, not in 3.x"
    assert old.readers[0].last_seen is not None
    assert old.summary == "1 team, 1 job still on 2.x"
    assert lane(usage, two_lanes, 3).readers == []


def test_a_reader_whose_input_schema_matches_the_new_lane_is_not_on_the_old_lane(two_lanes, client, analytics_secret):
    read_orders(client, analytics_secret, "row_counts", *NEW_SHAPE)
    usage = lane_usage([two_lanes])
    assert lane(usage, two_lanes, 2).readers == []
    assert lane(usage, two_lanes, 3).summary == "1 team, 1 job on 3.x"


def test_a_reader_that_moved_to_the_new_shape_leaves_the_old_lane(two_lanes, client, analytics_secret):
    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    read_orders(client, analytics_secret, "viability_report", *NEW_SHAPE)
    assert InputSchema.objects.get().fields == dict(NEW_SHAPE)
    assert lane(lane_usage([two_lanes]), two_lanes, 2).readers == []


def test_a_partial_input_schema_that_tells_no_lane_from_the_other_is_undecided_not_counted(
        two_lanes, client, analytics_secret):
    # dbt without a catalog lists the documented columns, untyped: a column it lacks says nothing.
    read_orders(client, analytics_secret, "documented_model", ("run_row_id", ""), ("run_date", ""))
    usage = lane_usage([two_lanes])
    for major in (2, 3):
        found = lane(usage, two_lanes, major)
        assert found.readers == []
        assert [(r.who, r.detail) for r in found.undecided] == [
            ("airflow/documented_model", "its input schema has nothing that tells 2.x and 3.x apart")]
    assert lane(usage, two_lanes, 2).summary == "0 teams, 0 jobs still on 2.x"

    # When the columns it reads decide, it is placed by them and no longer undecided.
    ColumnRead.objects.filter(job_name="documented_model").update(column="viability", source="column_lineage")
    usage = lane_usage([two_lanes])
    assert [r.detail for r in lane(usage, two_lanes, 2).readers] == ["reads viability, gone from 3.x"]
    assert lane(usage, two_lanes, 2).undecided == lane(usage, two_lanes, 3).undecided == []


def test_the_lanes_api_lists_undecided_readers_apart(two_lanes, client, analytics_secret, owner):
    read_orders(client, analytics_secret, "documented_model", ("run_row_id", ""), ("run_date", ""))
    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    client.force_login(owner)
    old = next(found for found in client.get("/api/contracts/lab.analytics.cell_count/lanes/").json()
               if found["major"] == 2)
    assert old["summary"] == "1 team, 1 job still on 2.x"
    assert [(r["who"], r["source"], r["detail"]) for r in old["readers"]] == [
        ("airflow/viability_report", "lineage", "input schema: has viability, not in 3.x")]
    assert [r["who"] for r in old["undecided"]] == ["airflow/documented_model"]
    assert old["undecided"][0]["last_seen"]
    page = client.get("/contracts/lab.analytics.cell_count/lanes/").content.decode()
    assert page.count("1 job whose input schema fits this lane and another alike (not counted)") == 2


def test_a_reader_fitting_two_lanes_alike_is_shown_on_both_and_counted_on_neither():
    from lanes.evidence import lane_columns, match_schema

    batch = {**optional_column("batch"), "required": True}
    lanes = {2: lane_columns(version("2.0"), "2.x"), 3: lane_columns(version("3.0", without="viability", extra=batch), "3.x")}
    # It has a column only 2.x has, and another only 3.x has: nothing to choose.
    found = match_schema({"run_row_id": "text", "viability": "float8", "batch": "text", "run_date": "date"},
                         True, lanes, "postgres")
    assert (found.majors, found.detail) == ([2, 3], "its input schema fits 2.x and 3.x alike")

    # Lacking a column only the new lane requires, a complete schema is on the old lane; a partial one cannot say.
    lanes = {2: lane_columns(version("2.0"), "2.x"), 3: lane_columns(version("3.0", extra=batch), "3.x")}
    old = match_schema({"run_row_id": "text", "viability": "float8", "run_date": "date"}, True, lanes, "postgres")
    assert (old.majors, old.detail) == ([2], "input schema: lacks batch of 3.x")
    assert match_schema({"run_row_id": "", "viability": ""}, False, lanes, "postgres").majors == [2, 3]


def test_types_tell_lanes_apart_where_the_names_do_not():
    from lanes.evidence import lane_columns, match_schema

    retyped = version("3.0")
    retyped["columns"] = [{**c, "dtype": "str"} if c["name"] == "viability" else c for c in retyped["columns"]]
    lanes = {2: lane_columns(version("2.0"), "2.x"), 3: lane_columns(retyped, "3.x")}
    on_old = match_schema({"RUN_ROW_ID": "TEXT", "VIABILITY": "REAL", "RUN_DATE": "DATE"}, True, lanes, "postgres")
    assert (on_old.majors, on_old.detail) == ([2], "input schema: viability is REAL, 3.x has str")
    assert match_schema({"viability": "varchar(10)"}, True, lanes, "postgres").majors == [3]
    # A warehouse we cannot read the types of: no evidence, no guess.
    assert match_schema({"viability": "varchar(10)"}, True, lanes, None).majors == [2, 3]


def test_input_schema_evidence_ages_out_like_the_other_evidence(two_lanes, client, analytics_secret, settings):
    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    InputSchema.objects.update(last_seen_at=timezone.now() - settings.COLUMN_USAGE_WINDOW - timedelta(minutes=1))
    ColumnRead.objects.update(last_seen_at=timezone.now() - settings.COLUMN_USAGE_WINDOW - timedelta(minutes=1))
    assert lane(lane_usage([two_lanes]), two_lanes, 2).readers == []


def test_the_same_input_schema_again_rewrites_nothing_and_a_changed_one_is_rewritten(two_lanes, client, analytics_secret):
    from lineage.ingest import RECENT_USAGE

    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    first = InputSchema.objects.get()
    RECENT_USAGE.clear()  # as another ingest process would: the database keeps the row as it is
    read_orders(client, analytics_secret, "viability_report", *OLD_SHAPE)
    again = InputSchema.objects.get()
    assert (again.last_seen_at, again.run_uuid) == (first.last_seen_at, first.run_uuid)
    read_orders(client, analytics_secret, "viability_report", *NEW_SHAPE)
    changed = InputSchema.objects.get()
    assert changed.fingerprint != first.fingerprint and changed.last_seen_at > first.last_seen_at


def test_both_kinds_of_evidence_count_each_team_and_job_once(two_lanes, client, analytics_secret, consumer_team, owner):
    # One job: its input schema and the columns it reads both put it on 2.x.
    orders = orders_as_seen(*OLD_SHAPE)
    report = dataset("analytics.viability_report", columnLineage=column_lineage_facet(
        {"mean_viability": [input_field("retail.public.orders", "viability", "DIRECT/AGGREGATION", namespace=RETAIL)]}))
    post(client, run_event("COMPLETE", job="viability_report", inputs=[orders], outputs=[report]), analytics_secret)
    read_orders(client, analytics_secret, "weekly_viability", *OLD_SHAPE)
    # The same team's notebook resolves "2.x" through the thin client.
    LaneRead.objects.create(contract=two_lanes, reader="token:99", reader_label="carol's notebook", team=consumer_team,
                            major=2, version="2.1", selector="2.x")
    old = lane(lane_usage([two_lanes]), two_lanes, 2)
    assert sorted((r.who, r.source) for r in old.readers) == [
        ("airflow/viability_report", "lineage"), ("airflow/weekly_viability", "lineage"),
        ("carol's notebook", "thin client")]
    assert old.summary == "1 team, 3 jobs still on 2.x"
    client.force_login(owner)
    page = client.get("/contracts/lab.analytics.cell_count/lanes/").content.decode()
    assert "1 team, 3 jobs still on 2.x" in page and "has viability, not in 3.x" in page


def test_the_still_on_query_with_input_schemas_takes_the_same_queries_whatever_the_readers(
        two_lanes, dataset, django_assert_num_queries, consumer_team):
    def readers(n):
        for i in range(n):
            shape = dict(OLD_SHAPE if i % 2 else NEW_SHAPE)
            InputSchema.objects.create(dataset=dataset, job_namespace="airflow", job_name=f"s{n}-{i}",
                                       fingerprint=str(sorted(shape)), fields=shape, token_team=consumer_team)
            ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name=f"j{n}-{i}",
                                      column="viability", source="column_lineage")
    readers(2)
    # The versions, the lanes, the thin client's reports, the bindings, the input schemas
    # (with each job's team), the column reads (with each job's team), the namespaces' teams,
    # the teams' names.
    with django_assert_num_queries(8):
        lane_usage([two_lanes])
    readers(20)
    with django_assert_num_queries(8):
        usage = lane_usage([two_lanes])
    assert lane(usage, two_lanes, 2).jobs == 11 + 22
    assert lane(usage, two_lanes, 3).jobs == 11
