"""Demo lineage for `manage.py load_demo`: the retailer's and the lab's
pipelines as OpenLineage RunEvents, stored through the same path as the API.

The runs happened in the hour and a half before the demo was first loaded, ten
minutes apart, one still going; a later load places them from the runs it
finds, so with fixed run ids it stores nothing new."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from lineage.ingest import store_event
from lineage.models import Run
from registry.hooks import demo_step
from registry.ownership import save_ownership_rules, team_names, team_of_owner

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/integration/airflow"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"}
STATS = {"_producer": PRODUCER,
         "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json"}
RETAIL = "postgres://retail-db:5432"
LAKE = "s3://retail-lake"
LAB = "s3://lab-lake"

# job namespace, job name, inputs, outputs (with optional schema fields), final state
PIPELINES = [
    ("airflow", "finance.daily_revenue",
     [(RETAIL, "retail.public.orders"), (RETAIL, "retail.public.payments"), (RETAIL, "retail.public.refunds")],
     [(LAKE, "gold/daily_revenue", [("day", "date"), ("channel", "varchar"), ("revenue", "decimal(12,2)")])],
     "COMPLETE"),
    ("airflow", "analytics.customer_orders",
     [(RETAIL, "retail.public.orders"), (RETAIL, "retail.public.order_lines"), (RETAIL, "retail.public.customers")],
     [(LAKE, "silver/customer_orders", [("customer_id", "bigint"), ("order_id", "bigint"), ("total", "double")])],
     "COMPLETE"),
    ("spark", "analytics.clickstream_sessions", [(LAKE, "raw/clickstream")],
     [(LAKE, "silver/sessions", [("session_id", "string"), ("customer_id", "long"), ("pages", "int")])], "COMPLETE"),
    ("airflow", "analytics.conversion_funnel", [(LAKE, "silver/sessions"), (LAKE, "silver/customer_orders")],
     [(LAKE, "gold/conversion_funnel", None)], "FAIL"),
    ("airflow", "logistics.fulfilment", [(RETAIL, "retail.public.orders"), (RETAIL, "retail.public.inventory")],
     [(RETAIL, "retail.public.shipments", None)], "COMPLETE"),
    ("airflow", "checkout.returns_sync", [(RETAIL, "retail.public.shipments")],
     [(RETAIL, "retail.public.returns", None)], "RUNNING"),
    # Matches its contract (lab.analytics.cell_count 1.0).
    ("airflow", "lab.plate_reader_ingest", [(LAB, "instruments/plate_reader")],
     [(LAB, "lims/cell_count", [("run_row_id", "VARCHAR(64)"), ("sample_id", "VARCHAR(32)"), ("vcd", "DOUBLE"),
                                ("viability", "DOUBLE"), ("run_date", "TIMESTAMP")])], "COMPLETE"),
    # Drifts from lab.upstream.bioreactor_run 1.0: no passed_qc, a wider
    # working_volume_l, and an operator column the contract filters out.
    ("airflow", "lab.bioprocess_summary", [(LAB, "lims/cell_count")],
     [(LAB, "bioprocess/bioreactor_run", [
         ("run_row_id", "VARCHAR"), ("sample_id", "VARCHAR"), ("bioreactor_id", "VARCHAR"), ("started_at", "TIMESTAMP"),
         ("ended_at", "TIMESTAMP"), ("working_volume_l", "DOUBLE"), ("ph_setpoint", "REAL"), ("temperature_c", "DOUBLE"),
         ("feed_events", "ARRAY<VARCHAR>"), ("operator", "VARCHAR")])], "COMPLETE"),
]

# Pipeline i starts RUN_GAP * i after the first and ends RUN_LENGTH later; the first
# started FIRST_RUN_BEFORE the moment of loading, the last ended three minutes before it.
RUN_GAP, RUN_LENGTH = timedelta(minutes=10), timedelta(minutes=7)
FIRST_RUN_BEFORE = RUN_GAP * len(PIPELINES)

# The SQL two of the retailer's jobs run (an `sql` job facet): column usage reads it.
SQL = {
    "finance.daily_revenue": """
        select date_trunc('day', o.created_at) as day, o.channel,
               sum(p.amount) - coalesce(sum(r.amount), 0) as revenue
        from retail.public.orders o
        join retail.public.payments p on p.order_id = o.id
        left join retail.public.refunds r on r.order_id = o.id
        where o.status = 'paid'
        group by 1, 2""",
    "analytics.customer_orders": """
        with lines as (
            select order_id, sum(quantity * unit_price) as total from retail.public.order_lines group by order_id
        )
        select c.id as customer_id, o.id as order_id, l.total
        from retail.public.orders o
        join retail.public.customers c on c.id = o.customer_id
        join lines l on l.order_id = o.id""",
}
SQL_FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json"}


def demo_run_id(job_namespace: str, job_name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"demo-run:{job_namespace}:{job_name}"))


def demo_loaded_at() -> datetime:
    """The moment the demo lineage was first loaded: read back from its first run's
    start when it is stored, else now (to the second, so it reads back exactly)."""
    job_ns, job_name = PIPELINES[0][:2]
    started = Run.objects.filter(run_uuid=demo_run_id(job_ns, job_name)).values_list("started_at", flat=True).first()
    if started is not None:
        return started + FIRST_RUN_BEFORE
    return timezone.now().replace(microsecond=0)


def demo_events(loaded_at: datetime | None = None) -> list[dict]:
    """The demo's RunEvents, timed before `loaded_at` (default: now)."""
    loaded_at = loaded_at or timezone.now().replace(microsecond=0)
    events = []
    for i, (job_ns, job_name, inputs, outputs, final) in enumerate(PIPELINES):
        run_id = demo_run_id(job_ns, job_name)
        started = loaded_at - FIRST_RUN_BEFORE + RUN_GAP * i
        for state, at in (("START", started), (final, started + RUN_LENGTH)):
            outs = []
            for ns, name, fields in outputs:
                out = {"namespace": ns, "name": name}
                if fields:
                    out["facets"] = {"schema": {**FACET, "fields": [{"name": n, "type": t} for n, t in fields]}}
                if state == "COMPLETE":
                    out["outputFacets"] = {"outputStatistics": {**STATS, "rowCount": 1000 + 137 * i}}
                outs.append(out)
            job = {"namespace": job_ns, "name": job_name}
            if job_name in SQL:
                job["facets"] = {"sql": {**SQL_FACET, "query": SQL[job_name], "dialect": "postgres"}}
            events.append({
                "eventType": state, "eventTime": at.isoformat().replace("+00:00", "Z"), "producer": PRODUCER,
                "schemaURL": SCHEMA_URL, "run": {"runId": run_id}, "job": job,
                "inputs": [{"namespace": ns, "name": name} for ns, name in inputs], "outputs": outs,
            })
    return events


