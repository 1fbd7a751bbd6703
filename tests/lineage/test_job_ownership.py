"""Job ownership at job grain: one dbt-ol run, one token, every job attributed to
its own team by (1) the ownership facet, (2) the rules file, (3) dbt artefacts,
(4) the namespace mapping, (5) the posting token's team, in that order; and a
reading team confirming what its jobs read in one action.

The world: Checkout owns retail.public.orders; a platform team posts every dbt
job of the project `shop` with one platform-wide token."""

from __future__ import annotations

import io
import re

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lineage.ingest import store_event
from registry.jobs import JobTeam, OwnershipRules
from registry.models import ApiToken, AuditEvent, Consumer, Dataset, RegistryError
from registry.ownership import declare_alias, record_dbt_owners, save_ownership_rules
from registry.readings import confirm_readings, readings_to_confirm
from registry.usage import readers_of, readings_of
from tests.conftest import bearer, make_team

from .conftest import column_lineage_facet, input_field, post, run_event

NS = "dbt_shop"
DBT_FACET = "https://github.com/OpenLineage/OpenLineage/tree/main/integration/common/openlineage/schema/dbt-node-job-facet.json"
OWNERSHIP_FACET = "https://openlineage.io/spec/facets/1-0-1/OwnershipJobFacet.json"


@pytest.fixture
def platform(db):
    return make_team("Platform", "platform")


@pytest.fixture
def dbt_token(platform):
    """The one token dbt-ol sends every job of the project with."""
    return ApiToken.issue("dbt-ol", team=platform, scopes=["read", "lineage:write:any"])[1]


def dbt_facets(unique_id: str, path: str, owners: list[str] | None = None) -> dict:
    facets = {"dbt_node": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
                           "_schemaURL": DBT_FACET, "unique_id": unique_id, "original_file_path": path,
                           "alias": unique_id.rsplit(".", 1)[1], "database": "wh", "schema": "shop"}}
    if owners is not None:
        facets["ownership"] = {"_producer": "https://example.com/producer", "_schemaURL": OWNERSHIP_FACET,
                               "owners": [{"name": n, "type": "MAINTAINER"} for n in owners]}
    return facets


def run_dbt(client, secret, dataset, model: str, path: str, *, owners=None, columns=("amount",), output=None):
    """A dbt model `shop.<model>` (file `path`) reading `columns` of `dataset`, posted as dbt-ol does."""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    facet = column_lineage_facet({c: [input_field(dataset.name, c, "DIRECT", namespace=dataset.namespace)] for c in columns})
    out = {"namespace": dataset.namespace, "name": output or f"shop.{model}", "facets": {"columnLineage": facet}}
    answer = post(client, run_event("COMPLETE", job=f"shop.{model}", job_namespace=NS, inputs=[own], outputs=[out],
                                    job_facets=dbt_facets(f"model.shop.{model}", path, owners)), secret)
    assert answer.status_code == 201, answer.content


def decided(dataset) -> dict[str, tuple[str | None, str]]:
    """Each reading job of `dataset`: (its team's slug, the rule that decided it)."""
    from registry.models import Team

    slugs = dict(Team.objects.values_list("pk", "slug"))
    return {r.job: (slugs.get(r.team_id), r.rule) for r in readings_of([dataset.pk])}


JOB = f"{NS}/shop.revenue"


@pytest.fixture
def revenue(client, dbt_token, dataset):
    """shop.revenue (models/finance/revenue.sql) reads the orders' amount, sent with the platform token."""
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    return dataset


# --- the order of the rules: each wins over the ones after it ---------------------------

def test_with_no_rule_a_job_is_the_posting_tokens_teams(revenue):
    assert decided(revenue) == {JOB: ("platform", "token")}


def test_the_namespace_mapping_wins_over_the_token(revenue, other_team, admin):
    other_team.map_job_namespace(NS, by=admin)
    assert decided(revenue) == {JOB: ("warehouse", "namespace")}


def test_dbt_artefact_owners_win_over_the_namespace(revenue, other_team, consumer_team, admin):
    other_team.map_job_namespace(NS, by=admin)
    record_dbt_owners([{"unique_id": "model.shop.revenue", "team": "analytics", "source": "group:finance"}], by=admin)
    assert decided(revenue) == {JOB: ("analytics", "dbt_artefacts")}
    assert JobTeam.objects.get(job_name="shop.revenue").rule_detail == "dbt group:finance: model.shop.revenue"


def test_dbt_artefact_owners_match_by_file_path_when_the_node_id_differs(revenue, consumer_team, admin):
    record_dbt_owners([{"unique_id": "model.other.revenue", "team": "analytics",
                        "original_file_path": "models/finance/revenue.sql"}], by=admin)
    assert decided(revenue) == {JOB: ("analytics", "dbt_artefacts")}


