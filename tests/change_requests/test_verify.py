"""A verdict per team with its kind, and a proof where one can be had: retypes type-checked
against each consumer's compiled SQL as lineage saw it, and the affected teams' SQL
EXPLAINed on a scratch PostgreSQL schema holding the proposed shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.db import connection

from change_requests import verify
from change_requests.impact import as_markdown, preview
from change_requests.models import TeamAssessment
from change_requests.workflows import open_change_request
from registry.models import Consumer, Dataset

from .sql_world import job_ran, job_ran_on, proposed, publish_orders, report_of

pytestmark = pytest.mark.django_db

REVENUE = ("select date_trunc('day', o.placed_at) as day, sum(o.amount) as revenue from retail.public.orders o "
           "where o.paid group by 1")
BY_SEGMENT = ("select c.segment, count(*) as orders from retail.public.orders o "
              "join retail.public.customers c on c.id = o.customer_id group by c.segment")


@pytest.fixture
def orders(dataset, owner):
    """retail.public.orders under the dataframe contract, Analytics consuming it."""
    publish_orders(dataset, owner)
    return dataset


def verdict(answer: dict, team: str) -> dict:
    return next(t for t in answer["affected"] + answer["not_affected"] if t["team"] == team)["verdict"]


def scratch_schemas() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'verify%%'")
        return [row[0] for row in cursor.fetchall()]


# --- retypes, type-checked per expression --------------------------------------------------

def test_a_retype_every_use_of_which_still_type_checks_tells_the_team_it_is_not_affected(orders, consumer_team):
    job_ran(consumer_team, "orders_by_segment", BY_SEGMENT, reads_customers=True)
    answer = preview(proposed(retype={"customer_id": "int32"}))
    assert answer["affected"] == []
    told = verdict(answer, "analytics")
    assert told["kind"] == "not_affected" and told["by"] == "type check"
    assert "every use still type-checks with the proposed types" in told["reason"]


def test_a_retype_that_breaks_a_consumers_date_function_is_proven_broken_by_the_type_check(orders, consumer_team):
    job_ran(consumer_team, "daily_revenue", REVENUE)
    answer = preview(proposed(retype={"placed_at": "str"}))
    proof = verdict(answer, "analytics")
    assert [t["team"] for t in answer["affected"]] == ["analytics"]
    assert proof["kind"] == "proven_broken" and proof["by"] == "type check" and proof["job"] == "analytics/daily_revenue"
    assert "a date function on text" in proof["error"]


def test_a_team_that_declared_the_retyped_column_stays_assumed_whatever_its_sql_says(orders, consumer_team):
    job_ran(consumer_team, "orders_by_segment", BY_SEGMENT, reads_customers=True)
    Consumer.objects.filter(team=consumer_team).update(declared_columns=["customer_id"])
    proof = verdict(preview(proposed(retype={"customer_id": "int32"})), "analytics")
    assert proof["kind"] == "assumed_affected" and "it declared it reads customer_id" in proof["reason"]


def test_routing_an_open_request_uses_the_type_check(orders, consumer_team, owner):
    job_ran(consumer_team, "orders_by_segment", BY_SEGMENT, reads_customers=True)
    document = proposed(retype={"customer_id": "int32"})
    request = open_change_request(orders.contract_binding.contract, document, by=owner, report=report_of(document))
    assert not request.reviews.exists()
    assessment = TeamAssessment.objects.get(change_request=request)
    assert assessment.verdict["kind"] == "not_affected" and assessment.verdict["by"] == "type check"


def test_a_job_passing_a_retyped_column_on_whose_every_use_type_checks_is_not_affected(orders, consumer_team):
    """Its result's column changes type: whoever reads it is judged where the change reaches
    them, and no job of Analytics reads it unseen."""
    job_ran(consumer_team, "paid_orders", "select o.order_id, o.status from retail.public.orders o where o.paid")
    told = verdict(preview(proposed(retype={"status": "int64"})), "analytics")
    assert told["kind"] == "not_affected" and told["by"] == "type check"
    assert "its result column status becomes bigint (was int)" in told["reason"]


def test_a_job_passing_a_retyped_column_on_to_its_own_teams_reader_stays_assumed(orders, consumer_team):
    """Analytics' second job reads what the first passes on: Analytics consumes no dataset of
    its own, so that reader is no hit of it, and the new type would reach it unjudged."""
    job_ran(consumer_team, "paid_orders", "select o.order_id, o.status from retail.public.orders o where o.paid")
    job_ran_on(consumer_team, "status_totals", "select sum(p.status) as total from marts.analytics.paid_orders p",
               "marts.analytics.paid_orders", [("order_id", "bigint"), ("status", "integer")])
    told = verdict(preview(proposed(retype={"status": "str"})), "analytics")
    assert told["kind"] == "assumed_affected" and "the change passes on to whoever reads it" in told["reason"]


def test_a_job_reading_none_of_the_retyped_columns_leaves_the_verdict_to_the_others(orders, consumer_team):
    job_ran(consumer_team, "orders_by_segment", BY_SEGMENT, reads_customers=True)
    job_ran(consumer_team, "daily_revenue", REVENUE)
    told = verdict(preview(proposed(retype={"customer_id": "int32"})), "analytics")
    assert told["kind"] == "not_affected" and told["by"] == "type check"


def test_a_team_consuming_what_the_change_reaches_with_no_job_seen_there_stays_assumed(
        orders, consumer_team, other_team):
    """Finance's job on orders type-checks, but it also consumes the table Analytics copies
    `status` into, where none of its jobs was seen: what it does there is unknown."""
    job_ran(consumer_team, "paid_orders", "select o.order_id, o.status from retail.public.orders o where o.paid")
    Consumer.objects.create(team=other_team, dataset=orders)
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.paid_orders"))
    job_ran(other_team, "late_orders", "select o.order_id from retail.public.orders o where o.status > 2")
    told = verdict(preview(proposed(retype={"status": "int64"})), other_team.slug)
    assert told["kind"] == "assumed_affected"


def test_one_failing_expression_proves_a_team_broken_whatever_its_other_readings_leave_undecided(
        orders, consumer_team, other_team):
    """Finance consumes a table where none of its jobs was seen (undecided), but its job on
    orders compares a text status with a number: that proves it broken."""
    job_ran(consumer_team, "paid_orders", "select o.order_id, o.status from retail.public.orders o where o.paid")
    Consumer.objects.create(team=other_team, dataset=orders)
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.paid_orders"))
    job_ran(other_team, "late_orders", "select o.order_id from retail.public.orders o where o.status > 2")
    proof = verdict(preview(proposed(retype={"status": "str"})), other_team.slug)
    assert proof["kind"] == "proven_broken" and proof["job"] == "warehouse/late_orders"
    assert "comparison of text with a number" in proof["error"]


def test_a_copy_of_a_retyped_column_is_type_checked_with_the_new_type_where_it_is_read(
        orders, consumer_team, other_team):
    """Analytics copies `status` as is; Finance reads the copy: Finance's SQL is re-typed with
    the copy's new type, and its sum of text does not type-check."""
    job_ran(consumer_team, "paid_orders", "select o.order_id, o.status from retail.public.orders o where o.paid")
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.paid_orders"))
    job_ran_on(other_team, "status_totals", "select sum(p.status) as total from marts.analytics.paid_orders p",
               "marts.analytics.paid_orders", [("order_id", "bigint"), ("status", "integer")])
    answer = preview(proposed(retype={"status": "str"}))
    proof = verdict(answer, other_team.slug)
    assert proof["kind"] == "proven_broken" and proof["by"] == "type check"
    answer = preview(proposed(retype={"status": "int64"}))
    assert verdict(answer, other_team.slug)["kind"] == "not_affected"


