"""Every API list pages by keyset: following `next` walks each row once in the list's
order, `previous` walks back, and a late page costs the queries of the first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from freshness.models import DatasetFreshness
from incidents.models import Incident
from registry.models import Dataset

pytestmark = pytest.mark.django_db


def walk(client, url: str, link: str = "next") -> tuple[list[list[dict]], str]:
    """The pages from `url` on, following `link`: their rows, and the last page's address."""
    pages = []
    while True:
        body = client.get(url).json()
        pages.append(body["results"])
        if not body[link]:
            return pages, url
        url = body[link]


@pytest.fixture
def datasets(owner_team):
    return Dataset.objects.bulk_create(Dataset(namespace="s3://lake", name=f"t{i:02}", owner_team=owner_team)
                                       for i in range(9))


def test_the_freshness_list_walks_the_deadlines_then_the_rows_without_one(logged_in, datasets,
                                                                          django_assert_num_queries):
    now = timezone.now()
    # Two rows share a deadline; three have none (stale, or no SLO): they come last.
    deadlines = [now + timedelta(hours=h) for h in (5, 1, 3, 1, 2, 4)] + [None, None, None]
    DatasetFreshness.objects.bulk_create(
        DatasetFreshness(dataset=d, status="fresh" if at else "stale", next_check_at=at, last_write_at=now)
        for d, at in zip(datasets, deadlines, strict=True))
    expected = [d.name for at, d in sorted(
        zip(deadlines, datasets, strict=True), key=lambda pair: (pair[0] is None, pair[0] or now, pair[1].pk))]

    pages, last = walk(logged_in, "/api/freshness/?limit=2")
    assert [row["name"] for page in pages for row in page] == expected
    back, _ = walk(logged_in, last, "previous")
    assert [[row["name"] for row in page] for page in back] == [[row["name"] for row in page] for page in pages[::-1]]
    # 1 session, 2 user, 3 the rows with a deadline after none (the page is full)
    with django_assert_num_queries(3):
        logged_in.get("/api/freshness/?limit=2")
    second = logged_in.get("/api/freshness/?limit=2").json()["next"]
    with django_assert_num_queries(3):  # from the token of the second row: the same seek
        assert [r["name"] for r in logged_in.get(second).json()["results"]] == expected[2:4]


def test_the_incident_list_walks_newest_first_and_back(logged_in, datasets, django_assert_num_queries):
    now = timezone.now()
    made = Incident.objects.bulk_create(
        Incident(dataset=d, cause="freshness", summary=f"late {i}", opened_at=now - timedelta(minutes=i % 4))
        for i, d in enumerate(datasets))
    expected = [i.pk for i in sorted(made, key=lambda i: (i.opened_at, i.pk), reverse=True)]
    pages, _ = walk(logged_in, "/api/incidents/?limit=4")
    assert [row["id"] for page in pages for row in page] == expected
    first = logged_in.get("/api/incidents/?limit=4").json()
    second = logged_in.get(first["next"]).json()
    assert [row["id"] for row in logged_in.get(second["previous"]).json()["results"]] == expected[:4]
    # 1 session, 2 user, 3 the page of incidents with their datasets, 4 their events,
    # 5 the teams told; the same on the first page
    with django_assert_num_queries(5):
        logged_in.get("/api/incidents/?limit=4")
    with django_assert_num_queries(5):
        logged_in.get(first["next"])


def test_a_token_of_another_list_is_a_400(logged_in, datasets):
    token = logged_in.get("/api/datasets/?limit=2").json()["next"].split("after=")[1]
    response = logged_in.get(f"/api/incidents/?after={token}")
    assert response.status_code == 400 and response.json()["code"] == "bad_page_token"