# The retailer's dbt tests of retail.public.orders, as dbt-ol reports them: a TEST job reading
# the model, its assertions on the input. An earlier run passed every test; the latest failed
# not_null on customer_id. Its contract (retail.sales.orders) declares these checks, so the
# incidents app judges the results as it would a real pipeline's: an incident opens and
# reaches the team whose job reads customer_id.
DBT_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"
DBT_TEST_JOB = "retail_dbt.retail.public.orders.test"
REGEX, LENGTH = "dbt_expectations.expect_column_values_to_match_regex", (
    "dbt_expectations.expect_column_value_lengths_to_be_between")
ORDERS_TESTS = [
    ("order_id", "not_null"), ("order_id", "unique"), ("order_id", REGEX), ("customer_id", "not_null"),
    ("customer_id", LENGTH), ("ordered_at", "not_null"), ("status", "not_null"), ("status", "accepted_values"),
    ("channel", "not_null"), ("channel", "accepted_values"), ("currency", "not_null"),
    ("currency", "accepted_values"), ("total_amount_minor", "not_null"),
    ("total_amount_minor", "dbt_utils.accepted_range"), ("item_count", "not_null"),
    ("item_count", "dbt_utils.accepted_range"), ("coupon_code", LENGTH), ("gift_message", LENGTH),
]
ORDERS_FAILING = ("customer_id", "not_null")