def test_a_computing_step_on_a_retypes_way_is_retyped_by_its_own_jobs_type_check(orders, consumer_team, other_team):
    """Analytics keeps each order's lowest `status`; Finance filters on it. Analytics' own type
    check says what `MIN(o.status)` becomes: a bigint for an int64 status, which Finance's
    comparison takes (nobody is affected); text for a str one, which Finance's `> 2` does not
    (proven broken, though no step copied the column as is)."""
    job_ran(consumer_team, "order_lows",
            "select o.order_id, min(o.status) as low from retail.public.orders o group by o.order_id")
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.order_lows"))
    job_ran_on(other_team, "late_orders", "select t.order_id from marts.analytics.order_lows t where t.low > 2",
               "marts.analytics.order_lows", [("order_id", "bigint"), ("low", "integer")])
    answer = preview(proposed(retype={"status": "int64"}))
    assert answer["affected"] == []
    told = verdict(answer, other_team.slug)
    assert told["kind"] == "not_affected" and told["by"] == "type check"
    assert "warehouse/late_orders: every use of low still type-checks" in told["reason"]
    assert "warehouse/late_orders: every use of low still type-checks" in as_markdown(answer)
    proof = verdict(preview(proposed(retype={"status": "str"})), other_team.slug)
    assert proof["kind"] == "proven_broken" and proof["job"] == "warehouse/late_orders"
    assert "comparison of text with a number" in proof["error"]


