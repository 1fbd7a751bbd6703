"""The freshness status view: what is stale now, whose it is, since when, its last write and
next deadline, with drift and failing checks beside it; sortable and filterable by owner team."""

from __future__ import annotations

import re

from freshness.evaluation import evaluate, record_write, set_slo
from lineage.models import QualityCheck
from registry.models import Dataset
from tests.freshness.conftest import HOUR, T0
from tests.freshness.test_pages import _world


def _rows(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr data-status="(\w+)" data-dataset="retail\.public\.(\w+)">', page)


def _a_stale_dataset_of(team, person, name: str, *, written_hours_ago: int) -> Dataset:
    made = Dataset.objects.create(namespace="postgres://retail-db:5432", name=f"retail.public.{name}",
                                  owner_team=team, owner=person)
    set_slo(made, max_age=2 * HOUR, warn_after=None, by=person, now=T0 - 20 * HOUR)
    written = T0 - written_hours_ago * HOUR
    record_write(made, at=written, row_count=10, now=written)
    return made


def test_the_status_view_lists_what_is_stale_or_in_warning_now_longest_first(client, owner_team, owner, clock):
    _world(owner_team, owner)
    client.force_login(owner)
    page = client.get("/freshness/").content.decode()
    # the sweep at 09:00 found orders stale and returns in warning
    assert _rows(page) == [("stale", "orders"), ("warning", "returns")]
    orders = re.search(r'<tr data-status="stale".*?</tr>', page, re.S).group(0)
    assert owner_team.name in orders and owner.get_username() in orders  # whose
    assert '<time datetime="2026-03-02T09:00:00+00:00">2026-03-02 09:00 UTC</time>' in orders  # since the sweep
    assert "2026-03-02 02:00 UTC</time>" in orders  # its last write


def test_a_reader_filters_the_status_view_by_owner_team_and_status(client, owner_team, owner, other_team, outsider,
                                                                 clock):
    _world(owner_team, owner)
    _a_stale_dataset_of(other_team, outsider, "ledger", written_hours_ago=3)
    evaluate(T0)
    client.force_login(owner)
    assert sorted(_rows(client.get("/freshness/").content.decode())) == [
        ("stale", "ledger"), ("stale", "orders"), ("warning", "returns")]
    assert _rows(client.get(f"/freshness/?team={other_team.slug}").content.decode()) == [("stale", "ledger")]
    assert _rows(client.get(f"/freshness/?team={owner_team.slug}&status=stale").content.decode()) == [
        ("stale", "orders")]
    page = client.get(f"/freshness/?team={other_team.slug}&status=warning").content.decode()
    assert _rows(page) == [] and f"Nothing warning owned by {other_team.name} now." in page


def test_a_reader_sorts_the_status_view_by_any_column_both_ways(client, owner_team, owner, other_team, outsider,
                                                              clock):
    _world(owner_team, owner)
    _a_stale_dataset_of(other_team, outsider, "ledger", written_hours_ago=3)
    evaluate(T0)
    client.force_login(owner)
    by_team = _rows(client.get("/freshness/?sort=team").content.decode())
    teams_in_order = sorted([owner_team.name, other_team.name])
    first = "ledger" if teams_in_order[0] == other_team.name else "orders"
    assert by_team[0][1] == first
    assert [name for _, name in _rows(client.get("/freshness/?sort=last_write").content.decode())] == [
        "orders", "returns", "ledger"]
    assert [name for _, name in _rows(client.get("/freshness/?sort=-last_write").content.decode())] == [
        "ledger", "returns", "orders"]
    # The header says how the table is sorted, and its link reverses it.
    page = client.get("/freshness/?sort=last_write").content.decode()
    header = re.search(r'<th scope="col" aria-sort="ascending"><a href="([^"]+)"', page).group(1)
    assert header == "?sort=-last_write"
    # An unknown sort key is the default order, not an error.
    assert client.get("/freshness/?sort=owner_id").status_code == 200


def test_the_status_view_shows_drift_and_failing_checks_beside_each_stale_dataset(client, owner_team, owner, clock):
    made = _world(owner_team, owner)
    QualityCheck.objects.create(dataset=made["orders"], job_namespace="dbt", job_name="test.orders", event_time=T0,
                                assertions=[{"assertion": "not_null", "column": "id", "success": False}],
                                assertion_count=1, failed_count=1)
    client.force_login(owner)
    page = client.get("/freshness/").content.decode()
    orders = re.search(r'<tr data-status="stale".*?</tr>', page, re.S).group(0)
    assert "1 failed check" in orders and "#data-quality" in orders


def test_the_status_view_needs_the_same_queries_whatever_the_number_of_stale_datasets(
        client, owner_team, owner, clock, django_assert_num_queries):
    _world(owner_team, owner)
    client.force_login(owner)
    # 1. session, 2. user, 3. the counts by status (each capped), 4. the teams of the filter,
    # 5. one page of rows with owner, freshness and badges (no count: a seek), 6. the rows with no
    # value in the sort column (none here; read since the page is not full), 7. the last sweep,
    # 8. the latest 50 transitions with their datasets
    with django_assert_num_queries(8):
        client.get("/freshness/")
    for i in range(5):
        _a_stale_dataset_of(owner_team, owner, f"more{i}", written_hours_ago=3)
    evaluate(T0)
    with django_assert_num_queries(8):
        page = client.get("/freshness/").content.decode()
    assert len(_rows(page)) == 7


def test_the_navigation_links_to_the_status_view(client, owner):
    client.force_login(owner)
    assert '<a href="/freshness/"' in client.get("/").content.decode()


def test_the_status_view_pages_by_keyset_in_the_order_of_its_sort(client, owner_team, owner, clock, settings,
                                                                  django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 2
    for i in range(7):
        _a_stale_dataset_of(owner_team, owner, f"s{i}", written_hours_ago=3 + i % 3)
    evaluate(T0)
    client.force_login(owner)
    stale = Dataset.objects.filter(freshness__status="stale")
    for sort, order in (("last_write", ("freshness__last_write_at", "namespace", "name")),
                        ("-last_write", ("-freshness__last_write_at", "-namespace", "-name"))):
        expected = [d.name.removeprefix("retail.public.") for d in stale.order_by(*order)]
        names, url, urls = [], f"/freshness/?sort={sort}", []
        while url:
            urls.append(url)
            body = client.get(url).content.decode()
            names += [name for _, name in _rows(body)]
            found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', body)
            url = "/freshness/?" + found.group(1).replace("&amp;", "&") if found else None
        assert names == expected and len(names) == 7
        # The third page costs what the first does: the page from the rows with a last write
        # (full: the rows without one are not read), and the other seven queries as above.
        with django_assert_num_queries(7):
            client.get(urls[0])
        with django_assert_num_queries(7):
            client.get(urls[2])
