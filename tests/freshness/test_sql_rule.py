"""The set-based pass applies the rule as SQL functions; they must answer exactly as the Python rule."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freshness.rules import deadline_for, human_duration, reason_for, status_for
from tests.freshness.conftest import T0

durations = st.one_of(
    st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=40)),
    st.sampled_from([timedelta(seconds=59), timedelta(seconds=60), timedelta(hours=6), timedelta(days=1)]),
)


def sql(expression: str, *params):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {expression}", params)
        return cursor.fetchone()[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(max_age=st.one_of(st.none(), durations), warn_fraction=st.one_of(st.none(), st.floats(0.01, 0.99)),
       written_ago=st.one_of(st.none(), st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=60))))
def test_the_sql_rule_gives_the_python_rule_s_status_deadline_and_reason(db, max_age, warn_fraction, written_ago):
    warn_after = max_age * warn_fraction if max_age and warn_fraction else None
    if warn_after is not None and warn_after <= timedelta(0):
        warn_after = None
    last_write = None if written_ago is None else T0 - written_ago
    status = status_for(max_age, warn_after, last_write, T0)
    assert sql("freshness_status(%s::interval, %s::interval, %s::timestamptz, %s::timestamptz)",
               max_age, warn_after, last_write, T0) == status
    assert sql("freshness_deadline(%s, %s::interval, %s::interval, %s::timestamptz)",
               status, max_age, warn_after, last_write) == deadline_for(status, max_age, warn_after, last_write)
    assert sql("freshness_reason(%s, %s::interval, %s::interval, %s::timestamptz, %s::timestamptz)",
               status, max_age, warn_after, last_write, T0) == reason_for(status, max_age, warn_after, last_write, T0)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=400)))
def test_durations_read_the_same_from_sql_and_python(db, value):
    assert sql("freshness_human_duration(%s::interval)", value) == human_duration(value)
