"""The home page's list, most urgent first, pages by keyset: one segment a status, each
seeking through its own index, so the hundredth page costs what the first does and no
page counts the list. The order is the one a single CASE over the statuses gave."""

from __future__ import annotations

import re

import pytest
from django.db.models import Case, F, Q, Value, When

from freshness.constants import STATUS_ORDER, FreshnessStatus
from freshness.models import DatasetFreshness
from registry.models import Dataset
from tests.freshness.conftest import HOUR, T0

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-status="(\w+)"[^>]*>\s*<td class="dataset"><a href="[^"]+">([\w.]+)</a>')
NEXT = re.compile(r'href="\?([^"]*after=[^"]+)" rel="next"')
PREVIOUS = re.compile(r'href="\?([^"]*before=[^"]+)" rel="prev"')


@pytest.fixture
def every_status(owner_team, owner):
    """Five datasets of each written status (two sharing a last write), five unknown, five
    no-SLO ones written, two no-SLO ones never written (an SLO removed before a write) and
    five without a freshness row: 32 datasets."""
    made = iter(Dataset.objects.bulk_create(
        Dataset(namespace=f"s3://lake{i % 2}", name=f"t{i:02}", owner_team=owner_team if i % 3 else None,
                owner=owner if i % 3 else None) for i in range(32)))
    rows = []
    for status in (FreshnessStatus.STALE, FreshnessStatus.WARNING, FreshnessStatus.FRESH, FreshnessStatus.NO_SLO):
        for ago in (9, 3, 3, 7, 1):
            rows.append(DatasetFreshness(dataset=next(made), status=status, last_write_at=T0 - ago * HOUR,
                                         max_age=None if status == FreshnessStatus.NO_SLO else 6 * HOUR))
    rows += [DatasetFreshness(dataset=next(made), status=FreshnessStatus.UNKNOWN, max_age=HOUR) for _ in range(5)]
    rows += [DatasetFreshness(dataset=next(made), status=FreshnessStatus.NO_SLO) for _ in range(2)]
    DatasetFreshness.objects.bulk_create(rows)
    return [d.name for d in _one_sort(Dataset.objects.all())]


def _one_sort(datasets):
    """The order of one query: a rank over the statuses, the last write (never-written
    last), equal writes by dataset id; the never-written by name (the no-SLO ones with a
    freshness row or without)."""
    rank = Case(*(When(freshness__status=s, then=Value(i)) for i, s in enumerate(STATUS_ORDER)),
                default=Value(len(STATUS_ORDER)))
    never_written_no_slo = Q(freshness__isnull=True) | Q(freshness__status=FreshnessStatus.NO_SLO,
                                                        freshness__last_write_at__isnull=True)
    rank = Case(When(never_written_no_slo, then=Value(len(STATUS_ORDER))), default=rank)
    return datasets.annotate(urgency=rank).order_by(
        "urgency", F("freshness__last_write_at").asc(nulls_last=True),
        Case(When(freshness__last_write_at__isnull=False, then=F("pk"))), "namespace", "name")


def _walk(client, start: str, link: re.Pattern) -> tuple[list[list[str]], str]:
    """The pages from `start` on, following `link` (next or previous): their rows, and
    the last page's address."""
    pages, url = [], start
    while True:
        body = client.get(url).content.decode()
        pages.append([name for _, name in ROW.findall(body)])
        found = link.search(body)
        if not found:
            return pages, url
        url = "/?" + found.group(1).replace("&amp;", "&")


def test_next_links_walk_every_dataset_once_in_the_order_of_one_sort(logged_in, every_status, settings):
    settings.LIST_PAGE_SIZE = 3  # pages that begin and end inside a status and across two
    pages, _ = _walk(logged_in, "/", NEXT)
    assert [name for page in pages for name in page] == every_status
    assert all(len(page) == 3 for page in pages[:-1])


def test_previous_links_walk_back_the_same_pages(logged_in, every_status, settings):
    settings.LIST_PAGE_SIZE = 4
    forward, last = _walk(logged_in, "/", NEXT)
    backward, first = _walk(logged_in, last, PREVIOUS)
    assert backward == forward[::-1]
    assert 'rel="prev"' not in logged_in.get(first).content.decode()


def test_a_deep_page_costs_the_queries_of_the_first(logged_in, every_status, settings, django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 3
    # 1. the session, 2. the user, 3. the teams of the filter, 4. the stale datasets (a seek
    # through the freshness rows' status and last write; owner team, owner, consumer count,
    # freshness row and badges joined in)
    with django_assert_num_queries(4):
        body = logged_in.get("/").content.decode()
    url = "/"
    for _ in range(7):  # to the eighth page, inside the written no-SLO datasets
        url = "/?" + NEXT.search(logged_in.get(url).content.decode()).group(1).replace("&amp;", "&")
    with django_assert_num_queries(4):  # the same, seeking from the token's row
        deep = logged_in.get(url).content.decode()
    assert [name for _, name in ROW.findall(deep)] == every_status[21:24]
    assert "of 32" not in body  # no count of the list


def test_a_page_that_spans_statuses_reads_each_of_them_once(logged_in, every_status, settings,
                                                            django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 12
    # 1.-3. as above, 4.-6. stale, warning, unknown (the page's 12 rows and the one after)
    with django_assert_num_queries(6):
        body = logged_in.get("/").content.decode()
    assert [name for _, name in ROW.findall(body)] == every_status[:12]


def test_filters_are_kept_by_the_page_links(logged_in, every_status, settings, owner_team):
    settings.LIST_PAGE_SIZE = 2
    pages, _ = _walk(logged_in, f"/?team={owner_team.slug}", NEXT)
    owned = set(Dataset.objects.filter(owner_team=owner_team).values_list("name", flat=True))
    assert [name for page in pages for name in page] == [n for n in every_status if n in owned]
    pages, _ = _walk(logged_in, "/?q=lake1", NEXT)
    in_lake1 = set(Dataset.objects.filter(namespace="s3://lake1").values_list("name", flat=True))
    assert [name for page in pages for name in page] == [n for n in every_status if n in in_lake1]


def test_an_old_page_number_or_an_edited_token_gives_the_first_page(logged_in, every_status, settings):
    settings.LIST_PAGE_SIZE = 3
    for url in ("/?page=100", "/?after=not-a-token", "/?after=WzksIngiXQ", "/?before=WzAsIm5vdC1hLXRpbWUiLCJ4IiwieSJd"):
        response = logged_in.get(url)
        assert response.status_code == 200, url
        assert [name for _, name in ROW.findall(response.content.decode())] == every_status[:3], url