def test_a_computing_step_that_fails_on_the_new_type_carries_none(orders, consumer_team, other_team):
    """`SUM(o.status)` of a str status fails in Analytics' job: what it would write is unknown,
    so Finance, reading the sums, stays assumed."""
    job_ran(consumer_team, "order_totals",
            "select o.order_id, sum(o.status) as total from retail.public.orders o group by o.order_id")
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.order_totals"))
    job_ran_on(other_team, "big_orders", "select t.order_id from marts.analytics.order_totals t where t.total > 2",
               "marts.analytics.order_totals", [("order_id", "bigint"), ("total", "bigint")])
    answer = preview(proposed(retype={"status": "str"}))
    assert verdict(answer, "analytics")["kind"] == "proven_broken"
    assert verdict(answer, other_team.slug)["kind"] == "assumed_affected"


def test_a_computing_step_that_reads_a_second_retyped_column_carries_no_type(orders, consumer_team, other_team):
    """Analytics' step adds two retyped columns: re-typing it with one would type the other
    with its old type, so what reaches Finance is not told."""
    job_ran(consumer_team, "order_totals",
            "select o.order_id, sum(o.status + o.customer_id) as total from retail.public.orders o group by o.order_id")
    Consumer.objects.create(team=other_team, dataset=Dataset.objects.get(name="marts.analytics.order_totals"))
    job_ran_on(other_team, "big_orders", "select t.order_id from marts.analytics.order_totals t where t.total > 2",
               "marts.analytics.order_totals", [("order_id", "bigint"), ("total", "bigint")])
    answer = preview(proposed(retype={"status": "int64", "customer_id": "int32"}))
    assert verdict(answer, other_team.slug)["kind"] == "assumed_affected"


# --- verification on a scratch schema ------------------------------------------------------

def test_verify_builds_a_scratch_schema_explains_on_it_and_drops_it(orders, consumer_team, monkeypatch):
    job_ran(consumer_team, "daily_revenue", REVENUE)
    seen = []
    explain = verify._explain

    def watching(cursor, statement):
        cursor.execute("SELECT current_schema(), array_agg(table_name::text ORDER BY table_name) "
                       "FROM information_schema.tables WHERE table_schema = current_schema()")
        seen.append((cursor.fetchone(), statement))
        return explain(cursor, statement)

    monkeypatch.setattr(verify, "_explain", watching)
    answer = preview(proposed(drop=("amount",)), verify=True)
    schema = answer["verification"]["schema"]
    # Built: the current shape of orders and its proposed shape, in a schema of its own.
    (current_schema, tables), statement = seen[0]
    assert current_schema == schema and tables == [f"d{orders.pk}", f"d{orders.pk}_proposed"]
    assert f'FROM {schema}."d{orders.pk}" AS o' in statement
    # Used: the job plans on the current shape and fails on the proposed one, with PostgreSQL's own error.
    proof = verdict(answer, "analytics")
    assert proof == {**proof, "kind": "proven_broken", "by": "EXPLAIN", "job": "analytics/daily_revenue"}
    assert proof["error"] == "column o.amount does not exist (SQLSTATE 42703)"
    assert answer["verification"]["consumers"] == 1 and answer["verification"]["available"] is True
    # Dropped.
    assert scratch_schemas() == []


def test_a_drop_the_current_sql_never_uses_is_verified_safe(orders, consumer_team):
    """The job read `amount` last week; its SQL since does not: lineage still routes by last week."""
    job_ran(consumer_team, "daily_revenue", REVENUE)
    job_ran(consumer_team, "daily_revenue", "select date_trunc('day', placed_at) as day, count(*) as orders "
                                            "from retail.public.orders group by 1")
    assert [t["team"] for t in preview(proposed(drop=("amount",)))["affected"]] == ["analytics"]
    answer = preview(proposed(drop=("amount",)), verify=True)
    assert answer["affected"] == []
    proof = verdict(answer, "analytics")
    assert proof["kind"] == "verified_safe"
    assert proof["reason"] == "analytics/daily_revenue plans cleanly on the proposed shape (EXPLAIN on a scratch schema)"


