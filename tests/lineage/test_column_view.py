"""The column view: a dataset expanded to its columns, each with the columns that feed it and
those it feeds, every one a link to the next dataset's column view."""

from __future__ import annotations

import re

import pytest

from registry.models import Dataset

from .test_column_graph import fields  # noqa: F401 - the shared column-lineage world

pytestmark = pytest.mark.django_db


def _column(page: str, field: str) -> str:
    return re.search(rf'<li id="column-{field}" data-column="{field}">.*?</details>', page, re.S).group(0)


def test_a_dataset_expands_to_its_columns_and_each_says_what_feeds_it_and_what_it_feeds(fields, client, owner):  # noqa: F811
    stage = Dataset.objects.get(name="stage.orders")
    raw, mart = Dataset.objects.get(name="raw.orders"), Dataset.objects.get(name="mart.totals")
    client.force_login(owner)
    page = client.get(f"/lineage/datasets/{stage.pk}/columns/").content.decode()
    assert re.findall(r'data-column="(\w+)"', page) == ["amount", "order_id"]
    amount = _column(page, "amount")
    fed_by, feeds = amount.split("Feeds", 1)
    assert f'href="/lineage/datasets/{raw.pk}/columns/#column-amount"' in fed_by
    assert f'href="/lineage/datasets/{mart.pk}/columns/#column-total"' in feeds
    # <details>/<summary> expand a column with the keyboard; the summary holds no link.
    summary = re.search(r"<summary>.*?</summary>", amount, re.S).group(0)
    assert "<a " not in summary


def test_following_a_column_downstream_lands_on_it_in_the_next_dataset(fields, client, owner):  # noqa: F811
    mart = Dataset.objects.get(name="mart.totals")
    client.force_login(owner)
    page = client.get(f"/lineage/datasets/{mart.pk}/columns/").content.decode()
    total = _column(page, "total")
    assert "stage.orders.<code>amount</code>" in total and "stage.orders.<code>order_id</code>" in total


def test_a_dataset_without_column_lineage_says_so(client, owner, dataset):
    client.force_login(owner)
    page = client.get(f"/lineage/datasets/{dataset.pk}/columns/").content.decode()
    assert "No column lineage yet" in page


def test_the_lineage_graph_links_to_the_column_view(fields, client, owner):  # noqa: F811
    stage = Dataset.objects.get(name="stage.orders")
    client.force_login(owner)
    page = client.get(stage.get_absolute_url()).content.decode()
    assert f'href="/lineage/datasets/{stage.pk}/columns/"' in page
