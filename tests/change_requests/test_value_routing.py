"""Who a value change breaks: data-quality checks read the columns they check, and a
changed column's values are followed through the SQL of every job that uses them —
along the values (DIRECT) and through the joins, groups, filters and windows that
change results (INDIRECT) — until an expression provably absorbs the change. Every
step keeps the SQL that justified it.

The facts come from real OpenLineage events stored by the ingest (lineage.ingest),
and the routing is the product's own preview (change_requests.impact.preview_change)."""

from __future__ import annotations

import pytest
from django.db.models import F

from change_requests.impact import preview_change
from lineage.ingest import store_event
from lineage.models import FieldEdge
from registry.models import Consumer, Dataset
from registry.usage import ColumnRead, Effect, NamespaceTeam, UsageKind, UsageSource
from tests.lineage.conftest import PRODUCER, WAREHOUSE, dataset, run_event, schema_facet, sql_facet

pytestmark = pytest.mark.django_db

ORDERS = "wh.sales.orders"
PAYMENTS = "wh.finance.payments"
CUSTOMERS = "wh.platform.customers"


@pytest.fixture(autouse=True)
def _fresh_usage_caches():
    from lineage.facets import RECENT_FACETS
    from lineage.ingest import RECENT_USAGE
    from lineage.sql_usage import clear_caches

    RECENT_USAGE.clear()
    RECENT_FACETS.clear()
    clear_caches()
    yield
    RECENT_USAGE.clear()
    RECENT_FACETS.clear()


@pytest.fixture
def teams(owner_team, consumer_team, other_team):
    """Checkout's jobs run in namespace `checkout`, Analytics' in `analytics`, Warehouse's in `warehouse`."""
    for team in (owner_team, consumer_team, other_team):
        NamespaceTeam.objects.create(namespace=team.slug, team=team)
    return {"checkout": owner_team, "analytics": consumer_team, "warehouse": other_team}


def table(name: str, *columns: tuple[str, str]) -> dict:
    return dataset(name, schema=schema_facet(*columns))


ORDERS_TABLE = (("order_id", "bigint"), ("customer_id", "bigint"), ("status", "text"), ("region", "text"),
                ("amount", "numeric"), ("coupon", "text"), ("note", "text"), ("created_at", "timestamp"))
PAYMENTS_TABLE = (("payment_id", "bigint"), ("order_id", "bigint"), ("paid", "numeric"))


def model(team: str, name: str, query: str, inputs: dict[str, tuple], output_columns: tuple) -> None:
    """`team`'s job `name` wrote wh.<team>.<name> with `query` (its compiled SQL) from `inputs`."""
    store_event(run_event("COMPLETE", job=name, job_namespace=team,
                          inputs=[table(n, *cols) for n, cols in inputs.items()],
                          outputs=[table(f"wh.{team}.{name}", *output_columns)],
                          job_facets={"sql": sql_facet(query, "postgres")}))


def check(team: str, name: str, on: str, *assertions: tuple[str, str], query: str | None = None,
          reads: tuple[str, ...] = (), metrics: dict | None = None) -> None:
    """`team`'s dbt test job `name`: assertions (assertion, column) on `on`, as dbt-ol reports them."""
    facets = {}
    if assertions:
        facets["dataQualityAssertions"] = {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json",
            # A column-less assertion is a test of the whole dataset (dbt-ol: a singular test, by name).
            "assertions": [{"assertion": a, "column": c, "success": True} if c else
                           {"assertion": a, "name": a, "success": True} for a, c in assertions]}
    if metrics is not None:
        facets["dataQualityMetrics"] = {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/DataQualityMetricsInputDatasetFacet.json",
            "rowCount": 10, "columnMetrics": metrics}
    tested = {"namespace": WAREHOUSE, "name": on, "inputFacets": facets}
    store_event(run_event("COMPLETE", job=name, job_namespace=team,
                          inputs=[tested, *(dataset(n) for n in reads)],
                          job_facets={"sql": sql_facet(query, "postgres")} if query else None))


def named(name: str) -> Dataset:
    return Dataset.objects.get(namespace=WAREHOUSE, name=name)


def owned(name: str, team) -> Dataset:
    found = named(name)
    Dataset.objects.filter(pk=found.pk).update(owner_team=team)
    found.refresh_from_db()
    return found


def consumes(team, *names: str) -> None:
    for name in names:
        Consumer.objects.create(dataset=named(name), team=team)


def asked(answer: dict) -> list[str]:
    return sorted(t["team"] for t in answer["affected"])


def told(answer: dict) -> dict[str, str]:
    return {t["team"]: t["why"] for t in answer["not_affected"]}


def why(answer: dict, team: str) -> str:
    return next(t["why"] for t in answer["affected"] if t["team"] == team)


# --- data-quality checks are readers ----------------------------------------------------

def test_a_generic_test_reads_the_columns_its_assertions_name(teams):
    store_event(run_event("COMPLETE", job="orders_load", job_namespace="checkout", outputs=[table(ORDERS, *ORDERS_TABLE)]))
    check("analytics", "orders.test", ORDERS, ("not_null", "customer_id"), ("accepted_values", "status"))
    assert set(ColumnRead.objects.filter(job_name="orders.test").values_list("column", "kind", "source")) == {
        ("customer_id", UsageKind.INDIRECT, UsageSource.QUALITY_CHECK),
        ("status", UsageKind.INDIRECT, UsageSource.QUALITY_CHECK)}
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], ORDERS)
    assert asked(preview_change(orders, ["status"], effect=Effect.VALUES)) == ["analytics"]
    # What the checks do not read does not concern the team that owns them.
    assert "analytics" in told(preview_change(orders, ["note"], effect=Effect.NULLS))


