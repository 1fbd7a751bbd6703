"""How each input column reaches a result column of a query: unchanged (IDENTITY),
computed (TRANSFORMATION), aggregated (AGGREGATION), and whether only `SELECT *`
passes it on, never naming it (so a column removed upstream silently vanishes)."""

from __future__ import annotations

from lineage.sql_usage import FieldInput, TableRef, sql_reading

ORDERS = TableRef(("raw", "orders"))
SCHEMAS = {ORDERS: ("id", "customer_id", "amount", "status")}


def fields(query: str) -> dict[str, list[FieldInput]]:
    return {name: list(inputs) for name, inputs in sql_reading(query, "postgres", SCHEMAS).fields}


def test_a_named_column_is_an_identity_an_expression_a_transformation_an_aggregate_an_aggregation():
    found = fields("select customer_id as customer, amount * 100 as cents, sum(amount) as total "
                   "from raw.orders group by customer_id")
    assert found["customer"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]
    assert found["cents"] == [FieldInput(ORDERS, "amount", "TRANSFORMATION", False)]
    assert found["total"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]


def test_select_star_through_ctes_passes_every_column_on_without_naming_it():
    found = fields("with source as (select * from raw.orders), paid as (select * from source) select * from paid")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", True)]


def test_a_column_named_anywhere_on_the_way_is_not_passed_by_star_alone():
    found = fields("with source as (select id, customer_id from raw.orders) select * from source")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]
    found = fields("with source as (select * from raw.orders) select customer_id from source")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]


def test_steps_compose_an_aggregate_of_an_expression_is_an_aggregation():
    found = fields("with s as (select amount * 2 as doubled from raw.orders) select max(doubled) as top from s")
    assert found["top"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]
    found = fields("with s as (select sum(amount) as total from raw.orders) select total from s")
    assert found["total"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]


def joins(query: str) -> dict[tuple[str, str], tuple[str, frozenset]]:
    """(result column, input column) -> (the join step's SQL, what it absorbs), for join steps."""
    tables = {TableRef(("a",)): ("id", "k", "x"), TableRef(("b",)): ("k", "y"), TableRef(("c",)): ("k", "z")}
    return {(name, f"{step.table.name}.{step.column}"): (step.fragment, step.absorbs)
            for name, steps in sql_reading(query, "postgres", tables).steps for step in steps if step.subtype == "JOIN"}


def test_a_join_step_absorbs_nulls_into_the_columns_no_outer_join_pads():
    found = joins("select a.id, b.y from a join b on b.k = a.k")
    assert found[("id", "b.k")] == ("b.k = a.k", frozenset({"nulls"}))
    assert found[("y", "a.k")] == ("b.k = a.k", frozenset({"nulls"}))
    found = joins("select a.id, b.y, c.z from a left join b on b.k = a.k join c on c.k = a.k")
    assert found[("id", "b.k")][1] == frozenset({"nulls"})  # the side a LEFT join keeps
    assert found[("y", "a.k")][1] == frozenset()  # the side it pads
    assert found[("z", "b.k")][1] == frozenset({"nulls"})  # an inner join after it pads nothing
    found = joins("select a.id, c.z from a join b on b.k = a.k full join c on c.k = b.k")
    assert found[("id", "a.k")][1] == frozenset()  # a FULL join later pads every source before it
    assert found[("z", "a.k")][1] == frozenset()


def test_a_join_whose_sides_cannot_be_named_pads_every_column():
    found = joins("select a.id, c.z from a join (b left join c on c.k = b.k) on b.k = a.k")
    assert found and all(absorbs == frozenset() for _, absorbs in found.values())


def test_rows_lost_on_the_padded_side_are_a_join_step_with_the_sql_that_loses_them():
    found = joins("with p as (select k, y from b where y > 0) select a.id, p.y from a left join p on p.k = a.k")
    assert found[("y", "b.y")] == ("WHERE y > 0", frozenset())
    assert ("id", "b.y") not in found  # for the kept side it is a filter, as before


def test_a_query_grouped_by_one_expression_holds_one_row_per_value_of_it():
    def keyed(query: str) -> set[str]:
        return set(sql_reading(query, "postgres", SCHEMAS).keyed)

    assert keyed("select customer_id, sum(amount) as total from raw.orders group by customer_id") == {"customer_id"}
    assert keyed("select status as s, count(*) as n from raw.orders group by 1") == {"s"}
    assert keyed("select customer_id, status, sum(amount) as total from raw.orders group by 1, 2") == set()
    assert keyed("select customer_id from raw.orders group by rollup (customer_id)") == set()
    # Grouped inside, joined outside: a key may repeat.
    assert keyed("with g as (select customer_id from raw.orders group by customer_id) "
                 "select g.customer_id from g join raw.orders as o on o.id = g.customer_id") == set()
    # An INSERT appends its groups to the rows already there.
    assert keyed("insert into raw.totals select customer_id, sum(amount) from raw.orders group by customer_id") == set()


def drops(query: str) -> dict[tuple[str, str], bool]:
    """(result column, input column) -> whether the input's NULLs only drop rows there."""
    tables = {TableRef(("a",)): ("id", "k", "status"), TableRef(("b",)): ("k", "y")}
    return {(name, f"{step.table.name}.{step.column}"): step.drops
            for name, steps in sql_reading(query, "postgres", tables).steps for step in steps if step.kind == "INDIRECT"}


def test_nulls_a_filter_or_inner_join_rejects_only_drop_rows():
    assert drops("select id from a where status <> 'cancelled'") == {("id", "a.status"): True}
    assert drops("select id from a where not status in ('x', 'y') or id > 3")[("id", "a.status")] is True
    assert drops("select a.id from a join b on b.k = a.k")[("id", "b.k")] is True
    # The preserved side of an outer join loses duplicate matches, never gains a row.
    assert drops("select a.id, b.y from a left join b on b.k = a.k")[("id", "b.k")] is True
    assert drops("select a.id, b.y from a left join b on b.k = a.k")[("y", "b.k")] is False  # padded


def test_nulls_that_a_filter_keeps_or_that_reach_an_aggregate_or_a_limit_change_values():
    assert drops("select id from a where status is null")[("id", "a.status")] is False
    assert drops("select id from a where coalesce(status, '') <> 'x'")[("id", "a.status")] is False
    assert drops("select count(id) as n from a where status <> 'x'")[("n", "a.status")] is False
    assert drops("select id from a where status <> 'x' limit 10")[("id", "a.status")] is False
    # An anti-join keeps the rows whose match was lost: they are rows gained.
    assert drops("select a.id from a left join b on b.k = a.k where b.y is null")[("id", "b.k")] is False
    # Rows a CTE drops are dropped from what selects them whole, not from what aggregates them.
    assert drops("with s as (select * from a where status <> 'x') select id from s")[("id", "a.status")] is True
    assert drops("with s as (select * from a where status <> 'x') select max(id) as top from s")[
        ("top", "a.status")] is False
    assert drops("select id from a where status <> 'x' except select k from b")[("id", "a.status")] is False
