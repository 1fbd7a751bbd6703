"""registry.hooks.job_queries, answered by lineage: each job's compiled SQL, its dialect and
the schemas of what it reads, in a fixed number of queries whatever the number of jobs."""

from __future__ import annotations

import pytest

from registry.hooks import queries_of
from tests.change_requests.sql_world import job_ran

pytestmark = pytest.mark.django_db


def test_a_jobs_sql_dialect_and_input_schemas_come_back_in_three_queries(consumer_team, other_team,
                                                                         django_assert_num_queries):
    job_ran(consumer_team, "daily_revenue", "select sum(amount) as revenue from retail.public.orders")
    job_ran(other_team, "by_segment", "select segment, count(*) as n from retail.public.orders o "
                                      "join retail.public.customers c on c.id = o.customer_id group by 1",
            dialect=None, reads_customers=True)
    # 1: the jobs and their facets; 2: their inputs; 3: those datasets' schemas.
    with django_assert_num_queries(3):
        found = queries_of(["analytics/daily_revenue", "warehouse/by_segment", "warehouse/never_ran"])
    assert sorted(found) == ["analytics/daily_revenue", "warehouse/by_segment"]
    revenue = found["analytics/daily_revenue"]
    assert revenue.query == "select sum(amount) as revenue from retail.public.orders" and revenue.dialect == "postgres"
    assert [(i.name, dict(i.columns)["amount"]) for i in revenue.inputs] == [("retail.public.orders", "numeric")]
    # No dialect in the facet: the inputs' namespace scheme says it.
    assert found["warehouse/by_segment"].dialect == "postgres"
    assert [i.name for i in found["warehouse/by_segment"].inputs] == ["retail.public.customers", "retail.public.orders"]
