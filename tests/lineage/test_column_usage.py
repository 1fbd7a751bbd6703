"""Column usage from lineage: which columns each job reads of each input, and
the field edges, written with the event (lineage.column_usage)."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from lineage.ingest import store_event
from lineage.models import DatasetSchema, FieldEdge, JobDataset
from registry.models import ApiToken, AuditEvent, Dataset
from registry.usage import ColumnRead, readings_of

from .conftest import (
    WAREHOUSE,
    column_lineage_facet,
    dataset,
    input_field,
    post,
    run_event,
    schema_facet,
    shared_event,
    sql_facet,
)

pytestmark = pytest.mark.django_db

ORDERS_SCHEMA = schema_facet(("id", "bigint"), ("customer_id", "bigint"), ("amount", "numeric"),
                             ("status", "varchar"), ("created_at", "timestamp"))


def reads(job: str | None = None) -> set[tuple[str, str, str, str]]:
    """(dataset name, column, kind, source) of every column read stored."""
    rows = ColumnRead.objects.all()
    if job:
        rows = rows.filter(job_name=job)
    return set(rows.values_list("dataset__name", "column", "kind", "source"))


def edges() -> set[tuple[str, str, str, str, str]]:
    """(output, field, input, input field, kind) of every field edge stored."""
    return set(FieldEdge.objects.values_list("dataset__name", "field", "input_dataset__name", "input_field", "kind"))


def lineage_dataset_facet(fields: dict[str, list[dict]], inputs: list[dict] | None = None) -> dict:
    facet = {"_producer": "https://example.com/producer",
             "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/LineageFacet.json#/$defs/LineageDatasetFacet",
             "fields": {name: {"inputs": sources} for name, sources in fields.items()}}
    if inputs is not None:
        facet["inputs"] = inputs
    return facet


def source(name: str, field: str | None = None, *types: str) -> dict:
    entry = {"namespace": WAREHOUSE, "name": name, "type": "DATASET"}
    if field is not None:
        entry["field"] = field
    if types:
        entry["transformations"] = [{"type": t} for t in types]
    return entry


# --- no column evidence ----------------------------------------------------------------

def test_an_input_without_column_evidence_is_read_all_or_unknown(client, lineage_secret):
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"]), lineage_secret)
    assert reads() == {("raw.orders", "", "DIRECT", "input")}
    assert readings_of(Dataset.objects.filter(name="raw.orders").values_list("pk", flat=True))[0].reads_everything


def test_an_event_without_inputs_records_no_reads(client, lineage_secret):
    post(client, run_event("COMPLETE", outputs=["mart.orders"]), lineage_secret)
    assert not ColumnRead.objects.exists()


# --- source 1: the explicit lineage facets -------------------------------------------------

def test_the_explicit_lineage_facet_gives_direct_and_dataset_wide_reads_and_field_edges(client, lineage_secret):
    facet = lineage_dataset_facet(
        {"order_id": [source("raw.orders", "id", "DIRECT")],
         "total": [source("raw.orders", "amount", "DIRECT"), source("raw.orders", "status", "INDIRECT")]},
        inputs=[source("raw.orders", "created_at"), source("raw.customers")])
    event = run_event("COMPLETE", inputs=["raw.orders", "raw.customers"], outputs=[dataset("mart.orders", lineage=facet)])
    assert post(client, event, lineage_secret).status_code == 201
    assert reads() == {
        ("raw.orders", "id", "DIRECT", "lineage_facet"),
        ("raw.orders", "amount", "DIRECT", "lineage_facet"),
        ("raw.orders", "status", "INDIRECT", "lineage_facet"),
        ("raw.orders", "created_at", "INDIRECT", "lineage_facet"),  # a field at dataset level: affects every row
        ("raw.customers", "", "DIRECT", "input"),  # named without a field: no column evidence
    }
    assert edges() == {("mart.orders", "order_id", "raw.orders", "id", "DIRECT"),
                       ("mart.orders", "total", "raw.orders", "amount", "DIRECT"),
                       ("mart.orders", "total", "raw.orders", "status", "INDIRECT")}


def test_the_lineage_job_facet_entries_count_for_their_sources(client, lineage_secret):
    job_facet = {"_producer": "https://example.com/producer",
                 "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/LineageFacet.json#/$defs/LineageJobFacet",
                 "entries": [
                     {"namespace": WAREHOUSE, "name": "mart.orders", "type": "DATASET",
                      "fields": {"order_id": {"inputs": [source("raw.orders", "id", "DIRECT")]}}},
                     {"type": "JOB", "inputs": [source("ref.calendar", "day", "INDIRECT")]},  # the event's own job
                     {"namespace": "airflow", "name": "another_job", "type": "JOB",
                      "inputs": [source("raw.secrets", "token")]},  # someone else's read
                 ]}
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"], job_facets={"lineage": job_facet})
    assert post(client, event, lineage_secret).status_code == 201
    assert reads() == {("raw.orders", "id", "DIRECT", "lineage_facet"), ("ref.calendar", "day", "INDIRECT", "lineage_facet")}
    assert edges() == {("mart.orders", "order_id", "raw.orders", "id", "DIRECT")}
    # A source only the facet names is an input of the job too.
    assert JobDataset.objects.filter(dataset__name="ref.calendar", direction="in").exists()


def test_every_source_adds_what_it_shows_labelled_by_the_most_trusted(client, lineage_secret):
    """A producer's facet is often partial (dbt-ol leaves out filters), so no source hides another's reads."""
    explicit = lineage_dataset_facet({"order_id": [source("raw.orders", "id", "DIRECT")]})
    column_lineage = column_lineage_facet({"order_id": [input_field("raw.orders", "legacy_id", "DIRECT")]})
    event = run_event("COMPLETE", inputs=["raw.orders"],
                      outputs=[dataset("mart.orders", lineage=explicit, columnLineage=column_lineage)],
                      job_facets={"sql": sql_facet("select other_id as order_id from raw.orders")})
    post(client, event, lineage_secret)
    assert reads() == {("raw.orders", "id", "DIRECT", "lineage_facet"),
                       ("raw.orders", "legacy_id", "DIRECT", "column_lineage"),
                       ("raw.orders", "other_id", "DIRECT", "sql")}
    assert ("mart.orders", "order_id", "raw.orders", "id", "DIRECT") in edges()


# --- source 2: the columnLineage facet -----------------------------------------------------

def test_column_lineage_gives_direct_and_indirect_reads_including_the_dataset_level_list(client, lineage_secret):
    facet = column_lineage_facet(
        {"order_id": [input_field("raw.orders", "id", "DIRECT/IDENTITY")],
         "total": [input_field("raw.orders", "amount", "DIRECT/AGGREGATION"),
                   input_field("raw.orders", "status", "INDIRECT/CONDITIONAL")],
         "customer": [input_field("raw.customers", "name", "DIRECT/IDENTITY")]},
        dataset_level=[input_field("raw.orders", "customer_id", "INDIRECT/JOIN"),
                       input_field("raw.customers", "id", "INDIRECT/JOIN"),
                       input_field("raw.orders", "created_at", "INDIRECT/FILTER")])
    event = run_event("COMPLETE", inputs=["raw.orders", "raw.customers"], outputs=[dataset("mart.orders", columnLineage=facet)])
    assert post(client, event, lineage_secret).status_code == 201
    assert reads() == {
        ("raw.orders", "id", "DIRECT", "column_lineage"), ("raw.orders", "amount", "DIRECT", "column_lineage"),
        ("raw.orders", "status", "INDIRECT", "column_lineage"), ("raw.orders", "customer_id", "INDIRECT", "column_lineage"),
        ("raw.orders", "created_at", "INDIRECT", "column_lineage"),
        ("raw.customers", "name", "DIRECT", "column_lineage"), ("raw.customers", "id", "INDIRECT", "column_lineage"),
    }
    assert edges() == {("mart.orders", "order_id", "raw.orders", "id", "DIRECT"),
                       ("mart.orders", "total", "raw.orders", "amount", "DIRECT"),
                       ("mart.orders", "total", "raw.orders", "status", "INDIRECT"),
                       ("mart.orders", "customer", "raw.customers", "name", "DIRECT")}
    subtypes = set(FieldEdge.objects.values_list("input_field", "subtype"))
    assert ("amount", "AGGREGATION") in subtypes and ("id", "IDENTITY") in subtypes


def test_column_lineage_of_older_producers_keeps_its_field_level_transformation(client, lineage_secret):
    facet = column_lineage_facet({"email_hash": [input_field("raw.customers", "email")]})
    facet["fields"]["email_hash"].update(transformationType="MASKED", transformationDescription="sha256(email)")
    post(client, run_event("COMPLETE", inputs=["raw.customers"], outputs=[dataset("mart.customers", columnLineage=facet)]),
         lineage_secret)
    assert reads() == {("raw.customers", "email", "DIRECT", "column_lineage")}
    edge = FieldEdge.objects.get()
    assert (edge.subtype, edge.description, edge.masking) == ("MASKED", "sha256(email)", True)


def test_sql_adds_the_reads_a_column_lineage_facet_leaves_out(client, lineage_secret):
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT")]})
    query = "select o.id as order_id, c.segment from raw.orders o join raw.customers c on c.id = o.customer_id"
    event = run_event("COMPLETE", inputs=["raw.orders", "raw.customers"], outputs=[dataset("mart.orders", columnLineage=facet)],
                      job_facets={"sql": sql_facet(query)})
    post(client, event, lineage_secret)
    assert reads() == {("raw.orders", "id", "DIRECT", "column_lineage"), ("raw.orders", "customer_id", "INDIRECT", "sql"),
                       ("raw.customers", "segment", "DIRECT", "sql"), ("raw.customers", "id", "INDIRECT", "sql")}


def test_column_lineage_naming_a_cte_instead_of_a_dataset_is_not_evidence(client, lineage_secret):
    """dbt-ol names the CTE an output column came from (`orders`) as its input dataset."""
    facet = column_lineage_facet({"order_id": [input_field("orders", "id", "DIRECT")]})
    query = "with orders as (select id from raw.orders) select id as order_id from orders"
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=facet)],
                      job_facets={"sql": sql_facet(query)})
    post(client, event, lineage_secret)
    assert reads() == {("raw.orders", "id", "DIRECT", "sql")}
    assert edges() == {("mart.orders", "order_id", "raw.orders", "id", "DIRECT")}


# --- source 3: SQL -------------------------------------------------------------------------

def test_sql_with_joins_filters_and_grouping_reads_direct_and_indirect_columns(client, lineage_secret):
    query = """
        insert into mart.customer_totals (customer, total)
        select c.name, sum(o.amount)
        from raw.orders o
        join raw.customers c on c.id = o.customer_id
        where o.status = 'paid' and o.created_at >= current_date - 7
        group by c.name
        having count(*) > 2
        order by 2 desc
    """
    event = run_event("COMPLETE", inputs=["raw.orders", "raw.customers"], outputs=["mart.customer_totals"],
                      job_facets={"sql": sql_facet(query, "postgres")})
    assert post(client, event, lineage_secret).status_code == 201
    assert reads() == {
        ("raw.orders", "amount", "DIRECT", "sql"), ("raw.orders", "customer_id", "INDIRECT", "sql"),
        ("raw.orders", "status", "INDIRECT", "sql"), ("raw.orders", "created_at", "INDIRECT", "sql"),
        ("raw.customers", "name", "DIRECT", "sql"), ("raw.customers", "name", "INDIRECT", "sql"),
        ("raw.customers", "id", "INDIRECT", "sql"),
    }
    assert {e for e in edges() if e[4] == "DIRECT"} == {
        ("mart.customer_totals", "customer", "raw.customers", "name", "DIRECT"),
        ("mart.customer_totals", "total", "raw.orders", "amount", "DIRECT")}
    # The join keys, the filters and the group key change every result of the query.
    steering = set(FieldEdge.objects.filter(kind="INDIRECT").values_list("field", "input_field", "subtype"))
    assert steering == {(out, column, use) for out in ("customer", "total")
                        for column, use in (("id", "JOIN"), ("customer_id", "JOIN"), ("status", "FILTER"),
                                            ("created_at", "FILTER"), ("name", "GROUP_BY"))}


def test_window_partitions_and_case_conditions_are_indirect(client, lineage_secret):
    query = ("select id, case when status = 'paid' then amount else 0 end as paid, "
             "row_number() over (partition by customer_id order by created_at) as nth from raw.orders")
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"],
                           job_facets={"sql": sql_facet(query)}), lineage_secret)
    assert reads() == {("raw.orders", "id", "DIRECT", "sql"), ("raw.orders", "amount", "DIRECT", "sql"),
                       ("raw.orders", "status", "INDIRECT", "sql"), ("raw.orders", "customer_id", "INDIRECT", "sql"),
                       ("raw.orders", "created_at", "INDIRECT", "sql")}


STAGING_SQL = """
with source as (
    select * from raw.orders
),
paid as (
    select * from source where status = 'paid'
)
select * from paid
"""


def test_select_star_through_ctes_resolves_with_the_schema_a_previous_event_reported(client, lineage_secret):
    # The loader's run reported raw.orders' schema; the staging model selects * from it through CTEs.
    post(client, run_event("COMPLETE", job="load_orders", outputs=[dataset("raw.orders", schema=ORDERS_SCHEMA)]),
         lineage_secret)
    assert set(DatasetSchema.objects.get().fields) == {"id", "customer_id", "amount", "status", "created_at"}
    post(client, run_event("COMPLETE", job="stg_orders", inputs=["raw.orders"], outputs=["stage.orders"],
                           job_facets={"sql": sql_facet(STAGING_SQL)}), lineage_secret)
    assert reads("stg_orders") == {
        *{("raw.orders", c, "DIRECT", "sql") for c in ("id", "customer_id", "amount", "status", "created_at")},
        ("raw.orders", "status", "INDIRECT", "sql"),
    }
    assert ("stage.orders", "amount", "raw.orders", "amount", "DIRECT") in edges()


def test_select_star_over_a_table_of_unknown_schema_reads_all_or_unknown(client, lineage_secret):
    post(client, run_event("COMPLETE", job="stg_orders", inputs=["raw.orders"], outputs=["stage.orders"],
                           job_facets={"sql": sql_facet(STAGING_SQL)}), lineage_secret)
    assert reads() == {("raw.orders", "", "DIRECT", "sql"), ("raw.orders", "status", "INDIRECT", "sql")}
    reading = readings_of(Dataset.objects.filter(name="raw.orders").values_list("pk", flat=True))[0]
    assert reading.reads_everything


def test_the_schema_carried_by_the_event_itself_resolves_select_star(client, lineage_secret):
    event = run_event("COMPLETE", job="stg_orders", inputs=[dataset("raw.orders", schema=ORDERS_SCHEMA)],
                      outputs=["stage.orders"], job_facets={"sql": sql_facet(STAGING_SQL)})
    post(client, event, lineage_secret)
    assert ("raw.orders", "", "DIRECT", "sql") not in reads()
    assert ("raw.orders", "amount", "DIRECT", "sql") in reads()


DBT_STG_ORDERS = """
with source as (
    select * from DEMO_DB.public.raw_orders
),

