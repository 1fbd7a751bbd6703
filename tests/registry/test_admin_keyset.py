"""The admin's long lists (datasets, jobs, runs, raw events, column reads, freshness rows
and transitions, the audit log) page by keyset: Next and Previous, no count, no OFFSET."""

from __future__ import annotations

import re

import pytest

from registry.admin import DatasetAdmin
from registry.models import Dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


@pytest.fixture
def small_pages():
    per_page = DatasetAdmin.list_per_page
    DatasetAdmin.list_per_page = 4
    yield
    DatasetAdmin.list_per_page = per_page


def test_the_dataset_admin_walks_every_dataset_by_name_a_page_at_a_time(as_admin, owner_team, small_pages,
                                                                       django_assert_num_queries):
    Dataset.objects.bulk_create(Dataset(namespace=f"s3://lake{i % 2}", name=f"t{i:02}") for i in range(10))
    expected = [d.pk for d in Dataset.objects.order_by("namespace", "name")]
    seen, url, pages = [], "/admin/registry/dataset/", []
    while url:
        response = as_admin.get(url)
        assert response.status_code == 200
        pages.append(url)
        seen += [d.pk for d in response.context["cl"].result_list]
        found = re.search(r'href="(\?[^"]*after=[^"]+)" rel="next"', response.content.decode())
        url = "/admin/registry/dataset/" + found.group(1).replace("&amp;", "&") if found else None
    assert seen == expected and len(pages) == 3
    # 1 session, 2 user, 3 the owner teams of the filter, 4 the page of datasets (a seek, no count)
    with django_assert_num_queries(4):
        as_admin.get(pages[0])
    with django_assert_num_queries(4):  # a later page: the same queries
        body = as_admin.get(pages[1]).content.decode()
    assert 'rel="prev"' in body and "4 datasets on this page" in body


@pytest.mark.parametrize("path", ["lineage/job/", "lineage/run/", "lineage/runevent/", "registry/columnread/",
                                  "registry/inputschema/", "registry/jobteam/", "freshness/datasetfreshness/",
                                  "freshness/freshnesstransition/"])
def test_every_long_admin_list_answers_a_page_a_token_and_an_old_page_number(as_admin, path):
    for query in ("", "?after=garbage", "?p=7"):
        assert as_admin.get(f"/admin/{path}{query}").status_code == 200, query