def test_data_quality_metrics_read_the_columns_they_measure(teams):
    check("analytics", "orders_profile", ORDERS, metrics={"coupon": {"nullCount": 3}, "amount": {"nullCount": 0}})
    assert set(ColumnRead.objects.filter(job_name="orders_profile").values_list("column", "source")) == {
        ("coupon", UsageSource.QUALITY_CHECK), ("amount", UsageSource.QUALITY_CHECK)}


def test_a_relationships_test_reads_the_other_teams_model_through_its_compiled_sql(teams):
    """Analytics' relationships test on its own segments model checks customer ids
    against Checkout's customers: a model Analytics' jobs never read."""
    store_event(run_event("COMPLETE", job="customers", job_namespace="checkout",
                          outputs=[table(CUSTOMERS, ("customer_id", "bigint"), ("email", "text"))]))
    store_event(run_event("COMPLETE", job="segments", job_namespace="analytics",
                          outputs=[table("wh.analytics.segments", ("customer_id", "bigint"), ("segment", "text"))]))
    relationships = ("with child as (select customer_id as from_field from wh.analytics.segments "
                     "where customer_id is not null), parent as (select customer_id as to_field from wh.platform.customers) "
                     "select from_field from child left join parent on child.from_field = parent.to_field "
                     "where parent.to_field is null")
    check("analytics", "segments.test", "wh.analytics.segments", ("relationships", "customer_id"),
          query=relationships, reads=(CUSTOMERS,))
    customers = owned(CUSTOMERS, teams["checkout"])
    assert ColumnRead.objects.filter(dataset=customers, job_name="segments.test", column="customer_id").exists()
    consumes(teams["analytics"], CUSTOMERS)
    answer = preview_change(customers, ["customer_id"], effect=Effect.VALUES)
    assert asked(answer) == ["analytics"]
    assert "analytics/segments.test" in [job["job"] for job in answer["affected"][0]["jobs"]]
    assert "analytics" in told(preview_change(customers, ["email"], effect=Effect.VALUES))


def test_a_singular_test_reads_every_model_it_selects_from(teams):
    store_event(run_event("COMPLETE", job="orders_load", job_namespace="checkout", outputs=[table(ORDERS, *ORDERS_TABLE)]))
    store_event(run_event("COMPLETE", job="payments_load", job_namespace="warehouse",
                          outputs=[table(PAYMENTS, *PAYMENTS_TABLE)]))
    singular = ("select o.order_id from wh.sales.orders as o left join wh.finance.payments as p "
                "on p.order_id = o.order_id where o.status = 'completed' and p.payment_id is null")
    check("analytics", "every_completed_order_is_paid", ORDERS, query=singular, reads=(PAYMENTS,))
    stored = set(ColumnRead.objects.filter(job_name="every_completed_order_is_paid")
                 .values_list("dataset__name", "column"))
    assert {(ORDERS, "order_id"), (ORDERS, "status"), (PAYMENTS, "order_id"), (PAYMENTS, "payment_id")} <= stored
    payments = owned(PAYMENTS, teams["warehouse"])
    consumes(teams["analytics"], PAYMENTS)
    assert asked(preview_change(payments, ["order_id"], effect=Effect.NULLS)) == ["analytics"]


def test_a_singular_test_reported_as_its_own_job_is_judged_there_not_in_the_model_check_it_is_attached_to(teams):
    """dbt-ol attaches a singular test's result, with no column, to the test job of one model it
    reads (Analytics' `orders.test` here), and reports the test again as its own job
    `test.<project>.<name>` (Warehouse's). That job answers for the test; Analytics' check job
    answers only for its column assertions, which narrowed values cannot fail."""
    store_event(run_event("COMPLETE", job="orders_load", job_namespace="checkout", outputs=[table(ORDERS, *ORDERS_TABLE)]))
    check("analytics", "orders.test", ORDERS, ("not_null", "status"), ("every_order_is_paid", None))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], ORDERS)
    # Alone, a column-less assertion may notice anything of the dataset: Analytics is asked.
    assert asked(preview_change(orders, ["status"], effect=Effect.NARROWED)) == ["analytics"]
    store_event(run_event("COMPLETE", job="test.shop.every_order_is_paid", job_namespace="warehouse",
                          inputs=[dataset(ORDERS)]))
    consumes(teams["warehouse"], ORDERS)
    answer = preview_change(orders, ["status"], effect=Effect.NARROWED)
    assert asked(answer) == ["warehouse"]
    assert "warehouse/test.shop.every_order_is_paid reads all columns" in why(answer, "warehouse")
    assert told(answer)["analytics"].endswith(
        "analytics/orders.test checks status only by not_null, which narrowed values cannot fail "
        "(every_order_is_paid, with no column, is answered for by its own test job)")


# --- values followed through INDIRECT uses -------------------------------------------------

def downstream_reader(team: str, source: str, columns: tuple[str, ...]) -> None:
    """`team` reads `columns` of `source` in a model of its own."""
    model(team, f"{source.rsplit('.', 1)[-1]}_report", f"select {', '.join(columns)} from {source}",
          {source: tuple((c, "numeric") for c in columns)}, tuple((c, "numeric") for c in columns))


