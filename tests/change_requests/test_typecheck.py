"""Type-aware retypes: a consumer's compiled SQL re-typed with the proposed column types,
expression by expression (change_requests.typecheck, no database)."""

from __future__ import annotations

import pytest

from change_requests.typecheck import NotChecked, bind_tables, check_retype

TABLES = {
    "warehouse.raw.orders": {"id": "integer", "customer_id": "integer", "amount": "numeric", "status": "integer",
                             "placed_at": "timestamp without time zone", "paid": "boolean"},
    "warehouse.raw.customers": {"id": "integer", "name": "text"},
}


def check(query: str, **proposed: str):
    return check_retype(query, "postgres", TABLES, "warehouse.raw.orders", proposed)


def test_arithmetic_on_a_column_retyped_to_text_does_not_type_check():
    result = check("select id, amount * 1.2 as gross from raw.orders", amount="text")
    assert result.ok is False
    assert "arithmetic on text: operator does not exist: text * " in result.reason


def test_comparing_a_column_retyped_to_text_with_a_number_does_not_type_check():
    result = check("select id from raw.orders where status = 5", status="text")
    assert result.ok is False and "comparison of text with a number" in result.reason


def test_comparing_it_with_a_quoted_literal_still_type_checks():
    assert check("select id, count(*) as n from raw.orders where status = '5' group by id", status="text").ok is True


def test_a_join_of_a_key_retyped_to_text_with_an_integer_key_does_not_type_check():
    result = check("select o.id, c.name from raw.orders o join raw.customers c on c.id = o.customer_id",
                   customer_id="text")
    assert result.ok is False and "c.id = o.customer_id" in result.reason


@pytest.mark.parametrize("expression", ["date_trunc('day', placed_at)", "extract(year from placed_at)"])
def test_a_date_function_on_a_column_retyped_to_text_does_not_type_check(expression):
    result = check(f"select {expression} as d, count(*) as n from raw.orders group by 1", placed_at="text")
    assert result.ok is False and "a date function on text" in result.reason


def test_the_sum_of_a_column_retyped_to_boolean_does_not_type_check():
    result = check("select customer_id, sum(status) as s from raw.orders group by customer_id", status="boolean")
    assert result.ok is False and "sum of a boolean: function sum(boolean) does not exist" in result.reason


def test_a_widened_key_used_only_to_filter_join_and_count_still_type_checks():
    result = check("select c.name, count(*) as orders from raw.orders o join raw.customers c on c.id = o.customer_id "
                   "where o.status = 5 group by c.name", customer_id="bigint", status="bigint")
    assert result.ok is True
    assert result.reason == "every use of customer_id, status still type-checks and no result column changes type"


def test_a_cast_to_text_absorbs_a_retype():
    assert check("with o as (select * from raw.orders) select id, cast(status as text) as s from o",
                 status="bigint").ok is True


def test_a_cast_that_may_fail_for_some_values_is_not_decided():
    result = check("select id, cast(amount as numeric) * 2 as a from raw.orders", amount="text")
    assert result.ok is None and "may fail for some values" in result.reason


def test_a_retyped_column_passed_to_the_result_is_not_provably_safe():
    result = check("select id, status from raw.orders", status="bigint")
    assert result.ok is None
    assert "its result column status becomes bigint (was int)" in result.reason


def test_a_function_the_checker_does_not_know_is_not_decided():
    result = check("select id, round(amount, 2) as r from raw.orders", amount="text")
    assert result.ok is None and "does not know how ROUND takes text" in result.reason


def test_a_query_that_reads_a_table_its_lineage_does_not_name_is_not_checked():
    result = check("select id from raw.orders join raw.refunds using (id)", status="text")
    assert result.ok is None and "it reads raw.refunds, which is none of the datasets" in result.reason


def test_tables_are_bound_to_the_dataset_whose_name_ends_with_them_keeping_aliases():
    bound = bind_tables('with x as (select id from "raw"."orders") select x.id, c.name from x '
                        'join raw.customers as c on c.id = x.id', "postgres", list(TABLES), db="scratch")
    keys = {name: key for key, name in bound.datasets.items()}
    assert sorted(keys) == ["warehouse.raw.customers", "warehouse.raw.orders"]
    text = bound.query.sql()
    assert f"FROM scratch.{keys['warehouse.raw.orders']} AS orders" in text
    assert f"JOIN scratch.{keys['warehouse.raw.customers']} AS c" in text


def test_a_statement_that_is_not_a_query_is_not_checked():
    with pytest.raises(NotChecked, match="not a query"):
        bind_tables("delete from raw.orders", "postgres", list(TABLES))


def test_a_quoted_literal_the_new_type_cannot_read_does_not_type_check():
    tables = {"warehouse.marts.segments": {"region": "text", "value_tier": "text"}}
    result = check_retype("select region, count(*) filter (where value_tier = 'high') as high from marts.segments "
                          "group by region", "postgres", tables, "warehouse.marts.segments", {"value_tier": "integer"})
    assert result.ok is False
    assert """value_tier = 'high': invalid input syntax for type int: "high\"""" in result.reason


def test_a_quoted_number_in_a_list_still_type_checks_once_the_column_is_numeric():
    assert check("select id, count(*) as n from raw.orders where status in ('1', '2') group by id",
                 status="bigint").ok is True


def test_a_column_retyped_from_boolean_no_longer_filters():
    result = check("select id from raw.orders where paid", paid="integer")
    assert result.ok is False and "argument of WHERE must be type boolean, not type int" in result.reason


def test_a_union_of_a_column_retyped_to_text_with_a_number_does_not_type_check():
    result = check("select status as s from raw.orders union all select id as s from raw.customers", status="text")
    assert result.ok is False and "UNION types text and int cannot be matched" in result.reason


def test_coalescing_a_column_retyped_to_text_with_a_number_does_not_type_check():
    result = check("select id, count(*) as n from raw.orders where coalesce(status, 0) > 1 group by id", status="text")
    assert result.ok is False and "COALESCE types text and int cannot be matched" in result.reason


def test_the_max_of_a_column_retyped_to_boolean_does_not_type_check():
    result = check("select customer_id, max(status) as m from raw.orders group by customer_id", status="boolean")
    assert result.ok is False and "function max(boolean) does not exist" in result.reason