def test_a_job_selecting_star_is_never_verified_safe(orders, consumer_team):
    job_ran(consumer_team, "orders_copy", "select * from retail.public.orders")
    proof = verdict(preview(proposed(drop=("amount",)), verify=True), "analytics")
    assert proof["kind"] == "assumed_affected" and "selects *" in proof["reason"]


def test_sql_of_a_dialect_sqlglot_cannot_transpile_stays_assumed(orders, consumer_team):
    job_ran(consumer_team, "pivoted", "select * from (select status, amount from retail.public.orders) "
                                      "pivot(sum(amount) for status in (1, 2))", dialect="bigquery")
    answer = preview(proposed(drop=("amount",)), verify=True)
    proof = verdict(answer, "analytics")
    assert proof["kind"] == "assumed_affected"
    assert "sqlglot cannot transpile it from bigquery to PostgreSQL: PIVOT unsupported" in proof["reason"]
    assert proof["path"] == ["postgres://retail-db:5432/retail.public.orders → analytics/pivoted reads amount"]
    assert scratch_schemas() == []


def test_a_consumer_whose_sql_nobody_saw_stays_assumed_with_the_reason(orders, consumer_team):
    from tests.change_requests.test_routing import reads

    reads(orders, consumer_team, "notebook", "amount")
    proof = verdict(preview(proposed(drop=("amount",)), verify=True), "analytics")
    assert proof["kind"] == "assumed_affected"
    assert proof["reason"] == "airflow/notebook: its SQL is not known (no sql facet was seen)"


# --- the verdict kinds where people read them ------------------------------------------------

@pytest.fixture
def two_teams(orders, consumer_team, other_team):
    """Analytics's revenue job breaks when amount goes; Warehouse's job reads amount but nobody saw its SQL."""
    from tests.change_requests.test_routing import reads

    Consumer.objects.create(dataset=orders, team=other_team)
    job_ran(consumer_team, "daily_revenue", REVENUE)
    reads(orders, other_team, "warehouse_load", "amount")
    return orders


def test_the_api_shows_each_teams_verdict_kind_after_verify(client, two_teams, owner, outsider):
    document = proposed(drop=("amount",))
    request = open_change_request(two_teams.contract_binding.contract, document, by=owner, report=report_of(document))
    client.force_login(owner)
    before = client.get(f"/api/change-requests/{request.pk}/").json()
    assert {a["team"]: a["verdict"]["kind"] for a in before["assessments"]} == {
        "analytics": "assumed_affected", "warehouse": "assumed_affected"}
    response = client.post(f"/api/change-requests/{request.pk}/verify/")
    assert response.status_code == 200, response.json()
    body = response.json()
    verdicts = {a["team"]: a["verdict"] for a in body["assessments"]}
    assert verdicts["analytics"]["kind"] == "proven_broken"
    assert verdicts["analytics"]["error"] == "column o.amount does not exist (SQLSTATE 42703)"
    assert verdicts["warehouse"]["kind"] == "assumed_affected"
    assert "its SQL is not known" in verdicts["warehouse"]["reason"]
    assert body["verification"]["consumers"] == 1
    # Nobody is added or removed by a proof.
    assert sorted(r["team"] for r in body["reviews"]) == ["analytics", "warehouse"]


def test_only_the_owner_a_required_team_or_an_admin_may_verify(client, two_teams, owner, db):
    from tests.conftest import make_team, make_user

    stranger = make_user("stranger")
    make_team("Elsewhere", "elsewhere", stranger)
    document = proposed(drop=("amount",))
    request = open_change_request(two_teams.contract_binding.contract, document, by=owner, report=report_of(document))
    client.force_login(stranger)
    response = client.post(f"/api/change-requests/{request.pk}/verify/")
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


def test_the_preview_api_verifies_when_asked_and_documents_the_kinds(client, two_teams, owner):
    client.force_login(owner)
    response = client.post("/api/contracts/retail.checkout.orders/impact/?verify=1",
                           proposed(drop=("amount",)), content_type="application/json")
    body = response.json()
    assert verdict(body, "analytics") == {**verdict(body, "analytics"), "kind": "proven_broken", "by": "EXPLAIN",
                                          "error": "column o.amount does not exist (SQLSTATE 42703)"}
    assert verdict(body, "warehouse")["kind"] == "assumed_affected"
    schema = client.get("/api/schema/").content.decode()
    assert "proven_broken" in schema and "/api/change-requests/{id}/verify/" in schema


