"""The lineage graph's column view in a real Chromium, with the keyboard only: from a
dataset's graph to its columns, open one, and follow it downstream to the next dataset."""

from __future__ import annotations

import pytest

from registry.models import Dataset
from tests.lineage.test_column_graph import fields  # noqa: F401 - the shared column-lineage world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reader_follows_a_column_downstream_with_the_keyboard(fields, owner, person):  # noqa: F811
    stage = Dataset.objects.get(name="stage.orders")
    page = person("alice")
    page.goto(stage.get_absolute_url())
    link = page.get_by_role("link", name="its columns, and their lineage")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/lineage/datasets/{stage.pk}/columns/")
    order_id = page.locator("#column-order_id")
    assert not order_id.locator("details").evaluate("d => d.open")  # only the first column starts open
    order_id.locator("summary").focus()
    page.keyboard.press("Enter")
    assert order_id.locator("details").evaluate("d => d.open")
    onward = order_id.get_by_role("link", name="mart.totals.total")
    onward.focus()
    page.keyboard.press("Enter")
    mart = Dataset.objects.get(name="mart.totals")
    page.wait_for_url(f"**/lineage/datasets/{mart.pk}/columns/#column-total")
    assert page.locator("#column-total summary").inner_text().startswith("total")
