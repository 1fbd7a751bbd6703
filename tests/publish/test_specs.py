"""Integration specs: validation, publishing, and the SQL that loads a date range."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connection

from contracts_app.models import ContentChanged
from contracts_app.publishing import record_version
from contracts_app.specs import InvalidSpec, load_query, record_spec, spec_errors
from tests.publish.conftest import cell_count, cell_count_spec

pytestmark = pytest.mark.django_db


def test_a_spec_must_name_plain_identifiers_and_real_columns():
    spec = cell_count_spec()
    spec["source"]["table"] = "cell_counts; drop table x"
    spec["field_to_source"]["nonexistent"] = "x"
    errors = spec_errors(spec, cell_count())
    assert "source.table must be a plain SQL identifier, got 'cell_counts; drop table x'" in errors
    assert "field_to_source.nonexistent: the contract has no column 'nonexistent'" in errors


def test_a_spec_needs_its_contract_version_published(owner):
    with pytest.raises(InvalidSpec, match="has no published version 1.0; publish it first"):
        record_spec(cell_count_spec(), by=owner)


def test_specs_are_immutable_like_versions(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        record_version(cell_count(), by=owner, store=local_store)
        spec, created = record_spec(cell_count_spec(), by=owner, store=local_store)
    assert created and spec.source_table == "cell_counts"
    assert local_store.exists("integrations/source_specs/lab/analytics/cell_count/v1_0/spec.yaml")
    assert local_store.exists("integrations/index/spec_index.csv")
    _, created_again = record_spec(cell_count_spec(), by=owner, store=local_store)
    assert not created_again
    changed = cell_count_spec()
    changed["source"]["table"] = "cell_counts_v2"
    with pytest.raises(ContentChanged):
        record_spec(changed, by=owner, store=local_store)


def test_the_load_query_selects_a_date_range_from_real_postgresql(owner_team, owner, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        record_version(cell_count(), by=owner, store=local_store)
        spec, _ = record_spec(cell_count_spec(), by=owner, store=local_store)
    with connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA lims")
        cursor.execute(
            "CREATE TABLE lims.cell_counts (row_id text, viab_fraction double precision, run_date timestamp,"
            " created_at timestamp, modified_at timestamp, unrelated text)"
        )
        cursor.execute(
            "INSERT INTO lims.cell_counts VALUES"
            " ('a', 0.5, '2024-01-01', '2024-01-01 10:00', NULL, 'x'),"   # created in range
            " ('b', 0.6, '2024-01-01', '2023-12-01', '2024-01-02 09:00', 'x'),"  # modified in range
            " ('c', 0.7, '2024-01-01', '2023-12-01', '2023-12-02', 'x'),"  # neither
            " ('d', 0.8, '2024-01-01', '2024-01-03', NULL, 'x')"  # on the (exclusive) end
        )
    query = load_query(spec, datetime(2024, 1, 1), datetime(2024, 1, 3))
    raw = connection.connection  # the psycopg connection: composed SQL goes straight to it
    with raw.cursor() as cursor:
        cursor.execute(query.query, query.params)
        rows = cursor.fetchall()
        names = [d.name for d in cursor.description]
    assert names == ["run_row_id", "viability", "run_date"]
    assert [r[0] for r in rows] == ["b", "a"]  # ordered by created_at
    text = query.as_string(raw)
    assert 'FROM "lims"."cell_counts"' in text and '"viab_fraction" AS "viability"' in text


def test_an_empty_date_range_is_refused():
    with pytest.raises(ValueError, match="the date range is empty"):
        load_query(cell_count_spec(), datetime(2024, 1, 2), datetime(2024, 1, 1), columns=["viability"])