def test_the_rules_file_wins_over_dbt_artefacts(revenue, other_team, consumer_team, admin):
    record_dbt_owners([{"unique_id": "model.shop.revenue", "team": "analytics"}], by=admin)
    save_ownership_rules("models/finance/** @warehouse\n", by=admin)
    assert decided(revenue) == {JOB: ("warehouse", "rules_file")}
    assert JobTeam.objects.get(job_name="shop.revenue").rule_detail == "rules v1 line 1: models/finance/** @warehouse"


def test_the_ownership_facet_wins_over_the_rules_file(client, dbt_token, dataset, other_team, consumer_team, admin):
    save_ownership_rules("models/finance/** @warehouse\n", by=admin)
    declare_alias(consumer_team, "Finance Analysts", by=admin)
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql", owners=["user:nobody", "Finance Analysts"])
    assert decided(dataset) == {JOB: ("analytics", "ownership_facet")}


def test_an_ownership_facet_owner_matches_a_slug_after_its_prefix(client, dbt_token, dataset, consumer_team):
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql", owners=["team:Analytics"])
    assert decided(dataset) == {JOB: ("analytics", "ownership_facet")}


def test_an_ownership_facet_no_team_answers_to_leaves_the_decision_to_the_next_rules(
        client, dbt_token, dataset, other_team, admin):
    save_ownership_rules("models/finance/** @warehouse\n", by=admin)
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql", owners=["someone else"])
    assert decided(dataset) == {JOB: ("warehouse", "rules_file")}


# --- the rules file -----------------------------------------------------------------------

def test_job_name_globs_apply_per_namespace_and_the_last_matching_line_wins(
        client, dbt_token, dataset, owner_team, consumer_team, other_team, admin):
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    run_dbt(client, dbt_token, dataset, "finance_margins", "models/marts/finance_margins.sql")
    run_dbt(client, dbt_token, dataset, "legacy_report", "models/finance/legacy/legacy_report.sql")
    save_ownership_rules(
        "# finance owns its folder and its marts\n"
        "models/finance/   @analytics\n"
        "ns:dbt_shop job:*.finance_*  @warehouse\n"
        "ns:other_ns job:*  @checkout   # another namespace: never these jobs\n"
        "models/finance/legacy/**\n", by=admin)
    assert decided(dataset) == {
        JOB: ("analytics", "rules_file"),
        f"{NS}/shop.finance_margins": ("warehouse", "rules_file"),
        # A line with no owner: the rules file does not decide, the token's team does.
        f"{NS}/shop.legacy_report": ("platform", "token"),
    }


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("models/finance/**", "models/finance/a/b.sql", True),
    ("models/finance/*", "models/finance/a/b.sql", False),
    ("/models/finance", "models/finance/a.sql", True),
    ("*.yml", "models/finance/schema.yml", True),
    ("finance/", "models/finance/a.sql", True),  # no slash inside: a folder named so at any depth
    ("/finance/", "models/finance/a.sql", False),  # anchored at the project root
    ("**/schema.yml", "models/x/schema.yml", True),
    ("models/*/revenue.sql", "models/finance/revenue.sql", True),
    ("models/fin?nce/**", "models/finance/x.sql", True),
])
def test_path_patterns_match_as_codeowners_does(pattern, path, matches):
    from registry.ownership import path_regex

    assert (path_regex(pattern).fullmatch(path) is not None) is matches


def test_a_rules_file_with_unreadable_lines_is_refused_whole_naming_each_line(admin, owner_team):
    bad = ("models/checkout/** @checkout\n"
           "models/finance/** @finance\n"
           "models/x/** @checkout @warehouse\n"
           "ns:dbt_shop @checkout\n")
    with pytest.raises(RegistryError) as refused:
        save_ownership_rules(bad, by=admin)
    said = " ".join(refused.value.messages)
    assert 'line 2 (models/finance/** @finance): no team is named or aliased "finance"' in said
    assert "line 3 (models/x/** @checkout @warehouse): names 2 owners" in said
    assert "line 4 (ns:dbt_shop @checkout): a job rule is" in said
    assert not OwnershipRules.objects.exists()


def test_only_a_governance_admin_changes_the_rules(owner, owner_team):
    with pytest.raises(PermissionDenied):
        save_ownership_rules("* @checkout\n", by=owner)


