"""In a browser, the freshly loaded demo reads as just now: its jobs ran in the last hours
(the one still running started minutes ago, not months) and no dataset is older than the
demo's own history of writes (at most two days)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from registry.env import parse_contract_store

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The cells of the column headed `header` in every table of the page.
COLUMN = """header => [...document.querySelectorAll("table")].flatMap(table => {
    const index = [...table.querySelectorAll("thead th")].findIndex(th => th.textContent.trim() === header);
    return index < 0 ? [] : [...table.querySelectorAll("tbody tr")]
        .map(row => row.children[index]).filter(Boolean).map(cell => cell.textContent.trim());
})"""


UNITS = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1), "s": timedelta(seconds=1)}


def parse_age(text: str) -> timedelta:
    """'1d 6h' -> 30 hours: the pages' durations."""
    parts = re.findall(r"(\d+)([dhms])", text)
    assert parts, text
    return sum((int(n) * UNITS[unit] for n, unit in parts), timedelta())


@pytest.fixture
def demo(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    call_command("load_demo", stdout=io.StringIO())


def test_the_demos_jobs_ran_in_the_last_hours_and_its_datasets_are_at_most_two_days_old(demo, person):
    page = person("carol", "demo-password")
    page.goto("/lineage/jobs/")
    running = page.locator("tr", has_text="checkout.returns_sync")
    assert "RUNNING" in running.inner_text()
    times = [datetime.strptime(at, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
             for at in page.evaluate(COLUMN, "At (UTC)") if at != "—"]
    assert len(times) == 9  # eight pipelines and the retailer's dbt tests
    now = datetime.now(UTC)
    assert all(now - timedelta(hours=3) < at <= now for at in times), times

    page.goto("/")
    ages = [parse_age(age) for age in page.evaluate(COLUMN, "Age") if age != "—"]
    assert len(ages) >= 8 and max(ages) <= timedelta(days=2), ages
