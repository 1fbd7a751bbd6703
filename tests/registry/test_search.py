"""Dataset search (`Dataset.objects.matching`, the API's `?search=` and the home page's box):
the words of the query inside the words of namespace, name and description, answered from
one GIN index (migration registry.0018), so a search costs what its matches cost."""

import pytest
from django.db import connection

from registry.models import Dataset
from registry.querysets import SEARCH_MAX_CHARS

pytestmark = pytest.mark.django_db


@pytest.fixture
def estate(db):
    """A small warehouse as real estates name theirs."""
    rows = [
        ("snowflake://acme", "analytics.orders_daily_2024", "Orders per day, one row per store"),
        ("snowflake://acme", "analytics.orders_weekly_2024", ""),
        ("snowflake://acme", "finance.InvoiceLines", "Invoice lines as the ERP exports them"),
        ("s3://lake", "raw/clickstream", ""),
        ("postgres://retail-db:5432", "retail.public.customers", "Customers who ordered at least once"),
        ("kafka://events", "payments-v2", "100% of the card payments, quotes 'as sent'"),
    ]
    Dataset.objects.bulk_create(Dataset(namespace=ns, name=name, description=text) for ns, name, text in rows)


def found(text: str) -> list[str]:
    return sorted(Dataset.objects.matching(text).values_list("name", flat=True))


def test_a_whole_word_finds_the_datasets_that_hold_it(estate):
    assert found("orders") == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024"]
    assert found("2024") == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024"]


def test_the_start_of_a_word_finds_it(estate):
    assert found("click") == ["raw/clickstream"]
    assert found("custom") == ["retail.public.customers"]


def test_any_substring_of_a_word_finds_it_as_before(estate):
    assert found("rders_dai") == ["analytics.orders_daily_2024"]
    assert found("stream") == ["raw/clickstream"]
    assert found("voiceli") == ["finance.InvoiceLines"]  # case is ignored, inside a camel-cased word too


def test_a_dotted_or_underscored_query_matches_across_the_words_it_spans(estate):
    assert found("analytics.orders_daily") == ["analytics.orders_daily_2024"]
    assert found("orders_weekly_2024") == ["analytics.orders_weekly_2024"]
    assert found("snowflake://acme") == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024",
                                         "finance.InvoiceLines"]


def test_words_apart_find_the_datasets_that_hold_both(estate):
    assert found("orders 2024 daily") == ["analytics.orders_daily_2024"]
    assert found("ORDERS store") == ["analytics.orders_daily_2024"]  # a word of the description


def test_the_description_and_the_namespace_are_searched(estate):
    assert found("erp") == ["finance.InvoiceLines"]
    assert found("retail-db") == ["retail.public.customers"]


def test_a_query_that_matches_nothing_finds_nothing(estate):
    assert found("shipments") == []
    assert found("orders_monthly") == []


@pytest.mark.parametrize("text", ["%", "_", "%_%", "'", '"', "\\", "--", "'; DROP TABLE registry_dataset; --"])
def test_punctuation_alone_finds_nothing_and_is_no_pattern(estate, text):
    assert found(text) == []
    assert Dataset.objects.count() == 6


def test_quotes_and_like_wildcards_around_words_are_only_separators(estate):
    assert found("'payments'") == ["payments-v2"]
    assert found("100%") == ["payments-v2"]
    assert found("orders%2024") == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024"]
    assert found("tsql:* & !x | y") == []  # tsquery syntax is text like any other


def test_a_very_long_query_is_cut_to_its_first_characters(estate):
    assert found("orders " + "x" * 10_000) == []
    assert found("orders" + " " * 10_000 + "x") == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024"]
    assert found("analytics " * 1000) == found("analytics")
    assert len("analytics " * 1000) > SEARCH_MAX_CHARS


def test_letters_beyond_ascii_are_letters(db):
    Dataset.objects.create(namespace="s3://lake", name="ventes.café_über")
    assert found("CAFÉ") == ["ventes.café_über"]
    assert found("über") == ["ventes.café_über"]


def test_the_index_answers_the_search(estate):
    """The search's condition is one the words index answers: with the table scans a large
    table makes dear ruled out, the planner reads that index (a bitmap scan on it)."""
    sql, params = Dataset.objects.matching("orders_dai").order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "dataset_search_words" in plan


def test_the_api_and_the_home_page_search_alike(logged_in, estate):
    api = logged_in.get("/api/datasets/?search=rders").json()
    assert [row["name"] for row in api["results"]] == ["analytics.orders_daily_2024", "analytics.orders_weekly_2024"]
    page = logged_in.get("/?q=rders").content.decode()
    assert "analytics.orders_daily_2024" in page and "analytics.orders_weekly_2024" in page
    assert "raw/clickstream" not in page


def test_search_results_page_by_keyset(logged_in, db):
    Dataset.objects.bulk_create(Dataset(namespace="postgres://wh", name=f"sales.orders_{i:02}") for i in range(12))
    Dataset.objects.bulk_create(Dataset(namespace="postgres://wh", name=f"sales.refunds_{i:02}") for i in range(12))
    seen, url = [], "/api/datasets/?limit=5&search=orders"
    while url:
        body = logged_in.get(url).json()
        seen += [row["name"] for row in body["results"]]
        url = body["next"]
    assert seen == [f"sales.orders_{i:02}" for i in range(12)]


def test_a_search_costs_a_fixed_number_of_queries(logged_in, estate, django_assert_num_queries):
    with django_assert_num_queries(3):  # session, user, the page (owner, team and consumer count joined in)
        logged_in.get("/api/datasets/?search=orders")
    with django_assert_num_queries(3):  # the same with no match
        logged_in.get("/api/datasets/?search=shipments")


def test_punctuation_alone_on_the_pages_answers_an_empty_list(logged_in, estate):
    assert logged_in.get("/api/datasets/?search=%25").json()["results"] == []
    assert logged_in.get("/?q=%25_").status_code == 200