def test_each_change_is_a_new_audited_version_and_the_same_text_changes_nothing(admin, owner_team, other_team):
    first = save_ownership_rules("* @checkout\n", by=admin, note="first cut")
    again = save_ownership_rules("* @checkout", by=admin)
    second = save_ownership_rules("* @warehouse\n", by=admin, note="warehouse takes over")

    assert (first.version, first.created, again.version, again.created, second.version) == (1, True, 1, False, 2)
    assert list(OwnershipRules.objects.values_list("version", "text", "note")) == [
        (2, "* @warehouse\n", "warehouse takes over"), (1, "* @checkout\n", "first cut")]
    audits = AuditEvent.objects.filter(action="ownership_rules.changed").order_by("id")
    assert [(a.before, a.after["version"], a.actor) for a in audits] == [
        (None, 1, admin), ({"version": 1, "text": "* @checkout\n"}, 2, admin)]


# --- re-attribution without a re-ingest -------------------------------------------------

def test_a_rules_change_reattributes_stored_usage_and_the_dataset_badge_without_a_reingest(revenue, consumer_team, admin):
    def unregistered() -> int:
        return Dataset.objects.with_unregistered_readers().get(pk=revenue.pk).unregistered_readers

    assert unregistered() == 1  # the platform team's token: neither owner nor consumer
    with CaptureQueriesContext(connection) as queries:
        saved = save_ownership_rules("models/finance/** @analytics\n", by=admin)
    assert not [q for q in queries.captured_queries if "lineage_runevent" in (q["sql"] or "")]  # nothing re-ingested
    assert [r.to_dict() for r in saved.reattributed] == [
        {"job": JOB, "before": None, "after": "analytics", "rule": "rules_file",
         "detail": "rules v1 line 1: models/finance/** @analytics"}]
    assert decided(revenue) == {JOB: ("analytics", "rules_file")}
    assert unregistered() == 0  # Analytics is a registered consumer

    save_ownership_rules("", by=admin)
    assert decided(revenue) == {JOB: ("platform", "token")}


def test_a_dry_run_says_who_would_move_and_changes_nothing(revenue, consumer_team, admin):
    saved = save_ownership_rules("models/** @analytics\n", by=admin, dry_run=True)
    assert (saved.created, [r.after for r in saved.reattributed]) == (False, ["analytics"])
    assert not OwnershipRules.objects.exists()
    assert decided(revenue) == {JOB: ("platform", "token")}


def test_routing_a_breaking_change_asks_the_team_the_rules_decide_and_says_why(
        revenue, consumer_team, other_team, admin):
    from change_requests.impact import preview_change

    other_team_consumes = Consumer.objects.create(dataset=revenue, team=other_team)
    before = preview_change(revenue, ["amount"])
    assert [(r["team"], r["decided_by"]) for r in before["unregistered_readers"]] == [("platform", "token")]
    assert {t["team"]: t["jobs"] for t in before["affected"]}["warehouse"] == []

    save_ownership_rules("models/finance/** @warehouse\n", by=admin)  # no re-ingest
    after = preview_change(revenue, ["amount"])
    assert other_team_consumes.team.slug in [t["team"] for t in after["affected"]]
    (hit,) = {t["team"]: t["jobs"] for t in after["affected"]}["warehouse"]
    assert (hit["job"], hit["decided_by"], hit["decided_by_detail"]) == (
        JOB, "rules_file", "rules v1 line 1: models/finance/** @warehouse")
    assert after["unregistered_readers"] == []


# --- the ingest keeps the facts, cheaply ---------------------------------------------------

