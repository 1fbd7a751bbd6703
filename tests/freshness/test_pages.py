"""The dataset list, most urgent first, with each dataset's freshness status; the dataset page's freshness section, the overview."""

from __future__ import annotations

import re
from datetime import timedelta

from freshness.evaluation import evaluate, record_write, set_slo
from registry.models import Dataset
from tests.freshness.conftest import HOUR, T0


def _world(owner_team, owner):
    """orders: stale; returns: warning; carts: unknown; payments: fresh; refunds: no SLO."""
    made = {n: Dataset.objects.create(namespace="postgres://retail-db:5432", name=f"retail.public.{n}",
                                      owner_team=owner_team, owner=owner)
            for n in ("orders", "returns", "carts", "payments", "refunds")}
    for name, written_ago in (("orders", 7), ("returns", 5), ("carts", None), ("payments", 1)):
        set_slo(made[name], max_age=6 * HOUR, warn_after=4 * HOUR, by=owner, now=T0 - 8 * HOUR)
        if written_ago is not None:
            written = T0 - written_ago * HOUR
            record_write(made[name], at=written, row_count=10, now=written)
    evaluate(T0)  # the sweep that finds orders stale and returns in warning
    return made


def test_the_dataset_list_is_one_table_most_urgent_first(client, owner_team, owner, clock, django_assert_num_queries):
    _world(owner_team, owner)
    client.force_login(owner)
    # 1. the session, 2. the user, 3. the teams of the filter, 4.-9. the datasets with owner
    # team, owner, consumer count, freshness row and badges, a seek a status (stale, warning,
    # unknown, fresh, no SLO written, no SLO never written): no count
    with django_assert_num_queries(9):
        page = client.get("/").content.decode()
    assert page.count("<table") == 1 and page.count("<thead>") == 1
    rows = re.findall(r'<tr data-status="(\w+)"[^>]*>\s*<td class="dataset"><a href="[^"]+">retail\.public\.(\w+)</a>', page)
    assert rows == [("stale", "orders"), ("warning", "returns"), ("unknown", "carts"),
                    ("fresh", "payments"), ("no_slo", "refunds")]
    # The overview's links (/#status-stale) land on the first row of each status.
    assert re.findall(r'id="status-(\w+)"', page) == ["stale", "warning", "unknown", "fresh", "no_slo"]
    assert "7h" in page  # orders' age
    # returns (warning, written 04:00) goes stale at 04:00 + 6 h; payments (fresh, 08:00) warns at 08:00 + 4 h
    assert "2026-03-02 10:00 UTC</time>, then Stale" in page
    assert "2026-03-02 12:00 UTC</time>, then Warning" in page


def test_deadline_says_the_same_on_the_list_and_the_dataset_page(client, owner_team, owner, clock):
    made = _world(owner_team, owner)
    client.force_login(owner)
    listed = client.get("/").content.decode()
    row = re.search(r'<tr data-status="fresh"[^>]*>.*?</tr>', listed, re.S).group(0)
    header = re.search(r'<th title="([^"]+)">Deadline</th>', listed).group(1)
    on_list = re.search(r"<td>(<time[^>]*>[^<]+</time>, then \w+)</td>\s*</tr>", row).group(1)

    page = client.get(made["payments"].get_absolute_url()).content.decode()
    term, value = re.search(r'<dt title="([^"]+)">Deadline</dt><dd>(.*?)</dd>', page).groups()
    assert (term, value) == (header, on_list) == (
        "When the status next changes if nothing is written",
        '<time datetime="2026-03-02T12:00:00+00:00">2026-03-02 12:00 UTC</time>, then Warning')


def test_the_number_of_list_queries_does_not_grow_with_the_datasets(client, owner_team, owner, clock,
                                                                     django_assert_num_queries):
    _world(owner_team, owner)
    for i in range(30):
        d = Dataset.objects.create(namespace="s3://lake", name=f"t{i}", owner_team=owner_team, owner=owner)
        set_slo(d, max_age=HOUR, by=owner)
    client.force_login(owner)
    with django_assert_num_queries(9):  # as above
        client.get("/")


def test_the_dataset_page_shows_the_slo_the_status_and_the_timeline(client, owner_team, owner, consumer, clock):
    made = _world(owner_team, owner)
    client.force_login(consumer)
    page = client.get(made["orders"].get_absolute_url()).content.decode()
    section = page[page.index('id="freshness"'):]
    assert 'data-status="stale"' in section
    assert "at most 6h since the last successful write; warning after 4h; empty writes do not count" in section
    timeline = re.findall(r"<li><span class=\"muted\">([^<]+)</span>\s*([^<]+?) → <span class=\"tag[^\"]*\">([^<]+)</span>",
                          section)
    assert [(frm.strip(), to) for _, frm, to in timeline] == [
        ("Fresh", "Stale"), ("Unknown (no successful write yet)", "Fresh"), ("No SLO", "Unknown (no successful write yet)")]
    assert "Beat sweep, 10800.0s after its deadline" in section  # due at the warning threshold, 3 h ago


def test_the_overview_counts_datasets_by_status(client, owner_team, owner, clock):
    _world(owner_team, owner)
    client.force_login(owner)
    page = client.get("/freshness/").content.decode()
    for label in ("Stale: 1", "Warning: 1", "Fresh: 1", "No SLO: 1", "Unknown (no successful write yet): 1"):
        assert label in page


def test_the_overview_counts_up_to_a_cap_and_says_there_are_more(client, owner_team, owner, clock, monkeypatch):
    _world(owner_team, owner)  # one of each status
    for i in range(3):
        Dataset.objects.create(namespace="postgres://retail-db:5432", name=f"retail.public.extra{i}")
    monkeypatch.setattr("freshness.querysets.STATUS_COUNT_CAP", 2)  # as 1,000 is, at a million datasets
    monkeypatch.setattr("freshness.querysets.status_counts.__defaults__", (2,))
    client.force_login(owner)
    page = client.get("/freshness/").content.decode()
    for label in ("Stale: 1<", "Warning: 1<", "Fresh: 1<", "Unknown (no successful write yet): 1<", "No SLO: 2+<"):
        assert label in page


def test_the_overview_needs_the_same_queries_whatever_the_number_of_transitions(client, owner_team, owner, clock,
                                                                                 django_assert_num_queries):
    _world(owner_team, owner)
    client.force_login(owner)
    # 1. session, 2. user, 3. the counts by status (each capped), 4. the teams of the
    # status view's filter, 5.-6. its page of stale datasets (a seek through those with a
    # value in the sort column, then those without), 7. the last sweep, 8. the latest 50
    # transitions with their datasets
    with django_assert_num_queries(8):
        client.get("/freshness/")


def test_a_ninety_second_slo_reads_one_minute_thirty_on_the_dataset_page(client, dataset, owner, clock):
    set_slo(dataset, max_age=timedelta(seconds=90), warn_after=None, by=owner, now=T0)
    record_write(dataset, at=T0, row_count=1, now=T0)
    evaluate(T0 + timedelta(seconds=200))
    client.force_login(owner)
    section = client.get(dataset.get_absolute_url()).content.decode()
    section = section[section.index('id="freshness"'):]
    assert "at most 1m 30s since the last successful write" in section
    assert 'value="90s"' in section  # the edit form keeps it too
    # the reason the set-based pass wrote (the SQL rule)
    assert "last successful write 3m 20s ago; the SLO allows 1m 30s" in section