def test_the_markdown_block_carries_every_verdict_kind(two_teams, tmp_path, capsys, other_team):
    Dataset.objects.filter(pk=two_teams.pk)  # the world as the fixture left it
    path = tmp_path / "proposed.yaml"
    path.write_text(yaml.safe_dump(proposed(drop=("amount",))))
    with pytest.raises(SystemExit):
        call_command("impact_preview", str(path), "--format", "markdown", "--verify")
    out = capsys.readouterr().out
    assert "- **analytics**: its jobs read amount of postgres://retail-db:5432/retail.public.orders  \n" \
           "  **proven broken** (EXPLAIN): `analytics/daily_revenue` would fail with " in out
    assert "- **warehouse**: its jobs read amount of postgres://retail-db:5432/retail.public.orders  \n" \
           "  _assumed affected_ via postgres://retail-db:5432/retail.public.orders → airflow/warehouse_load reads " \
           "amount: airflow/warehouse_load: its SQL is not known (no sql facet was seen)" in out
    assert "Verified: 1 consumer job(s) EXPLAINed on a scratch schema holding the proposed shape" in out


def test_the_markdown_block_names_a_team_told_by_the_type_check():
    answer = {"contract": "retail.checkout.orders", "proposed_version": "2.0", "compatible": False, "mode": "FULL",
              "changes": [], "touched_columns": ["customer_id"], "affected": [], "unregistered_readers": [],
              "not_affected": [{"team": "analytics", "why": "every use still type-checks with the proposed types",
                                "verdict": {"kind": "not_affected", "by": "type check", "reason": "…"}}]}
    assert "- analytics: every use still type-checks with the proposed types  \n  _not affected_ (type check)" \
        in as_markdown(answer)


def test_the_text_output_says_what_was_proven(two_teams, tmp_path, capsys):
    path = tmp_path / "proposed.json"
    path.write_text(json.dumps(proposed(drop=("amount",))))
    with pytest.raises(SystemExit):
        call_command("impact_preview", str(path), "--verify")
    out = capsys.readouterr().out
    assert "proven broken (EXPLAIN): analytics/daily_revenue: column o.amount does not exist" in out
    assert "verified: 1 consumer job(s) EXPLAINed" in out


ROOT = Path(__file__).resolve().parents[2]

SQLITE_SCRIPT = """
from change_requests.impact import preview
from contracts_app.publishing import record_version
from registry.models import Consumer, Dataset, Membership, Team
from registry.usage import ColumnRead
from django.contrib.auth import get_user_model
from tests.change_requests.sql_world import orders_document, proposed
import json
user = get_user_model().objects.create_user("alice")
checkout = Team.objects.create(name="Checkout", slug="checkout")
analytics = Team.objects.create(name="Analytics", slug="analytics")
Membership.objects.create(team=checkout, user=user)
dataset = Dataset.objects.create(namespace="postgres://retail-db:5432", name="retail.public.orders",
                                 owner_team=checkout, owner=user, compatibility_mode="FULL")
Consumer.objects.create(dataset=dataset, team=analytics)
record_version(orders_document(), by=user).contract.bind(dataset, by=user)
ColumnRead.objects.create(dataset=dataset, job_namespace="analytics", job_name="daily", column="amount",
                          kind="DIRECT", source="sql", token_team=analytics)
answer = preview(proposed(drop=("amount",)), verify=True)
print(json.dumps({"verification": answer["verification"], "verdict": answer["affected"][0]["verdict"]}))
"""


def test_on_the_embedded_sqlite_default_verification_is_unavailable_and_says_so(tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
           "CONTRACT_STORE": str(tmp_path / "store"), "FRESHNESS_IN_PROCESS_EVALUATOR": "0",
           "PYTHONPATH": f"{ROOT}:{ROOT / 'client'}"}
    env.pop("TEST_DATABASE_URL", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", SQLITE_SCRIPT], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["verification"] == {"available": False, "ran": False, "consumers": 0, "reason": (
        "verification needs PostgreSQL; this registry runs on SQLite, so every affected team stays assumed")}
    assert found["verdict"]["kind"] == "assumed_affected"
    assert found["verdict"]["reason"].startswith("verification needs PostgreSQL")