def test_a_null_join_key_reaches_every_result_of_the_join_and_the_team_checking_them(teams):
    """Warehouse joins payments to orders on order_id and passes only `paid` on; Analytics
    checks that `paid` is never NULL. NULL payment order ids leave orders unpaid: Analytics
    is asked; Warehouse, whose join only carries the change on, is told the path."""
    model("warehouse", "order_payments",
          "select o.order_id, p.paid from wh.sales.orders as o left join wh.finance.payments as p "
          "on p.order_id = o.order_id",
          {ORDERS: ORDERS_TABLE, PAYMENTS: PAYMENTS_TABLE}, (("order_id", "bigint"), ("paid", "numeric")))
    check("analytics", "order_payments.test", "wh.warehouse.order_payments", ("not_null", "paid"))
    edge = FieldEdge.objects.get(input_dataset__name=PAYMENTS, input_field="order_id", field="paid")
    assert (edge.kind, edge.subtype) == (UsageKind.INDIRECT, "JOIN")
    assert edge.description == "p.order_id = o.order_id"  # the clause that justifies the step
    payments = owned(PAYMENTS, teams["checkout"])
    consumes(teams["warehouse"], PAYMENTS)
    consumes(teams["analytics"], "wh.warehouse.order_payments")
    answer = preview_change(payments, ["order_id"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    assert "indirect JOIN in warehouse/order_payments (`p.order_id = o.order_id`)" in why(answer, "analytics")
    [hit] = [j for j in answer["affected"][0]["jobs"] if j["job"] == "analytics/order_payments.test"]
    assert hit["reached_by"][0]["path"][0]["fragment"] == "p.order_id = o.order_id"
    assert told(answer)["warehouse"] == (
        "the changed values reach it but nothing of it would notice them on postgres://warehouse:5432/wh.finance.payments: "
        "warehouse/order_payments carries order_id on as join key into wh.warehouse.order_payments "
        "(`p.order_id = o.order_id`); no check or expression of its own depends on them")


def test_a_removed_join_key_fails_the_joining_job_and_goes_no_further(teams):
    model("warehouse", "order_payments",
          "select o.order_id, p.paid from wh.sales.orders as o left join wh.finance.payments as p "
          "on p.order_id = o.order_id",
          {ORDERS: ORDERS_TABLE, PAYMENTS: PAYMENTS_TABLE}, (("order_id", "bigint"), ("paid", "numeric")))
    downstream_reader("analytics", "wh.warehouse.order_payments", ("paid",))
    payments = owned(PAYMENTS, teams["checkout"])
    consumes(teams["warehouse"], PAYMENTS)
    consumes(teams["analytics"], "wh.warehouse.order_payments")
    assert asked(preview_change(payments, ["order_id"], effect=Effect.REMOVED)) == ["warehouse"]


def test_a_group_key_reaches_the_aggregates_it_groups(teams):
    model("warehouse", "revenue_by_region", "select sum(amount) as revenue from wh.sales.orders group by region",
          {ORDERS: ORDERS_TABLE}, (("revenue", "numeric"),))
    check("analytics", "revenue_by_region.test", "wh.warehouse.revenue_by_region", ("unique", "revenue"))
    edge = FieldEdge.objects.get(input_field="region", field="revenue")
    assert (edge.kind, edge.subtype, edge.description) == (UsageKind.INDIRECT, "GROUP_BY", "GROUP BY region")
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.revenue_by_region")
    answer = preview_change(orders, ["region"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    assert "indirect GROUP_BY" in why(answer, "analytics") and "`GROUP BY region`" in why(answer, "analytics")
    assert "carries region on as group by key into wh.warehouse.revenue_by_region" in told(answer)["warehouse"]


def test_nulls_in_a_group_key_cannot_fail_a_not_null_check_of_the_aggregates(teams):
    """Rows regrouped give other sums, never a NULL one: a `not_null` check of the sums cannot fail."""
    model("warehouse", "revenue_by_region", "select sum(amount) as revenue from wh.sales.orders group by region",
          {ORDERS: ORDERS_TABLE}, (("revenue", "numeric"),))
    check("analytics", "revenue_by_region.test", "wh.warehouse.revenue_by_region", ("not_null", "revenue"))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.revenue_by_region")
    answer = preview_change(orders, ["region"], effect=Effect.NULLS)
    assert asked(answer) == []
    assert "analytics/revenue_by_region.test checks revenue only by not_null, which new values cannot fail" in \
        told(answer)["analytics"]


def test_a_filter_reaches_the_results_it_keeps_rows_of(teams):
    """An enum narrowed (no more 'paid' orders, say) changes what the filter keeps, and the
    filter names a value: Warehouse is asked. Analytics' report only carries the sums on."""
    model("warehouse", "paid_revenue", "select sum(amount) as revenue from wh.sales.orders where status = 'paid'",
          {ORDERS: ORDERS_TABLE}, (("revenue", "numeric"),))
    downstream_reader("analytics", "wh.warehouse.paid_revenue", ("revenue",))
    edge = FieldEdge.objects.get(input_field="status", field="revenue")
    assert (edge.kind, edge.subtype) == (UsageKind.INDIRECT, "FILTER")
    assert edge.description == "WHERE status = 'paid'"
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.paid_revenue")
    for effect in (Effect.NARROWED, Effect.VALUES):
        answer = preview_change(orders, ["status"], effect=effect)
        assert asked(answer) == ["warehouse"]
        assert "indirect FILTER" in told(answer)["analytics"]
    # NULLs are not a value the filter names: it only keeps fewer rows, and says so.
    nulls = preview_change(orders, ["status"], effect=Effect.NULLS)
    assert asked(nulls) == []
    assert "carries status on as filter key into wh.warehouse.paid_revenue (`WHERE status = 'paid'`)" in \
        told(nulls)["warehouse"]


def test_a_filter_in_a_select_star_step_reaches_what_is_computed_from_the_rows_it_keeps(teams):
    """dbt's usual shape: `with paid as (select * from … where status = 'paid')`, then an aggregate."""
    model("warehouse", "paid_by_customer",
          "with paid as (select * from wh.sales.orders where status = 'paid') "
          "select customer_id, sum(amount) as revenue from paid group by customer_id",
          {ORDERS: ORDERS_TABLE}, (("customer_id", "bigint"), ("revenue", "numeric")))
    edge = FieldEdge.objects.get(input_field="status", field="revenue")
    assert (edge.kind, edge.subtype, edge.description) == (UsageKind.INDIRECT, "FILTER", "WHERE status = 'paid'")


CUSTOMERS_TABLE = (("customer_id", "bigint"), ("region", "text"), ("status", "text"))


def customer_regions(teams: dict, join: str, customers: str = CUSTOMERS) -> None:
    """Warehouse's orders with their customer's region, joined by `join` (Analytics checks
    both columns with `not_null`)."""
    model("warehouse", "order_regions",
          f"select o.order_id, c.region from wh.sales.orders as o {join} {customers} as c "
          "on c.customer_id = o.customer_id",
          {ORDERS: ORDERS_TABLE, CUSTOMERS: CUSTOMERS_TABLE}, (("order_id", "bigint"), ("region", "text")))
    check("analytics", "order_regions.test", "wh.warehouse.order_regions", ("not_null", "order_id"),
          ("not_null", "region"))
    consumes(teams["warehouse"], ORDERS, CUSTOMERS)
    consumes(teams["analytics"], "wh.warehouse.order_regions")


def test_an_inner_join_drops_the_rows_a_null_key_no_longer_matches_and_makes_no_null(teams):
    """A NULL customer id matches no customer: an inner join drops the order, so no
    column of its result becomes NULL and a `not_null` check behind it cannot fail. The
    edge says the join absorbs the NULLs; the rows it drops still reach whoever checks
    more than NULLs (row counts, uniqueness: new values)."""
    customer_regions(teams, "inner join")
    edge = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field="region")
    assert (edge.kind, edge.subtype, edge.description) == (
        UsageKind.INDIRECT, "JOIN", "absorbs nulls: drops rows: c.customer_id = o.customer_id")
    orders = owned(ORDERS, teams["checkout"])
    answer = preview_change(orders, ["customer_id"], effect=Effect.NULLS)
    assert asked(answer) == []
    assert "analytics/order_regions.test checks region only by not_null, which dropped rows cannot fail" in \
        told(answer)["analytics"]
    # The same join seen from the other side: NULL customer ids of customers drop orders too.
    customers = owned(CUSTOMERS, teams["checkout"])
    assert asked(preview_change(customers, ["customer_id"], effect=Effect.NULLS)) == []
    # A check that notices any change (a row count, say) is still asked.
    check("analytics", "order_regions.test", "wh.warehouse.order_regions", ("unique", "order_id"))
    assert asked(preview_change(orders, ["customer_id"], effect=Effect.NULLS)) == ["analytics"]


def test_a_left_join_pads_the_joined_side_with_nulls_and_keeps_the_other_as_it_was(teams):
    """orders LEFT JOIN customers: an order whose customer id became NULL is kept, its
    customer's region NULL. The `not_null` check of the region is asked; order_id, from
    the side the join keeps, cannot become NULL."""
    customer_regions(teams, "left join")
    padded = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field="region")
    kept = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field="order_id")
    assert (padded.subtype, padded.description) == ("JOIN", "c.customer_id = o.customer_id")
    assert (kept.subtype, kept.description) == ("JOIN", "absorbs nulls: drops rows: c.customer_id = o.customer_id")
    orders = owned(ORDERS, teams["checkout"])
    answer = preview_change(orders, ["customer_id"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    [hit] = [j for j in answer["affected"][0]["jobs"] if j["job"] == "analytics/order_regions.test"]
    assert hit["touched"] == ["region"]


def test_a_right_join_pads_the_side_before_it(teams):
    """orders RIGHT JOIN customers: the orders' columns are the padded ones."""
    customer_regions(teams, "right join")
    orders = owned(ORDERS, teams["checkout"])
    answer = preview_change(orders, ["customer_id"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    [hit] = [j for j in answer["affected"][0]["jobs"] if j["job"] == "analytics/order_regions.test"]
    assert hit["touched"] == ["order_id"]


def test_a_padded_column_under_coalesce_or_count_gives_no_null(teams):
    """`coalesce(c.region, 'unknown')` and `count(c.customer_id)` of a left-joined side are
    never NULL: the padding's NULLs stop there, though the key's change still reaches them."""
    model("warehouse", "order_regions",
          "select o.order_id, coalesce(c.region, 'unknown') as region, count(c.customer_id) as customers "
          "from wh.sales.orders as o left join wh.platform.customers as c on c.customer_id = o.customer_id "
          "group by o.order_id, c.region",
          {ORDERS: ORDERS_TABLE, CUSTOMERS: CUSTOMERS_TABLE},
          (("order_id", "bigint"), ("region", "text"), ("customers", "bigint")))
    check("analytics", "order_regions.test", "wh.warehouse.order_regions", ("not_null", "region"),
          ("not_null", "customers"))
    consumes(teams["warehouse"], ORDERS, CUSTOMERS)
    consumes(teams["analytics"], "wh.warehouse.order_regions")
    for field in ("region", "customers"):
        edge = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field=field)
        assert edge.description == "absorbs nulls: c.customer_id = o.customer_id"
    orders = owned(ORDERS, teams["checkout"])
    assert asked(preview_change(orders, ["customer_id"], effect=Effect.NULLS)) == []


def test_rows_a_filter_drops_on_the_padded_side_of_an_outer_join_are_nulls(teams):
    """Customers filtered on their status, then left-joined: a customer whose status became
    NULL is filtered out, and its orders' region is NULL. The filter's NULLs reach the
    `not_null` check through the join that pads them."""
    customer_regions(teams, "left join", "(select * from wh.platform.customers where status <> 'closed')")
    edge = FieldEdge.objects.get(input_dataset__name=CUSTOMERS, input_field="status", field="region")
    assert (edge.subtype, edge.description) == ("JOIN", "WHERE status <> 'closed'")
    customers = owned(CUSTOMERS, teams["checkout"])
    answer = preview_change(customers, ["status"], effect=Effect.NULLS)
    assert "analytics" in asked(answer)


def dbt_model(team: str, name: str, query: str, inputs: dict[str, tuple], output_columns: tuple,
              materialized: str) -> None:
    """`model`, as dbt-ol reports a dbt model: its output carries the `dbt_model` facet."""
    output = table(f"wh.{team}.{name}", *output_columns)
    output["facets"]["dbt_model"] = {
        "_producer": PRODUCER, "_schemaURL": "https://github.com/OpenLineage/OpenLineage/tree/main/integration/"
        "common/openlineage/schema/dbt-model-dataset-facet.json", "config": {"materialized": materialized}}
    store_event(run_event("COMPLETE", job=name, job_namespace=team,
                          inputs=[table(n, *cols) for n, cols in inputs.items()], outputs=[output],
                          job_facets={"sql": sql_facet(query, "postgres")}))


def revenue_by_customer(teams, materialized: str) -> Dataset:
    """Warehouse's model grouped by customer id alone, checked `unique` and `not_null` on it
    by Analytics; the orders' customer ids are what changes."""
    dbt_model("warehouse", "revenue_by_customer",
              "select customer_id, sum(amount) as revenue from wh.sales.orders group by customer_id",
              {ORDERS: ORDERS_TABLE}, (("customer_id", "bigint"), ("revenue", "numeric")), materialized)
    check("analytics", "revenue_by_customer.test", "wh.warehouse.revenue_by_customer", ("unique", "customer_id"),
          ("not_null", "customer_id"))
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.revenue_by_customer")
    return owned(ORDERS, teams["checkout"])


def test_a_unique_check_of_the_one_key_a_rebuilt_model_groups_by_cannot_fail(teams):
    """Customer ids rounded to hundreds merge customers: the model still has one row per
    id, since it groups by it alone and dbt writes it whole on every run. Analytics'
    `unique` check cannot fail; its `not_null` check notices NULLs."""
    orders = revenue_by_customer(teams, "table")
    edge = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field="customer_id",
                                 kind=UsageKind.DIRECT)
    assert edge.description == "one row per value"
    answer = preview_change(orders, ["customer_id"], effect=Effect.VALUES)
    assert asked(answer) == []
    assert ("analytics/revenue_by_customer.test checks customer_id only by not_null, unique, which new values "
            "cannot fail (customer_id holds one row per value: the job writing it groups by it alone)") in \
        told(answer)["analytics"]
    assert asked(preview_change(orders, ["customer_id"], effect=Effect.NULLS)) == ["analytics"]


def test_an_incremental_model_adds_rows_to_those_already_there_and_its_unique_check_is_asked(teams):
    orders = revenue_by_customer(teams, "incremental")
    edge = FieldEdge.objects.get(input_dataset__name=ORDERS, input_field="customer_id", field="customer_id",
                                 kind=UsageKind.DIRECT)
    assert edge.description == ""
    assert asked(preview_change(orders, ["customer_id"], effect=Effect.VALUES)) == ["analytics"]


def test_a_model_another_job_also_writes_may_repeat_a_key_and_its_unique_check_is_asked(teams):
    orders = revenue_by_customer(teams, "table")
    store_event(run_event("COMPLETE", job="backfill", job_namespace="warehouse",
                          inputs=[table(ORDERS, *ORDERS_TABLE)],
                          outputs=[table("wh.warehouse.revenue_by_customer", ("customer_id", "bigint"))],
                          job_facets={"sql": sql_facet("select customer_id from wh.sales.orders", "postgres")}))
    assert FieldEdge.objects.filter(field="customer_id", kind=UsageKind.DIRECT, description="one row per value",
                                    job__name="revenue_by_customer").exists()
    assert asked(preview_change(orders, ["customer_id"], effect=Effect.VALUES)) == ["analytics"]


def test_nulls_a_filter_rejects_only_drop_rows_which_no_column_check_can_fail(teams):
    """Warehouse keeps the orders that are not cancelled: an order whose status became NULL
    is dropped, and every order left is as it was. Analytics' `unique` and `not_null`
    checks of the kept orders cannot fail; what is computed from fewer rows downstream
    (a sum, a count) is new values, which a check of it still notices."""
    model("warehouse", "open_orders", "select order_id, amount from wh.sales.orders where status <> 'cancelled'",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("amount", "numeric")))
    check("analytics", "open_orders.test", "wh.warehouse.open_orders", ("unique", "order_id"), ("not_null", "amount"))
    model("analytics", "open_total", "select sum(amount) as total from wh.warehouse.open_orders",
          {"wh.warehouse.open_orders": (("order_id", "bigint"), ("amount", "numeric"))}, (("total", "numeric"),))
    check("analytics", "open_total.test", "wh.analytics.open_total", ("accepted_values", "total"))
    edge = FieldEdge.objects.get(input_field="status", field="order_id")
    assert (edge.subtype, edge.description) == ("FILTER", "drops rows: WHERE status <> 'cancelled'")
    orders = owned(ORDERS, teams["checkout"])
    owned("wh.analytics.open_total", teams["analytics"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.open_orders")
    answer = preview_change(orders, ["status"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    touched = {j["job"]: j["touched"] for j in answer["affected"][0]["jobs"]}
    assert touched["analytics/open_total.test"] == ["total"]  # the sum of fewer rows is a new value
    assert touched["analytics/open_orders.test"] == []
    # A filter that keeps NULLs (`status is null or …`) gains rows: new values for the checks.
    from datetime import timedelta

    from lineage.ingest import RECENT_USAGE

    # The job's edges are due to be written again (as they are once USAGE_REFRESH has passed).
    RECENT_USAGE.clear()
    FieldEdge.objects.update(last_seen_at=F("last_seen_at") - timedelta(days=1))
    model("warehouse", "open_orders", "select order_id, amount from wh.sales.orders "
          "where status is null or status <> 'cancelled'",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("amount", "numeric")))
    answer = preview_change(orders, ["status"], effect=Effect.NULLS)
    touched = {j["job"]: j["touched"] for j in answer["affected"][0]["jobs"]}
    assert touched["analytics/open_orders.test"] == ["order_id"]


def test_a_comparison_is_a_boolean_whatever_it_compares_so_a_new_type_reaches_it_as_new_values(teams):
    """Warehouse flags the customers with a paid order (`bool_or(status = 'paid')`). A new
    type of status may fail that comparison (Warehouse reads it and is asked), but the flag
    stays a boolean: what reaches Analytics' `not_null` check of it is new values at most."""
    from registry.usage import carried

    model("warehouse", "paying_customers",
          "select customer_id, bool_or(status = 'paid') as has_paid from wh.sales.orders group by customer_id",
          {ORDERS: ORDERS_TABLE}, (("customer_id", "bigint"), ("has_paid", "boolean")))
    check("analytics", "paying_customers.test", "wh.warehouse.paying_customers", ("not_null", "has_paid"))
    edge = FieldEdge.objects.get(input_field="status", field="has_paid", kind=UsageKind.DIRECT)
    assert edge.description == "absorbs type: LOGICAL_OR(status = 'paid') AS has_paid"
    assert carried({Effect.RETYPED}, "AGGREGATION", None, absorbs={"type"}) == {Effect.VALUES}
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.paying_customers")
    answer = preview_change(orders, ["status"], effect=Effect.RETYPED)
    assert asked(answer) == ["warehouse"]
    assert "analytics/paying_customers.test checks has_paid only by not_null, which new values cannot fail" in \
        told(answer)["analytics"]


def test_a_window_partition_reaches_the_window_and_only_it(teams):
    model("warehouse", "order_sequence",
          "select order_id, amount, row_number() over (partition by customer_id order by created_at) as nth "
          "from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("amount", "numeric"), ("nth", "bigint")))
    check("analytics", "order_sequence.test", "wh.warehouse.order_sequence", ("not_null", "nth"))
    check("warehouse", "order_sequence.amounts", "wh.warehouse.order_sequence", ("not_null", "amount"))
    edge = FieldEdge.objects.get(input_field="customer_id", field="nth", kind=UsageKind.INDIRECT)
    assert edge.subtype == "WINDOW" and "PARTITION BY customer_id" in edge.description
    assert not FieldEdge.objects.filter(input_field="customer_id", field="amount").exists()
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], "wh.warehouse.order_sequence")
    answer = preview_change(orders, ["customer_id"], effect=Effect.NULLS)
    assert asked(answer) == ["analytics"]
    assert "indirect WINDOW" in why(answer, "analytics")


def test_a_sort_changes_no_result(teams):
    model("warehouse", "orders_sorted", "select order_id from wh.sales.orders order by created_at",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"),))
    downstream_reader("analytics", "wh.warehouse.orders_sorted", ("order_id",))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], "wh.warehouse.orders_sorted")
    assert asked(preview_change(orders, ["created_at"], effect=Effect.NULLS)) == []


# --- where the SQL absorbs the change ------------------------------------------------------

def test_a_cast_to_text_absorbs_a_new_type_and_the_team_is_told_why(teams):
    model("warehouse", "order_labels", "select order_id, cast(status as text) as status_label from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("status_label", "text")))
    downstream_reader("analytics", "wh.warehouse.order_labels", ("status_label",))
    edge = FieldEdge.objects.get(input_field="status", field="status_label")
    assert edge.description == "absorbs retyped: CAST(status AS TEXT) AS status_label"
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.order_labels")
    retyped = preview_change(orders, ["status"], effect=Effect.RETYPED)
    assert asked(retyped) == []
    assert "warehouse/order_labels reads status only through `CAST(status AS TEXT) AS status_label`" in \
        told(retyped)["warehouse"]
    # NULLs pass through a cast, and on to Analytics' report: nothing of either team checks them.
    nulls = preview_change(orders, ["status"], effect=Effect.NULLS)
    assert asked(nulls) == []
    assert "carries status on as its values into wh.warehouse.order_labels" in told(nulls)["warehouse"]
    assert "carries status_label on as its values into wh.analytics.order_labels_report" in told(nulls)["analytics"]


def test_a_cast_to_a_narrower_type_absorbs_nothing(teams):
    model("warehouse", "order_amounts", "select order_id, cast(amount as integer) as cents from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("cents", "integer")))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    assert asked(preview_change(orders, ["amount"], effect=Effect.RETYPED)) == ["warehouse"]


def test_coalesce_with_a_non_null_default_absorbs_nulls_but_not_a_new_type(teams):
    model("warehouse", "order_coupons", "select order_id, coalesce(coupon, 'none') as coupon from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("coupon", "text")))
    downstream_reader("analytics", "wh.warehouse.order_coupons", ("coupon",))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.order_coupons")
    nulls = preview_change(orders, ["coupon"], effect=Effect.NULLS)
    assert asked(nulls) == []
    assert "COALESCE(coupon, 'none')" in told(nulls)["warehouse"]
    assert asked(preview_change(orders, ["coupon"], effect=Effect.RETYPED)) == ["analytics", "warehouse"]


def test_coalesce_with_another_column_absorbs_nothing(teams):
    """The NULLs reach Warehouse's own model, and Warehouse's own check of it asks Warehouse,
    though it is no consumer of its own dataset."""
    model("warehouse", "order_notes", "select order_id, coalesce(note, coupon) as note from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("note", "text")))
    check("warehouse", "order_notes.test", "wh.warehouse.order_notes", ("not_null", "note"))
    owned("wh.warehouse.order_notes", teams["warehouse"])
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    answer = preview_change(orders, ["note"], effect=Effect.NULLS)
    assert asked(answer) == ["warehouse"]
    assert "its jobs read note of postgres://warehouse:5432/wh.warehouse.order_notes" in why(answer, "warehouse")


def test_a_column_selected_but_never_used_downstream_asks_nobody_and_tells_both_teams_why(teams):
    model("warehouse", "orders_copy", "select order_id, amount, note from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("amount", "numeric"), ("note", "text")))
    downstream_reader("analytics", "wh.warehouse.orders_copy", ("amount",))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], "wh.warehouse.orders_copy")
    answer = preview_change(orders, ["note"], effect=Effect.NULLS)
    assert asked(answer) == []
    assert "warehouse/orders_copy carries note on as its values into wh.warehouse.orders_copy" in told(answer)["warehouse"]
    assert "analytics" in told(answer)
    # Removed, the column fails the job that selects it.
    assert asked(preview_change(orders, ["note"], effect=Effect.REMOVED)) == ["warehouse"]


def test_a_change_the_report_does_not_name_is_absorbed_by_nothing(teams):
    model("warehouse", "order_labels", "select order_id, cast(status as text) as status_label from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("status_label", "text")))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    assert asked(preview_change(orders, ["status"], effect=Effect.CHANGED)) == ["warehouse"]


def test_each_kind_of_checker_change_maps_to_what_it_does_to_the_values():
    assert Effect.of_change("type_changed") == Effect.RETYPED
    assert Effect.of_change("nullability_added") == Effect.NULLS
    assert Effect.of_change("enum_added") == Effect.NARROWED  # values now restricted to a list
    assert Effect.of_change("enum_value_removed") == Effect.NARROWED
    assert Effect.of_change("enum_value_added") == Effect.VALUES
    assert Effect.of_change("format_removed") == Effect.RETYPED  # a dataframe datetime column now str
    assert Effect.of_change("maximum_tightened") == Effect.RETYPED  # a dataframe int64 column now int32
    assert Effect.of_change("max_length_tightened") == Effect.VALUES
    assert Effect.of_change("required_removed") == Effect.CHANGED


# --- who notices a value change: checks, expressions that depend on the values, sinks ------

def test_a_job_with_no_outputs_is_where_the_values_end_up_and_its_team_is_asked(teams):
    """A query whose results leave the warehouse (a dashboard, an export) depends on the
    values it reads: nothing downstream would notice for it."""
    store_event(run_event("COMPLETE", job="revenue_dashboard", job_namespace="analytics",
                          inputs=[table(ORDERS, *ORDERS_TABLE)],
                          job_facets={"sql": sql_facet("select region, sum(amount) from wh.sales.orders "
                                                       "group by region", "postgres")}))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], ORDERS)
    assert asked(preview_change(orders, ["amount"], effect=Effect.NULLS)) == ["analytics"]


def test_an_expression_that_divides_by_or_casts_the_values_depends_on_them(teams):
    """Precision lost: a divisor rounded to 0 divides by zero, text cut short may no longer
    read as a number. NULLs break neither: SQL passes them on."""
    model("warehouse", "order_ratios", "select order_id, 100 / amount as per_unit from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("per_unit", "numeric")))
    model("analytics", "coupon_codes", "select order_id, cast(coupon as integer) as coupon_no from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("coupon_no", "integer")))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["warehouse"], ORDERS)
    consumes(teams["analytics"], ORDERS)
    assert asked(preview_change(orders, ["amount"], effect=Effect.VALUES)) == ["warehouse"]
    assert asked(preview_change(orders, ["coupon"], effect=Effect.VALUES)) == ["analytics"]
    assert asked(preview_change(orders, ["amount"], effect=Effect.NULLS)) == []
    assert asked(preview_change(orders, ["coupon"], effect=Effect.NULLS)) == []


def test_narrowing_an_enum_cannot_fail_a_membership_check_only_code_naming_a_value(teams):
    """accepted_values holds for fewer values; a CASE that names one of them depends on it."""
    store_event(run_event("COMPLETE", job="orders_load", job_namespace="checkout", outputs=[table(ORDERS, *ORDERS_TABLE)]))
    check("analytics", "orders.test", ORDERS, ("accepted_values", "status"), ("not_null", "status"))
    model("warehouse", "order_flags",
          "select order_id, case when status = 'returned' then 1 else 0 end as returned from wh.sales.orders",
          {ORDERS: ORDERS_TABLE}, (("order_id", "bigint"), ("returned", "integer")))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], ORDERS)
    consumes(teams["warehouse"], ORDERS)
    narrowed = preview_change(orders, ["status"], effect=Effect.NARROWED)
    assert asked(narrowed) == ["warehouse"]
    assert told(narrowed)["analytics"].endswith(
        "analytics/orders.test checks status only by accepted_values, not_null, which narrowed values cannot fail")
    # New values (an enum widened, a format changed) can fail the membership check.
    assert asked(preview_change(orders, ["status"], effect=Effect.VALUES)) == ["analytics", "warehouse"]
    # NULLs fail the not_null one.
    assert "analytics" in asked(preview_change(orders, ["status"], effect=Effect.NULLS))


def test_a_new_type_cannot_fail_a_not_null_check_unless_an_expression_on_the_way_can_make_a_null(teams):
    """A retype keeps every NULL where it was (a change of nullability is a change of its
    own): a `not_null` check of the column, of a copy, or of a sum or a concatenation of it
    cannot fail. `NULLIF(coupon, '0')` may make a NULL of a value that now reads as 0."""
    store_event(run_event("COMPLETE", job="orders_load", job_namespace="checkout", outputs=[table(ORDERS, *ORDERS_TABLE)]))
    check("analytics", "orders.test", ORDERS, ("not_null", "amount"), ("not_null", "coupon"))
    model("warehouse", "order_sums", "select region, sum(amount) as total, nullif(coupon, '0') as coupon_no "
          "from wh.sales.orders group by region, coupon", {ORDERS: ORDERS_TABLE},
          (("region", "text"), ("total", "numeric"), ("coupon_no", "text")))
    check("analytics", "order_sums.test", "wh.warehouse.order_sums", ("not_null", "total"), ("not_null", "coupon_no"))
    orders = owned(ORDERS, teams["checkout"])
    consumes(teams["analytics"], ORDERS, "wh.warehouse.order_sums")
    answer = preview_change(orders, ["amount"], effect=Effect.RETYPED)
    assert "analytics" not in asked(answer)
    assert "analytics/orders.test checks amount only by not_null, which a new type cannot fail" in \
        told(answer)["analytics"]
    assert "analytics/order_sums.test checks total only by not_null, which a new type cannot fail" in \
        told(answer)["analytics"]
    assert "analytics" in asked(preview_change(orders, ["coupon"], effect=Effect.RETYPED))
    # A unique check may see two values merge under the new type (12.5 and 12.4 as integers).
    check("analytics", "orders.test", ORDERS, ("not_null", "amount"), ("unique", "amount"))
    assert "analytics" in asked(preview_change(orders, ["amount"], effect=Effect.RETYPED))


def test_a_narrowed_enum_stays_narrowed_through_an_expression_but_not_an_aggregate(teams):
    from registry.usage import carried

    assert carried({Effect.NARROWED}, "TRANSFORMATION", None) == {Effect.NARROWED}
    assert carried({Effect.NARROWED}, "AGGREGATION", None) == {Effect.VALUES}
    # Through a join key: other rows match, and an outer join's lost matches are NULLs.
    assert carried({Effect.NARROWED}, "JOIN", None, kind=UsageKind.INDIRECT) == {Effect.VALUES, Effect.NULLS}
    # Through a filter or group key: other rows kept or grouped, never a NULL made.
    assert carried({Effect.NULLS}, "FILTER", None, kind=UsageKind.INDIRECT) == {Effect.VALUES}
    assert carried({Effect.NULLS}, "GROUP_BY", None, kind=UsageKind.INDIRECT) == {Effect.VALUES}
    assert carried({Effect.NULLS}, "CONDITIONAL", None, kind=UsageKind.INDIRECT) == {Effect.NULLS}
