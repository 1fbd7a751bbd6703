"""The dataset list pages by keyset: every page seeks through the (namespace, name) index,
so the hundredth page costs what the first does, and no page counts the list."""

import pytest

from registry.models import Consumer, Dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def thirty_datasets(owner_team, owner, consumer_team):
    datasets = Dataset.objects.bulk_create(
        Dataset(namespace=f"postgres://ns{i % 3}", name=f"table_{i:02}", owner_team=owner_team, owner=owner)
        for i in range(30))
    Consumer.objects.bulk_create(Consumer(dataset=d, team=consumer_team) for d in datasets[::2])
    return sorted((d.namespace, d.name) for d in datasets)


def names(body) -> list[tuple[str, str]]:
    return [(row["namespace"], row["name"]) for row in body["results"]]


def test_following_next_links_walks_every_dataset_once_in_order(logged_in, thirty_datasets):
    seen, url = [], "/api/datasets/?limit=7"
    while url:
        body = logged_in.get(url).json()
        seen += names(body)
        url = body["next"]
    assert seen == thirty_datasets


def test_previous_links_walk_back_the_same_pages(logged_in, thirty_datasets):
    first = logged_in.get("/api/datasets/?limit=10").json()
    second = logged_in.get(first["next"]).json()
    third = logged_in.get(second["next"]).json()
    assert first["previous"] is None and third["next"] is None
    assert names(logged_in.get(third["previous"]).json()) == names(second) == thirty_datasets[10:20]
    assert names(logged_in.get(second["previous"]).json()) == thirty_datasets[:10]


def test_a_later_page_costs_the_same_queries_as_the_first(logged_in, thirty_datasets, django_assert_num_queries):
    first = logged_in.get("/api/datasets/?limit=5").json()
    with django_assert_num_queries(3):  # session, user, the page (owner, team and consumer count joined in)
        later = logged_in.get(first["next"]).json()
    assert names(later) == thirty_datasets[5:10]
    assert {row["consumer_count"] for row in later["results"]} <= {0, 1}


def test_filters_are_kept_by_the_page_links(logged_in, thirty_datasets):
    body = logged_in.get("/api/datasets/?limit=4&search=ns1").json()
    assert all(ns == "postgres://ns1" for ns, _ in names(body))
    assert "search=ns1" in body["next"]
    assert names(logged_in.get(body["next"]).json()) == [d for d in thirty_datasets if d[0] == "postgres://ns1"][4:8]


def test_an_edited_page_token_is_a_400_that_says_so(logged_in, thirty_datasets):
    response = logged_in.get("/api/datasets/?after=not-a-token")
    assert response.status_code == 400
    assert response.json()["code"] == "bad_page_token"
