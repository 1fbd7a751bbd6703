"""json values a statement builds (the lineage walk's node payloads) read through orjson
(registry/db.py), with the json module for what orjson does not read; jsonb stays text for
Django's JSONField."""

import pytest
from django.db import connection

from registry.models import Consumer

pytestmark = pytest.mark.django_db


def read(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def test_a_json_value_reads_as_the_json_module_reads_it():
    assert read("SELECT json_build_object('name', 'orders', 'fields', '[1, 2.5, null, true, 1e-7]'::json, "
                "'é', '{\"e\": \"\\u00e9\"}'::json)") == {
        "name": "orders", "fields": [1, 2.5, None, True, 1e-7], "é": {"e": "é"}}


def test_an_integer_past_64_bits_in_a_json_value_reads_whole():
    value = read("SELECT '{\"n\": 123456789012345678901234567890, \"m\": 18446744073709551615}'::json")
    assert value == {"n": 123456789012345678901234567890, "m": 18446744073709551615}
    assert type(value["n"]) is int


def test_a_negative_integer_past_64_bits_reads_whole_though_it_has_19_digits():
    assert read("SELECT '[-9223372036854775809, -9223372036854775808]'::json") == [
        -9223372036854775809, -9223372036854775808]


def test_a_json_field_still_reads_through_django(dataset, consumer_team):
    Consumer.objects.filter(dataset=dataset).update(declared_columns=["order_id", 12345678901234567890123])
    assert Consumer.objects.values_list("declared_columns", flat=True).get(dataset=dataset) == [
        "order_id", 12345678901234567890123]