def demo_test_events(loaded_at: datetime) -> list[dict]:
    """The two dbt test runs of retail.public.orders, timed before `loaded_at`."""
    events = []
    # Both within the demo's last hour and a half, as its pipelines' runs are.
    for label, at, failing in (("earlier", loaded_at - timedelta(minutes=75), None),
                               ("latest", loaded_at - timedelta(minutes=4), ORDERS_FAILING)):
        assertions = [{"assertion": kind, "column": column, "name": f"{kind.rsplit('.', 1)[-1]}_orders_{column}",
                       "success": (column, kind) != failing,
                       **({"actual": "14", "expected": "0"} if (column, kind) == failing else {})}
                      for column, kind in ORDERS_TESTS]
        events.append({
            "eventType": "COMPLETE", "eventTime": at.isoformat().replace("+00:00", "Z"), "producer": DBT_PRODUCER,
            "schemaURL": SCHEMA_URL, "run": {"runId": demo_run_id("dbt", f"{DBT_TEST_JOB}:{label}")},
            "job": {"namespace": "dbt", "name": DBT_TEST_JOB},
            "inputs": [{"namespace": RETAIL, "name": "retail.public.orders", "inputFacets": {"dataQualityAssertions": {
                "_producer": DBT_PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json",
                "assertions": assertions}}}],
            "outputs": []})
    return events


# Whose job each demo pipeline is, said as an organisation says it: a rules file
# (docs/job-ownership.md), so routing by column asks the team whose job reads a
# touched column and tells the others. The Spark job is left for its team to claim
# on its page ("This job is ours").
DEMO_OWNERSHIP_RULES = """\
# The demo's Airflow jobs belong to the team their name starts with.
ns:airflow job:finance.*      @finance
ns:airflow job:analytics.*    @analytics
ns:airflow job:logistics.*    @logistics
ns:airflow job:checkout.*     @checkout
ns:airflow job:lab.*          @lab-data
# The dbt tests of the retailer's models are checkout's.
ns:dbt job:retail_dbt.*       @checkout
"""


def demo_ownership_rules() -> str:
    """The demo's rules naming only the teams there are: `load_demo` adds the demo teams
    before this step, but the lineage step also loads alone, where a rule naming a
    missing team would refuse the whole file."""
    names = team_names()
    return "".join(line for line in DEMO_OWNERSHIP_RULES.splitlines(keepends=True)
                   if "@" not in line or team_of_owner(line.split("@", 1)[1].split()[0], names) is not None)


def load_demo_ownership_rules() -> int | None:
    """The demo's rules, saved by its governance admin (audited; the same text again is no new
    version); None when none of the demo's teams is there, so there is nothing to say."""
    text = demo_ownership_rules()
    if "@" not in text:
        return None
    gina = get_user_model().objects.filter(username="gina").first()
    return save_ownership_rules(text, by=gina, note="The demo's pipelines and their teams").version


# After the contracts' step (40), so runs of bound datasets get their drift checks.
@demo_step("lineage (OpenLineage runs of the retailer's and the lab's pipelines)", order=60)
def load_lineage_demo(stdout=None) -> None:
    version = load_demo_ownership_rules()
    loaded_at = demo_loaded_at()
    results = [store_event(event, by="demo") for event in demo_events(loaded_at) + demo_test_events(loaded_at)]
    stored = sum(r.stored for r in results)
    if stdout is not None:
        rules = f"ownership rules v{version}" if version is not None else "no ownership rules (no demo teams)"
        stdout.write(f"  {rules}; {stored} events stored ({len(results) - stored} already there), "
                     f"{sum(r.datasets_created for r in results)} datasets first seen")