def test_an_event_repeating_a_jobs_facts_touches_no_ownership_row(client, dbt_token, dataset,
                                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # what the process remembers once the event commits
        run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    with CaptureQueriesContext(connection) as queries:
        run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    assert not [q for q in queries.captured_queries if JobTeam._meta.db_table in (q["sql"] or "")]


def test_a_later_event_without_the_facets_keeps_the_facts_and_a_changed_one_replaces_them(client, dbt_token, dataset):
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    own = {"namespace": dataset.namespace, "name": dataset.name}
    post(client, run_event("COMPLETE", job="shop.revenue", job_namespace=NS, inputs=[own]), dbt_token)
    job = JobTeam.objects.get(job_name="shop.revenue")
    assert (job.dbt_unique_id, job.dbt_path) == ("model.shop.revenue", "models/finance/revenue.sql")

    run_dbt(client, dbt_token, dataset, "revenue", "models/marts/revenue.sql", owners=["checkout"])
    job.refresh_from_db()
    assert (job.dbt_path, job.owners, job.team.slug, job.rule) == (
        "models/marts/revenue.sql", ["checkout"], "checkout", "ownership_facet")


# --- where a job appears, the rule that decided shows -------------------------------------

def test_the_dataset_api_and_page_show_the_rule_that_decided_each_reader(revenue, client, consumer_team, admin, consumer):
    save_ownership_rules("models/finance/** @analytics\n", by=admin)
    client.force_login(consumer)
    (reader,) = client.get(f"/api/datasets/{revenue.pk}/").json()["readers"]
    assert (reader["team"], reader["decided_by"], reader["decided_by_detail"]) == (
        "analytics", "rules_file", "rules v1 line 1: models/finance/** @analytics")
    page = client.get(revenue.get_absolute_url()).content.decode()
    readers = page[page.index('id="readers"'):]
    assert "decided by ownership rules file" in readers[:readers.index("</section>")]


def test_the_job_list_and_page_show_each_jobs_team_and_rule_in_a_fixed_number_of_queries(
        client, dbt_token, dataset, consumer_team, admin, consumer, django_assert_num_queries):
    from lineage.models import Job

    save_ownership_rules("models/finance/** @analytics\n", by=admin)
    for n in range(3):
        run_dbt(client, dbt_token, dataset, f"finance_{n}", f"models/finance/finance_{n}.sql")
    client.force_login(consumer)
    client.get("/lineage/jobs/")  # the session and its user, loaded once
    with django_assert_num_queries(4):  # session, user, the page of jobs with their owners (no count), their teams
        first = client.get("/lineage/jobs/").content.decode()
    for n in range(3, 8):
        run_dbt(client, dbt_token, dataset, f"finance_{n}", f"models/finance/finance_{n}.sql")
    with django_assert_num_queries(4):
        more = client.get("/lineage/jobs/").content.decode()
    assert first.count("decided by ownership rules file") == 3 and more.count("decided by ownership rules file") == 8
    job = Job.objects.get(name="shop.finance_0")
    page = client.get(job.get_absolute_url()).content.decode()
    assert "Analytics" in page and "decided by ownership rules file" in page


def test_the_job_owners_api_lists_each_job_with_the_rule_that_decided(revenue, client, consumer_team, admin, consumer):
    save_ownership_rules("models/finance/** @analytics\n", by=admin)
    client.force_login(consumer)
    (job,) = client.get("/api/ownership/jobs/", {"namespace": NS}).json()["results"]
    assert job == {"namespace": NS, "name": "shop.revenue", "team": "analytics", "decided_by": "rules_file",
                   "decided_by_detail": "rules v1 line 1: models/finance/** @analytics",
                   "dbt_unique_id": "model.shop.revenue", "dbt_path": "models/finance/revenue.sql", "owners": []}


# --- jobs nobody owns --------------------------------------------------------------------

def test_jobs_nobody_owns_are_listed_with_the_rule_that_would_claim_them(
        client, dbt_token, dataset, consumer_team, admin, consumer):
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql")
    run_dbt(client, dbt_token, dataset, "orders_clean", "models/checkout/orders_clean.sql")
    own = {"namespace": dataset.namespace, "name": dataset.name}
    store_event(run_event("COMPLETE", job="export", job_namespace="airflow", inputs=[own]))  # no token
    save_ownership_rules("models/checkout/** @analytics\n", by=admin)

    client.force_login(consumer)
    listed = client.get("/api/ownership/unowned-jobs/").json()["results"]
    assert [(j["job"], j["token_team"], j["decided_by"], j["suggested_rule"]) for j in listed] == [
        ("airflow/export", None, "", "ns:airflow job:export @TEAM"),
        (JOB, "platform", "token", "models/finance/** @platform"),
    ]
    page = client.get("/jobs/unowned/").content.decode()
    assert "models/finance/** @platform" in page and "ns:airflow job:export @TEAM" in page
    assert "shop.orders_clean" not in page


# --- the API and the command that change the rules ------------------------------------------

def test_an_admin_puts_the_rules_through_the_api_and_others_are_refused(revenue, client, consumer_team, admin, consumer):
    client.force_login(consumer)
    refused = client.put("/api/ownership/rules/", {"text": "* @analytics\n"}, content_type="application/json")
    assert refused.status_code == 403
    client.force_login(admin)
    answer = client.put("/api/ownership/rules/", {"text": "models/finance/** @analytics\n", "note": "finance"},
                        content_type="application/json")
    assert answer.status_code == 201
    assert answer.json()["version"] == 1 and answer.json()["reattributed"][0]["after"] == "analytics"
    bad = client.put("/api/ownership/rules/", {"text": "models/** @nobody\n"}, content_type="application/json")
    assert bad.status_code == 400 and 'no team is named or aliased \\"nobody\\"' in bad.content.decode()
    assert client.get("/api/ownership/rules/").json()["text"] == "models/finance/** @analytics\n"
    assert [v["version"] for v in client.get("/api/ownership/rules/versions/").json()["results"]] == [1]


def test_the_command_loads_a_rules_file_and_prints_who_moved(revenue, consumer_team, tmp_path):
    rules = tmp_path / "OWNERS"
    rules.write_text("models/finance/** @analytics\n")
    out = io.StringIO()
    call_command("load_ownership_rules", str(rules), "--dry-run", stdout=out)
    assert f"{JOB}: platform -> analytics" not in out.getvalue()  # the token's team is not the rules'
    assert f"{JOB}: nobody -> analytics" in out.getvalue() and "nothing stored" in out.getvalue()
    call_command("load_ownership_rules", str(rules), stdout=out)
    assert "Ownership rules version 1 in force; 1 job changed team." in out.getvalue()
    assert AuditEvent.objects.get(action="ownership_rules.changed").actor_label == "system"
    rules.write_text("models/** @finance\n")
    with pytest.raises(CommandError, match='line 1 .*no team is named or aliased "finance"'):
        call_command("load_ownership_rules", str(rules), stdout=out)


# --- readers in bulk ------------------------------------------------------------------------

def test_the_owner_teams_own_jobs_and_tests_are_never_unregistered_readers(client, dbt_token, dataset, owner_team, admin):
    """dbt-ol sends the owner's models and its tests on them with the platform token: without a rule,
    every one is an unregistered reader; the rules file gives them to the owner team."""
    own = {"namespace": dataset.namespace, "name": dataset.name}
    for test in ("not_null_orders_id", "unique_orders_id", "accepted_values_orders_status"):
        post(client, run_event("COMPLETE", job=f"shop.test.{test}", job_namespace=NS, inputs=[own],
                               job_facets=dbt_facets(f"test.shop.{test}", "models/checkout/schema.yml")), dbt_token)
    run_dbt(client, dbt_token, dataset, "orders_clean", "models/checkout/orders_clean.sql")

    def unregistered():
        return Dataset.objects.with_unregistered_readers().get(pk=dataset.pk).unregistered_readers

    assert unregistered() == 4
    save_ownership_rules("models/checkout/** @checkout\n", by=admin)
    assert unregistered() == 0
    readers = readers_of(dataset, dataset.consumers.all())
    assert [(r.owner_team, r.unregistered, r.rule) for r in readers] == [(True, False, "rules_file")] * 4


@pytest.fixture
def analytics_reads(client, dbt_token, dataset, owner_team, consumer_team, admin):
    """Analytics' models read the orders (consumed already), two more Checkout datasets and an unowned one."""
    payments = Dataset.objects.create(namespace=dataset.namespace, name="retail.public.payments", owner_team=owner_team)
    refunds = Dataset.objects.create(namespace=dataset.namespace, name="retail.public.refunds", owner_team=owner_team)
    loose = Dataset.objects.create(namespace=dataset.namespace, name="scratch.loose")
    run_dbt(client, dbt_token, dataset, "revenue", "models/bi/revenue.sql", columns=("amount",))
    run_dbt(client, dbt_token, payments, "payment_mix", "models/bi/payment_mix.sql", columns=("method", "amount"))
    run_dbt(client, dbt_token, payments, "payment_fees", "models/bi/payment_fees.sql", columns=("fee",))
    run_dbt(client, dbt_token, refunds, "refund_rate", "models/bi/refund_rate.sql", columns=("reason",))
    run_dbt(client, dbt_token, loose, "scratch", "models/bi/scratch.sql", columns=("x",))
    save_ownership_rules("models/bi/** @analytics\n", by=admin)
    return payments, refunds, loose


def test_a_reading_team_sees_the_datasets_its_jobs_read_without_consuming_them(analytics_reads, consumer_team):
    payments, refunds, loose = analytics_reads
    found = readings_to_confirm(consumer_team)
    assert [(r.dataset.name, r.columns, r.jobs, r.confirmable) for r in found] == [
        ("retail.public.payments", ["amount", "fee", "method"],
         [f"{NS}/shop.payment_fees", f"{NS}/shop.payment_mix"], True),
        ("retail.public.refunds", ["reason"], [f"{NS}/shop.refund_rate"], True),
        ("scratch.loose", ["x"], [f"{NS}/shop.scratch"], False),
    ]


def test_one_action_registers_the_team_on_all_of_them_with_their_columns_audited(
        analytics_reads, client, consumer_team, consumer):
    payments, refunds, loose = analytics_reads
    client.force_login(consumer)
    page = client.get("/readings/").content.decode()
    assert "Confirm Analytics consumes these 2 datasets" in page

    answer = client.post("/readings/confirm/", {"team": consumer_team.pk}, follow=True)
    assert "Analytics is now a consumer of 2 datasets" in answer.content.decode()
    assert dict(Consumer.objects.filter(team=consumer_team, dataset__in=[payments, refunds])
                .values_list("dataset__name", "declared_columns")) == {
        "retail.public.payments": ["amount", "fee", "method"], "retail.public.refunds": ["reason"]}
    assert AuditEvent.objects.filter(action="consumer.registered").count() == 2
    (summary,) = AuditEvent.objects.filter(action="consumer.readings_confirmed")
    assert summary.actor == consumer and [d["dataset"] for d in summary.after["datasets"]] == [
        str(payments), str(refunds)]
    assert [r.dataset.name for r in readings_to_confirm(consumer_team)] == ["scratch.loose"]


def test_the_api_confirms_the_datasets_named_and_refuses_an_outsider(analytics_reads, client, consumer_team, consumer,
                                                                      outsider, other_team):
    payments, refunds, loose = analytics_reads
    secret = ApiToken.issue("analytics ci", team=consumer_team)[1]
    listed = client.get(f"/api/teams/{consumer_team.slug}/readings/", **bearer(secret)).json()
    assert listed["next"] is None and listed["previous"] is None
    assert [r["dataset"]["name"] for r in listed["results"]] == ["retail.public.payments", "retail.public.refunds", "scratch.loose"]
    answer = client.post(f"/api/teams/{consumer_team.slug}/readings/confirm/", {"datasets": [refunds.pk]},
                         content_type="application/json", **bearer(secret))
    assert answer.json() == {"registered": [str(refunds)], "waiting_for_owner": []}
    with pytest.raises(PermissionDenied):
        confirm_readings(consumer_team, by=outsider)
    client.force_login(outsider)
    assert client.post(f"/api/teams/{consumer_team.slug}/readings/confirm/", {},
                       content_type="application/json").status_code == 403


def test_the_unowned_jobs_and_readings_pages_take_a_fixed_number_of_queries(
        client, dbt_token, dataset, consumer_team, consumer, admin, django_assert_num_queries):
    save_ownership_rules("models/bi/** @analytics\n", by=admin)
    other = Dataset.objects.create(namespace=dataset.namespace, name="retail.public.more", owner_team=dataset.owner_team)
    for n in range(2):
        run_dbt(client, dbt_token, other, f"bi_{n}", f"models/bi/bi_{n}.sql")
        run_dbt(client, dbt_token, dataset, f"misc_{n}", f"models/misc/misc_{n}.sql")
    client.force_login(consumer)
    client.get("/readings/")

    def counted(path: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        return len(queries)

    few = (counted("/jobs/unowned/"), counted("/api/ownership/unowned-jobs/"), counted("/readings/"),
           counted("/api/ownership/jobs/"))
    third = Dataset.objects.create(namespace=dataset.namespace, name="retail.public.third", owner_team=dataset.owner_team)
    for n in range(2, 6):
        run_dbt(client, dbt_token, third, f"bi_{n}", f"models/bi/bi_{n}.sql")
        run_dbt(client, dbt_token, other, f"misc_{n}", f"models/misc/misc_{n}.sql")
    many = (counted("/jobs/unowned/"), counted("/api/ownership/unowned-jobs/"), counted("/readings/"),
            counted("/api/ownership/jobs/"))
    assert few == many
    assert client.get("/jobs/unowned/").content.decode().count("models/misc/** @platform") == 6


# --- the admin and the aliases API --------------------------------------------------------

def test_an_admin_adds_a_rules_version_in_the_admin_starting_from_the_one_in_force(
        revenue, client, admin, consumer_team, other_team):
    save_ownership_rules("models/finance/** @analytics\n", by=admin)
    client.force_login(admin)
    form = client.get("/admin/registry/ownershiprules/add/").content.decode()
    assert "models/finance/** @analytics" in form

    refused = client.post("/admin/registry/ownershiprules/add/", {"text": "models/** @nobody\n", "note": ""})
    assert refused.status_code == 200 and "no team is named or aliased" in refused.content.decode()
    client.post("/admin/registry/ownershiprules/add/", {"text": "models/finance/** @warehouse\n", "note": "handover"})
    assert list(OwnershipRules.objects.values_list("version", "note")) == [(2, "handover"), (1, "")]
    assert decided(revenue) == {JOB: ("warehouse", "rules_file")}
    assert AuditEvent.objects.filter(action="ownership_rules.changed").count() == 2
    assert client.get(f"/admin/registry/ownershiprules/{OwnershipRules.objects.get(version=1).pk}/change/").status_code == 200


def test_a_team_member_declares_an_alias_over_the_api_and_an_outsider_cannot(
        client, dbt_token, dataset, consumer_team, consumer, outsider, other_team):
    run_dbt(client, dbt_token, dataset, "revenue", "models/finance/revenue.sql", owners=["BI Crew"])
    assert decided(dataset) == {JOB: ("platform", "token")}
    client.force_login(outsider)
    assert client.post(f"/api/teams/{consumer_team.slug}/aliases/", {"alias": "BI Crew"},
                       content_type="application/json").status_code == 403
    client.force_login(consumer)
    assert client.post(f"/api/teams/{consumer_team.slug}/aliases/", {"alias": "BI Crew"},
                       content_type="application/json").status_code == 201
    assert client.get(f"/api/teams/{consumer_team.slug}/aliases/").json() == [{"alias": "bi crew"}]
    assert decided(dataset) == {JOB: ("analytics", "ownership_facet")}  # decided again at once
    clash = client.post(f"/api/teams/{consumer_team.slug}/aliases/", {"alias": "warehouse"},
                        content_type="application/json")
    assert clash.status_code == 409 and "team warehouse's slug" in clash.content.decode()
    assert client.delete(f"/api/teams/{consumer_team.slug}/aliases/bi crew/").status_code == 204
    assert decided(dataset) == {JOB: ("platform", "token")}
    assert list(AuditEvent.objects.filter(action__startswith="team.alias").values_list("action", flat=True)
                .order_by("id")) == ["team.alias_declared", "team.alias_removed"]


# --- a real dbt-ol run: one namespace, one token ----------------------------------------------

def test_one_real_dbt_ol_run_with_one_token_is_attributed_job_by_job_and_its_tests_are_the_owners(
        client, admin, settings):
    """bench/dbt_impact's captured `dbt-ol build`: 121 jobs in namespace impact_dbt. dbt-ol sends a model's
    tests as a job `<model>.test` carrying the model's own dbt_node, and a source's tests with the source's
    node (file models/sources.yml)."""
    import json
    from pathlib import Path

    from registry.models import Team

    events = [json.loads(line) for line in
              (Path(settings.BASE_DIR) / "bench/dbt_impact/captured/baseline_events.jsonl").read_text().splitlines()]
    folders = ["exec", "finance", "logistics", "marketing", "merch", "platform", "risk", "sales", "support"]
    teams = {f: make_team(f.title(), f) for f in [*folders, "ingest"]}
    runner = make_team("dbt runner", "dbt-runner")
    secret = ApiToken.issue("dbt-ol", team=runner, scopes=["read", "lineage:write:any"])[1]
    for event in events:
        assert post(client, event, secret).status_code == 201
    for schema, team in [*((f, teams[f]) for f in folders), ("raw", teams["ingest"])]:
        Dataset.objects.filter(name__startswith=f"impact_wh.{schema}.").update(owner_team=team)

    def noise() -> int:
        """Mentions of a `.test` job as an unregistered reader, over every dataset."""
        return sum(1 for d in Dataset.objects.all() for r in readers_of(d, d.consumers.all())
                   if r.unregistered and r.job.endswith(".test"))

    assert noise() > 0  # every job is the runner token's team
    saved = save_ownership_rules("\n".join(f"models/{f}/** @{f}" for f in folders)
                                 + "\nns:impact_dbt job:impact_wh.raw.source.* @ingest\n"
                                 # the singular tests: a job each, named by the test, with the test's file
                                 + "tests/exec_* @exec\ntests/support_* @support\n", by=admin)
    assert len(saved.reattributed) == 120  # every job but the run's parent job, which has no dbt_node
    assert noise() == 0
    by_rule = {job.job_name: (job.team.slug if job.team else None, job.rule) for job in JobTeam.objects.select_related("team")}
    assert by_rule["impact_wh.sales.impact.fct_orders.test"] == ("sales", "rules_file")
    assert by_rule["impact_wh.raw.source.impact.raw.orders.test"] == ("ingest", "rules_file")
    from registry.ownership import unowned_jobs

    assert [(j.job, j.suggestion) for j in unowned_jobs()] == [
        ("impact_dbt/dbt-run-impact", "ns:impact_dbt job:dbt-run-impact @TEAM")]  # it reads nothing: no token team
    assert set(Team.objects.filter(pk__in=JobTeam.objects.values("team")).values_list("slug", flat=True)) <= {
        *folders, "ingest"}


def test_jobs_first_seen_while_the_rules_changed_are_decided_again_once_the_change_commits(
        revenue, consumer_team, admin, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        save_ownership_rules("models/finance/** @analytics\n", by=admin)
    # As if an event had stored the job concurrently, deciding it under the rules it could see then.
    JobTeam.objects.filter(job_name="shop.revenue").update(team=None, rule="", rule_detail="")
    for callback in callbacks:
        callback()
    assert decided(revenue) == {JOB: ("analytics", "rules_file")}


def test_the_jobs_nobody_owns_come_in_keyset_pages(client, dataset, consumer, settings, django_assert_num_queries):
    for n in range(5):
        store_event(run_event("COMPLETE", job=f"export_{n}", job_namespace="airflow",
                              inputs=[{"namespace": dataset.namespace, "name": dataset.name}]))
    client.force_login(consumer)
    seen, url = [], "/api/ownership/unowned-jobs/?limit=2"
    while url:
        body = client.get(url).json()
        seen += [job["job"] for job in body["results"]]
        url = body["next"]
    assert seen == [f"airflow/export_{n}" for n in range(5)]
    settings.LIST_PAGE_SIZE = 2
    first = client.get("/jobs/unowned/").content.decode()
    after = first.split('rel="next"')[0].rsplit('href="?', 1)[1].rstrip('" ')
    # 1 session, 2 user, 3 the rules in force, 4 the jobs after the token (no count)
    with django_assert_num_queries(4):
        later = client.get(f"/jobs/unowned/?{after}").content.decode()
    assert "airflow/export_2" in later and "airflow/export_0" not in later


# --- the readings page, a page at a time ---------------------------------------------------

@pytest.fixture
def many_reads(owner_team, consumer_team, other_team):
    """Analytics' jobs read eight Checkout datasets, found three ways: three by a job decided to be
    Analytics' (JobTeam), three by a job of a namespace mapped to Analytics, two by a job only
    Analytics' token posted; Warehouse's job reads them all; Analytics consumes one more already."""
    from registry.usage import ColumnRead, NamespaceTeam

    datasets = [Dataset.objects.create(namespace="postgres://shop", name=f"retail.public.t{i}", owner_team=owner_team)
                for i in range(9)]
    JobTeam.objects.create(job_namespace=NS, job_name="shop.decided", team=consumer_team, rule="rules_file")
    JobTeam.objects.create(job_namespace=NS, job_name="shop.warehouse", team=other_team, rule="rules_file")
    NamespaceTeam.objects.create(namespace="analytics_airflow", team=consumer_team)
    jobs = [(NS, "shop.decided", None)] * 3 + [("analytics_airflow", "daily", None)] * 3 + [("adhoc", "nb", consumer_team)] * 3
    for dataset, (namespace, name, token_team) in zip(datasets, jobs, strict=True):
        ColumnRead.objects.create(dataset=dataset, job_namespace=namespace, job_name=name, column="amount",
                                  source="column_lineage", token_team=token_team)
        ColumnRead.objects.create(dataset=dataset, job_namespace=NS, job_name="shop.warehouse", column="amount",
                                  source="column_lineage", token_team=consumer_team)
    Consumer.objects.create(dataset=datasets[-1], team=consumer_team)
    return [d.name for d in datasets[:-1]]


def _reading_rows(page: str) -> list[str]:
    return re.findall(r'<tr class="reading" data-dataset="[^"]*"><td><a href="[^"]+">[^<]*?(retail\.public\.t\d)</a>', page)


def test_the_readings_page_pages_each_team_and_each_page_costs_the_same(
        client, many_reads, consumer, consumer_team, settings, django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 3  # eight datasets: three pages
    client.force_login(consumer)
    listed, urls, url = [], [], "/readings/"
    while url:
        urls.append(url)
        page = client.get(url).content.decode()
        listed += _reading_rows(page)
        found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', page)
        url = "/readings/?" + found.group(1).replace("&amp;", "&") if found else None
    assert listed == many_reads and len(urls) == 3
    assert "team=analytics" in urls[1]
    # The second page starts where the first stopped; every page offers to confirm all eight.
    second = client.get(urls[1]).content.decode()
    assert _reading_rows(second) == many_reads[3:6]
    assert "Confirm Analytics consumes these 8 datasets" in second
    # Any page: 1 session, 2 user, 3 the user's teams, then for the team: 4 the ids of the
    # datasets its jobs read (found by job, namespace and token), 5 its page of those datasets,
    # 6 what its jobs read of them, 7 the confirmable ones, counted up to 1,000
    for url in (urls[0], urls[2]):
        with django_assert_num_queries(7):
            client.get(url)


def test_the_readings_api_pages_by_dataset(client, many_reads, consumer_team):
    secret = ApiToken.issue("analytics ci", team=consumer_team)[1]
    names, url = [], f"/api/teams/{consumer_team.slug}/readings/?limit=3"
    while url:
        body = client.get(url, **bearer(secret)).json()
        names += [r["dataset"]["name"] for r in body["results"]]
        url = body["next"]
    assert names == many_reads