renamed as (
    select
        id as order_id,
        user_id as customer_id,
        order_date,
        status
    from source
)

select * from renamed
"""


def test_dbt_seeds_missing_from_a_models_inputs_are_taken_from_its_sql(client, lineage_secret):
    # dbt-ol's event for jaffle_shop's stg_orders lists no inputs: the model reads a seed.
    event = shared_event("dbt__large-result__0f6304b__00.json")
    assert event["inputs"] == []
    event.update(eventType="COMPLETE")
    event["job"]["facets"] = {"sql": sql_facet(DBT_STG_ORDERS, "snowflake")}
    assert post(client, event, lineage_secret).status_code == 201
    namespace = "snowflake://ASDF1234.eu-central-1"
    seed = Dataset.objects.get(namespace=namespace, name="DEMO_DB.public.raw_orders")
    assert seed.owner_team is None
    assert AuditEvent.objects.filter(action="dataset.first_seen", object_id=str(seed.pk)).exists()
    assert JobDataset.objects.filter(dataset=seed, direction="in", job__name="DEMO_DB.public.jaffle_shop.stg_orders").exists()
    assert reads() == {("DEMO_DB.public.raw_orders", c, "DIRECT", "sql") for c in ("id", "user_id", "order_date", "status")}
    assert edges() == {("DEMO_DB.public.stg_orders", out, "DEMO_DB.public.raw_orders", col, "DIRECT")
                       for out, col in (("order_id", "id"), ("customer_id", "user_id"), ("order_date", "order_date"),
                                        ("status", "status"))}


def test_a_sql_table_named_without_database_or_schema_maps_to_the_outputs_ones(client, lineage_secret):
    event = run_event("COMPLETE", outputs=["analytics.public.orders_daily"],
                      job_facets={"sql": sql_facet("select order_date, count(*) as n from raw_orders group by order_date")})
    post(client, event, lineage_secret)
    assert reads() == {("analytics.public.raw_orders", "order_date", "DIRECT", "sql"),
                       ("analytics.public.raw_orders", "order_date", "INDIRECT", "sql")}


def test_a_sql_table_matches_an_existing_dataset_in_the_inputs_namespace(client, lineage_secret):
    elsewhere = "postgres://replica:5432"
    Dataset.objects.create(namespace=elsewhere, name="raw.refunds")
    event = run_event("COMPLETE", inputs=[dataset("raw.orders", namespace=elsewhere)], outputs=["mart.orders"],
                      job_facets={"sql": sql_facet("select o.id from raw.orders o where o.id not in (select order_id from raw.refunds)")})
    post(client, event, lineage_secret)
    assert set(ColumnRead.objects.values_list("dataset__namespace", "dataset__name", "column")) == {
        (elsewhere, "raw.orders", "id"), (elsewhere, "raw.refunds", "order_id")}
    assert not Dataset.objects.filter(namespace=WAREHOUSE, name="raw.refunds").exists()


def test_sql_that_does_not_parse_reads_all_or_unknown_and_the_event_is_stored(client, lineage_secret):
    event = shared_event("dbt__fail-result__e4b7b33__05.json")  # "… where id = 1 bork bork fail"
    # An old test event: its dataSource.uri "bigquery" is not a URI, which the facet's schema refuses.
    event["inputs"][0]["facets"]["dataSource"]["uri"] = "bigquery://random-gcp-project"
    response = post(client, event, lineage_secret)
    assert response.status_code == 201 and response.json()["status"] == "stored"
    assert reads() == {("random-gcp-project.dbt_test1.source_table", "", "DIRECT", "input")}


def test_sql_over_the_size_limit_is_not_parsed(client, lineage_secret, settings):
    settings.LINEAGE_SQL_MAX_BYTES = 100
    query = "select id from raw.orders where " + " or ".join(f"status = 's{i}'" for i in range(20))
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"],
                           job_facets={"sql": sql_facet(query)}), lineage_secret)
    assert reads() == {("raw.orders", "", "DIRECT", "input")}


def test_a_read_with_no_column_named_counts_as_all_or_unknown(client, lineage_secret):
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.counts"],
                           job_facets={"sql": sql_facet("select count(*) as n from raw.orders")}), lineage_secret)
    assert reads() == {("raw.orders", "", "INDIRECT", "sql")}


# --- evidence, ageing, attribution, retries ----------------------------------------------

def test_each_fact_keeps_its_evidence(client, lineage_secret, owner_team):
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"], event_time="2026-11-30T01:02:03Z",
                      job_facets={"sql": sql_facet("select id from raw.orders")})
    post(client, event, lineage_secret)
    read = ColumnRead.objects.get()
    assert (read.job_namespace, read.job_name, read.source) == ("airflow", "etl.load_orders", "sql")
    assert str(read.run_uuid) == event["run"]["runId"]
    assert read.event_time.isoformat() == "2026-11-30T01:02:03+00:00"
    assert read.token_team == owner_team


def test_a_read_older_than_the_window_does_not_count(client, lineage_secret, settings):
    settings.COLUMN_USAGE_WINDOW = timedelta(days=30)
    post(client, run_event("COMPLETE", job="old_report", inputs=["raw.orders"], outputs=["mart.a"]), lineage_secret)
    post(client, run_event("COMPLETE", job="new_report", inputs=["raw.orders"], outputs=["mart.b"]), lineage_secret)
    ColumnRead.objects.filter(job_name="old_report").update(last_seen_at=timezone.now() - timedelta(days=31))
    raw = Dataset.objects.get(name="raw.orders")
    assert [r.job_name for r in readings_of([raw.pk])] == ["new_report"]


def test_a_team_token_attributes_the_reads_to_its_team(client, consumer_team):
    _, secret = ApiToken.issue("analytics-airflow", team=consumer_team)
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"]), secret)
    raw = Dataset.objects.get(name="raw.orders")
    assert readings_of([raw.pk])[0].team_id == consumer_team.pk


def test_a_person_token_attributes_the_reads_to_their_only_team(client, consumer, consumer_team):
    _, secret = ApiToken.issue("carol's laptop", user=consumer)
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"]), secret)
    assert ColumnRead.objects.get().token_team == consumer_team


def test_a_person_in_several_teams_attributes_no_team(client, owner, owner_team, other_team):
    from registry.models import Membership

    Membership.objects.create(team=other_team, user=owner)
    _, secret = ApiToken.issue("alice's laptop", user=owner)
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"]), secret)
    assert ColumnRead.objects.get().token_team is None


def test_a_batch_attributes_the_reads_to_the_tokens_team(client, lineage_secret, owner_team):
    post(client, [run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"])], lineage_secret,
         path="/api/v1/lineage/batch")
    assert ColumnRead.objects.get().token_team == owner_team


def test_a_retried_identical_event_stores_no_new_usage(client, lineage_secret):
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT")]})
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=facet)])
    post(client, event, lineage_secret)
    before = (list(ColumnRead.objects.values()), list(FieldEdge.objects.values()))
    assert post(client, event, lineage_secret).json()["status"] == "duplicate"
    assert (list(ColumnRead.objects.values()), list(FieldEdge.objects.values())) == before


def test_a_later_run_refreshes_the_evidence_once_the_refresh_interval_has_passed(lineage_secret):
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT")]})
    def event(): return run_event("COMPLETE", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=facet)])
    store_event(event())
    first = ColumnRead.objects.get()
    store_event(event())  # within the minute: the row stays as it was
    assert ColumnRead.objects.get().run_uuid == first.run_uuid
    ColumnRead.objects.update(last_seen_at=timezone.now() - timedelta(minutes=2))
    FieldEdge.objects.update(last_seen_at=timezone.now() - timedelta(minutes=2))
    later = event()
    store_event(later)
    read = ColumnRead.objects.get()
    assert str(read.run_uuid) == later["run"]["runId"] and read.last_seen_at > timezone.now() - timedelta(minutes=1)
    assert read.first_seen_at == first.first_seen_at
    assert FieldEdge.objects.get().last_seen_at > timezone.now() - timedelta(minutes=1)


def test_column_usage_costs_no_extra_statement(django_assert_num_queries, db):
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT")]},
                                 dataset_level=[input_field("raw.orders", "status", "INDIRECT")])
    rich = run_event("START", inputs=["raw.orders", "raw.customers"],
                     outputs=[dataset("mart.orders", columnLineage=facet, schema=ORDERS_SCHEMA)],
                     job_facets={"sql": sql_facet("select o.id from raw.orders o join raw.customers c on c.id = o.customer_id")})
    bare = run_event("START", outputs=["mart.orders"])
    store_event(dict(rich, run={"runId": "5f0c7a0e-8a4e-4a11-9f55-000000000001"}))  # the datasets exist now
    # START events, so freshness writes nothing of its own.
    # 1: savepoint, 2: raw event + existing datasets (and their stored schemas, for the SQL),
    # 3: job + run + both edge sets + column reads + field edges, 4: the schema (a statement
    # of its own, sent only when this process has not written it within the minute: in a
    # test the memory is never filled, as it is filled after commit), 5: release savepoint.
    with django_assert_num_queries(5):
        store_event(rich)
    with django_assert_num_queries(4):
        store_event(bare)
    assert ColumnRead.objects.filter(source="column_lineage").count() == 2
    assert ColumnRead.objects.filter(dataset__name="raw.customers", source="sql").exists()


def test_without_column_usage_the_ingest_records_none(client, lineage_secret, settings):
    settings.LINEAGE_COLUMN_USAGE = False
    post(client, run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"]), lineage_secret)
    assert not ColumnRead.objects.exists()
    assert JobDataset.objects.count() == 2


def test_every_variant_of_the_ingest_statement_stays_short_enough_for_psycopgs_parse_cache():
    from itertools import product

    from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH

    from lineage.ingest import _job_run_and_edges_sql, _schemas_statement

    # Past this length psycopg parses the statement's placeholders again on every
    # event, which cost the ingest more than the column usage itself.
    for variant in product((False, True), repeat=2):
        assert len(_job_run_and_edges_sql(*variant).encode()) <= MAX_CACHED_STATEMENT_LENGTH, variant
    for variant in ((True, False), (False, True), (True, True)):
        assert len(_schemas_statement(*variant).encode()) <= MAX_CACHED_STATEMENT_LENGTH, variant


def test_names_too_long_to_store_in_a_facet_never_refuse_the_event(client, lineage_secret):
    long = "x" * 501
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", long, "DIRECT"), input_field(long, "id", "DIRECT")],
                                  long: [input_field("raw.orders", "id", "DIRECT")]})
    event = run_event("COMPLETE", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=facet)],
                      job_facets={"sql": sql_facet(f"select id from raw.{long}")})
    assert post(client, event, lineage_secret).status_code == 201
    assert reads() == {("raw.orders", "", "DIRECT", "column_lineage"), ("raw.orders", "id", "DIRECT", "column_lineage")}
    assert edges() == set()  # each named a field or dataset too long to store


def test_a_writers_schema_replaces_the_stored_one_and_a_readers_only_fills_a_gap(lineage_secret):
    def stored() -> set[str]:
        return set(DatasetSchema.objects.get(dataset__name="raw.orders").fields)

    store_event(run_event("COMPLETE", job="reader", inputs=[dataset("raw.orders", schema=schema_facet(("id", "bigint")))],
                          outputs=["mart.a"]))
    assert stored() == {"id"}  # a gap: filled
    store_event(run_event("COMPLETE", job="loader", outputs=[dataset("raw.orders", schema=ORDERS_SCHEMA)]))
    assert stored() == {"id", "customer_id", "amount", "status", "created_at"}
    store_event(run_event("COMPLETE", job="reader", inputs=[dataset("raw.orders", schema=schema_facet(("id", "bigint")))],
                          outputs=["mart.a"]))
    assert stored() == {"id", "customer_id", "amount", "status", "created_at"}  # a reader's view does not replace it


def test_facts_this_process_committed_within_the_refresh_interval_are_not_sent_again(
        db, settings, django_assert_num_queries, django_capture_on_commit_callbacks):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.LINEAGE_PREPARED_STATEMENTS = False  # so that the statements' text is logged
    facet = column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT")]})
    def event(): return run_event("START", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=facet, schema=ORDERS_SCHEMA)])
    with django_capture_on_commit_callbacks(execute=True):
        store_event(event())
    with CaptureQueriesContext(connection) as queries:
        store_event(event())
    job_statement = next(q["sql"] for q in queries.captured_queries if "INSERT INTO lineage_job" in q["sql"])
    assert "registry_columnread" not in job_statement and "lineage_fieldedge" not in job_statement
    assert "lineage_datasetschema" not in job_statement
    # A fact it has not written is sent, alone.
    with CaptureQueriesContext(connection) as queries:
        store_event(run_event("START", inputs=["raw.orders", "raw.customers"], outputs=[dataset("mart.orders", columnLineage=facet)]))
    job_statement = next(q["sql"] for q in queries.captured_queries if "INSERT INTO lineage_job" in q["sql"])
    assert "registry_columnread" in job_statement and "lineage_fieldedge" not in job_statement
    assert ColumnRead.objects.filter(dataset__name="raw.customers", column="").exists()


def test_a_rolled_back_event_leaves_its_facts_to_the_next_one(db, django_capture_on_commit_callbacks):
    from django.db import transaction

    from lineage.ingest import RECENT_USAGE

    event = run_event("START", inputs=["raw.orders"], outputs=["mart.orders"])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                store_event(event)
                raise RuntimeError("the request failed after storing")
        except RuntimeError:
            pass
    assert not callbacks and not RECENT_USAGE.facts
    store_event(event)
    assert ColumnRead.objects.count() == 1


def test_the_recently_written_facts_stay_bounded():
    from lineage.column_usage import ColumnReadRow, RecentlyWritten, UsageRows

    recent = RecentlyWritten(refresh=60, size=100)
    for i in range(1000):
        _, remember = recent.to_write(UsageRows(column_reads=[ColumnReadRow(i, "", "DIRECT", "input")]), ("airflow", "job"))
        remember()
    assert len(recent.facts) <= 100
    fresh, remember = recent.to_write(UsageRows(column_reads=[ColumnReadRow(999, "", "DIRECT", "input")]), ("airflow", "job"))
    assert not fresh.column_reads and remember is None  # the newest are the ones kept


def test_a_job_saying_the_same_again_keeps_the_inputs_only_its_sql_names(client, lineage_secret,
                                                                        django_capture_on_commit_callbacks):
    # The second run's event is not read for usage (its facts are all fresh), yet its
    # run still reads the seed that only the SQL names.
    from lineage.ingest import RECENT_USAGE
    from lineage.models import RunDataset

    event = shared_event("dbt__large-result__0f6304b__00.json")
    event.update(eventType="COMPLETE")
    event["job"]["facets"] = {"sql": sql_facet(DBT_STG_ORDERS, "snowflake")}
    again = {**event, "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943cd7e2fd"}}
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, event, lineage_secret).status_code == 201
    [(_, _, inputs)] = RECENT_USAGE.events.values()
    assert ("snowflake://ASDF1234.eu-central-1", "DEMO_DB.public.raw_orders") in inputs
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert post(client, again, lineage_secret).status_code == 201
    assert not callbacks  # nothing to remember: the event was not read for usage
    seed = Dataset.objects.get(name="DEMO_DB.public.raw_orders")
    assert set(RunDataset.objects.filter(dataset=seed, direction="in").values_list("run__run_uuid", flat=True)) == {
        uuid.UUID(event["run"]["runId"]), uuid.UUID(again["run"]["runId"])}
    assert ColumnRead.objects.filter(dataset=seed).count() == 4


def test_an_event_saying_something_new_within_the_refresh_is_read_again(client, lineage_secret,
                                                                       django_capture_on_commit_callbacks):
    first = run_event("START", inputs=["raw.orders"], outputs=[dataset("mart.orders", columnLineage=column_lineage_facet(
        {"id": [input_field("raw.orders", "id")]}))])
    changed = run_event("COMPLETE", run_id=first["run"]["runId"], inputs=["raw.orders"], outputs=[dataset(
        "mart.orders", columnLineage=column_lineage_facet({"id": [input_field("raw.orders", "id")],
                                                            "amount": [input_field("raw.orders", "amount")]}))])
    with django_capture_on_commit_callbacks(execute=True):
        post(client, first, lineage_secret)
        post(client, changed, lineage_secret)
    assert {column for _, column, _, _ in reads()} == {"id", "amount"}


def test_a_repeated_event_is_skipped_only_until_its_oldest_fact_is_due():
    from lineage.column_usage import ColumnReadRow, RecentlyWritten, UsageRows

    recent = RecentlyWritten(refresh=0.3)
    job, old_read = ("airflow", "job"), ColumnReadRow(1, "id", "DIRECT", "sql")
    recent.to_write(UsageRows(column_reads=[old_read]), job)[1]()
    time.sleep(0.2)
    rows = UsageRows(column_reads=[old_read, ColumnReadRow(1, "amount", "DIRECT", "sql")], inputs=[("wh", "orders")])
    fresh, remember = recent.to_write(rows, job, ["what it said"])
    assert [r.column for r in fresh.column_reads] == ["amount"]
    remember()
    assert recent.repeated(job, ["what it said"]) == (("wh", "orders"),)
    assert recent.repeated(job, ["something else"]) is None
    assert recent.repeated(("airflow", "other"), ["what it said"]) is None
    time.sleep(0.15)  # `id` is due again, though `amount` is not
    assert recent.repeated(job, ["what it said"]) is None


def test_what_an_event_says_for_usage_changes_with_what_usage_is_read_from_only():
    from lineage.column_usage import usage_said
    from lineage.ingest import ParsedEvent

    base = run_event("START", inputs=["raw.orders"], outputs=["mart.orders"], job_facets={"sql": sql_facet("select 1")})
    same = {**run_event("COMPLETE", inputs=["raw.orders"], outputs=["mart.orders"], row_count=5,
                        event_time="2026-12-01T00:00:00Z", job_facets={"sql": sql_facet("select 1")})}
    other_sql = run_event("START", inputs=["raw.orders"], outputs=["mart.orders"], job_facets={"sql": sql_facet("select 2")})
    other_input = run_event("START", inputs=["raw.items"], outputs=["mart.orders"], job_facets={"sql": sql_facet("select 1")})
    with_schema = run_event("START", inputs=[dataset("raw.orders", schema=ORDERS_SCHEMA)], outputs=["mart.orders"],
                            job_facets={"sql": sql_facet("select 1")})
    said = [usage_said(ParsedEvent.of(e)) for e in (base, same, other_sql, other_input, with_schema)]
    assert said[0] == said[1]
    assert all(a != b for i, a in enumerate(said[1:]) for b in said[i + 2:]) and said[0] not in said[2:]


def test_sql_field_edges_say_how_and_whether_select_star_alone_passes_a_column_on(client, lineage_secret):
    post(client, run_event("COMPLETE", job="load_orders", outputs=[dataset("raw.orders", schema=ORDERS_SCHEMA)]),
         lineage_secret)
    post(client, run_event("COMPLETE", job="stg_orders", inputs=["raw.orders"], outputs=["stage.orders"],
                           job_facets={"sql": sql_facet(STAGING_SQL)}), lineage_secret)
    post(client, run_event("COMPLETE", job="totals", inputs=["stage.orders"], outputs=["mart.totals"],
                           job_facets={"sql": sql_facet("select customer_id, sum(amount) as total "
                                                        "from stage.orders group by customer_id")}), lineage_secret)
    how = {(e.dataset.name, e.field, e.input_field): (e.subtype, e.through_star)
           for e in FieldEdge.objects.select_related("dataset").filter(kind="DIRECT")}
    assert how[("stage.orders", "amount", "amount")] == ("IDENTITY", True)
    assert how[("mart.totals", "customer_id", "customer_id")] == ("IDENTITY", False)
    assert how[("mart.totals", "total", "amount")] == ("AGGREGATION", False)
