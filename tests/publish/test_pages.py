"""Catalogue pages: domain -> subdomains -> entity -> version."""

from __future__ import annotations

import re

import pytest

from contracts_app.publishing import publish_document, record_version
from tests.publish.conftest import cell_count, order_placed, refund_api, with_column

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(owner, owner_team, local_store, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for document in (cell_count(), order_placed(), refund_api()):
            publish_document(document, by=owner, store=local_store)
        record_version(with_column(cell_count("2.0"), {"name": "vcd", "dtype": "float64", "nullable": True}),
                       by=owner, store=local_store)


@pytest.fixture
def browser(client, consumer):
    client.force_login(consumer)
    return client


def test_the_catalogue_groups_contracts_by_domain(browser, published, django_assert_num_queries):
    # 1: session, 2: user, 3: a page of contracts with owner team, 4: their versions,
    # 5: the lanes with a deprecation or sunset date (one query for the page's contracts),
    # 6: the total (counted up to 1,000), 7: the owner filter's teams
    with django_assert_num_queries(7):
        page = browser.get("/contracts/").content.decode()
    assert 'href="/contracts/browse/lab"' in page and 'href="/contracts/browse/retail"' in page
    assert "lab.analytics.cell_count" in page and "1.0, 2.0" in page
    assert re.search(r'id="catalogue-count">3 contracts<', page)


def _contracts_in(domain: str, n: int, owner, local_store) -> list[str]:
    names = []
    for i in range(n):
        document = cell_count()
        document["schema"].update(name=f"{domain}.analytics.table_{i:02d}", domain=domain, entity=f"table_{i:02d}")
        publish_document(document, by=owner, store=local_store)
        names.append(document["schema"]["name"])
    return names


def _walk(browser, url: str) -> tuple[list[str], list[str]]:
    """Every contract listed, following the Next links from `url`, and the pages' URLs."""
    listed, urls = [], []
    while url:
        urls.append(url)
        body = browser.get(url).content.decode()
        listed += _listed(body)
        found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', body)
        url = url.split("?")[0] + "?" + found.group(1).replace("&amp;", "&") if found else None
    return listed, urls


def test_the_catalogue_pages_by_name_and_each_page_costs_the_same(browser, published, owner, local_store, settings,
                                                                  django_assert_num_queries,
                                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        made = _contracts_in("lab", 6, owner, local_store)
    settings.LIST_PAGE_SIZE = 3  # nine contracts: three pages
    listed, urls = _walk(browser, "/contracts/")
    assert listed == sorted([*made, "lab.analytics.cell_count", "retail.checkout.order_placed",
                             "retail.payments.refund_api"])
    assert len(urls) == 3
    # The second page starts where the first stopped, and Previous goes back to it.
    second = browser.get(urls[1]).content.decode()
    assert _listed(second)[0] == listed[3]
    back = re.search(r'href="\?([^"]*before=[^"]+)" rel="prev"', second).group(1).replace("&amp;", "&")
    assert _listed(browser.get("/contracts/?" + back).content.decode()) == listed[:3]
    # Any page, first or last: 1 session, 2 user, 3 the page of contracts, 4 their versions,
    # 5 their dated lanes, 6 the total (capped), 7 the owner filter's teams
    for url in (urls[0], urls[2]):
        with django_assert_num_queries(7):
            browser.get(url)
    # A domain's pages, by the same links.
    in_lab, _ = _walk(browser, "/contracts/browse/lab")
    assert in_lab == sorted([*made, "lab.analytics.cell_count"])
    in_sub, _ = _walk(browser, "/contracts/browse/lab/analytics")
    assert in_sub == in_lab


def test_the_catalogue_total_stops_counting_at_a_cap(browser, published, monkeypatch):
    monkeypatch.setattr("contracts_app.views.CATALOGUE_COUNT_CAP", 2)  # as 1,000 is, in a large registry
    page = browser.get("/contracts/").content.decode()
    assert re.search(r'id="catalogue-count">2\+ contracts<', page)
    assert len(_listed(page)) == 3


def _listed(page: str) -> list[str]:
    return re.findall(r'<tr data-contract="([^"]+)">', page)


def test_the_catalogue_searches_names_descriptions_and_column_names(browser, published, django_assert_num_queries):
    assert _listed(browser.get("/contracts/?q=REFUND").content.decode()) == ["retail.payments.refund_api"]
    assert _listed(browser.get("/contracts/?q=cell+count+assay").content.decode()) == ["lab.analytics.cell_count"]
    # A column of the latest version (2.0 added vcd): one more query, for the documents that mention it
    # (and one for the dated lanes of all listed contracts, as on every catalogue page)
    with django_assert_num_queries(7):
        page = browser.get("/contracts/?q=VCD").content.decode()
    assert _listed(page) == ["lab.analytics.cell_count"]
    assert 'Matching column: <code>vcd</code>' in page
    # an event's payload property, an api's response and callback properties
    assert _listed(browser.get("/contracts/?q=order_id").content.decode()) == ["retail.checkout.order_placed"]
    assert _listed(browser.get("/contracts/?q=settled_at").content.decode()) == ["retail.payments.refund_api"]
    # a word of a document (its meta: source_system eln) in no name, description or field finds nothing
    empty = browser.get("/contracts/?q=eln").content.decode()
    assert _listed(empty) == [] and "No contract matches “eln”" in empty


def test_the_catalogue_filters_by_tier_kind_and_owner_team(browser, published, other_team):
    assert _listed(browser.get("/contracts/?kind=event").content.decode()) == ["retail.checkout.order_placed"]
    assert _listed(browser.get("/contracts/?kind=api&tier=gold").content.decode()) == ["retail.payments.refund_api"]
    assert _listed(browser.get("/contracts/?kind=api&tier=bronze").content.decode()) == []
    page = browser.get("/contracts/?owner=checkout").content.decode()
    assert len(_listed(page)) == 3 and "3 contracts" in page
    assert '<option value="checkout" selected>Checkout</option>' in page
    assert 'value="warehouse"' not in page  # a team that owns no contract is no choice
    assert _listed(browser.get("/contracts/?owner=warehouse").content.decode()) == []
    # filters hold inside a domain, and a filter that empties it is no 404
    assert _listed(browser.get("/contracts/browse/retail?kind=event").content.decode()) == [
        "retail.checkout.order_placed"]
    assert browser.get("/contracts/browse/lab?kind=api").status_code == 200


def test_browsing_a_domain_groups_by_subdomain_and_links_entities(browser, published):
    page = browser.get("/contracts/browse/retail").content.decode()
    assert 'href="/contracts/browse/retail/checkout"' in page
    assert 'href="/contracts/retail.checkout.order_placed/"' in page
    assert "lab.analytics" not in page
    assert browser.get("/contracts/browse/nowhere").status_code == 404


def test_a_dataframe_contract_is_shown_as_a_table_with_its_tags(browser, published):
    page = browser.get("/contracts/lab.analytics.cell_count/?version=1.0").content.decode()
    assert "<code>viability</code>" in page and "<code>float64</code>" in page
    assert "<code>ge 0.0</code><br><code>le 1.0</code>" in page
    assert "Fraction of live cells." in page
    assert '<span class="tag">tier: bronze</span>' in page and "source_system: lims, eln" in page
    assert 'REGISTRY.get_pandera_model(&quot;lab.analytics.cell_count&quot;, version=&quot;1.0&quot;)' in page


def test_versions_are_listed_with_dates_and_latest_is_the_default(browser, published):
    page = browser.get("/contracts/lab.analytics.cell_count/").content.decode()
    assert '<span class="tag">2.0</span>' in page
    assert '?version=1.0' in page and '?version=2.0' in page
    assert browser.get("/contracts/lab.analytics.cell_count/?version=7.0").status_code == 404


def test_the_diff_page_of_a_dataframe_contract_speaks_columns(browser, published, django_assert_num_queries):
    # 1: session, 2: user, 3: the contract, 4: its versions, 5: its bound datasets' modes (the checker's modes)
    with django_assert_num_queries(5):
        page = browser.get("/contracts/lab.analytics.cell_count/diff/?from=1.0&to=2.0").content.decode()
    assert 'data-column="vcd"' in page
    assert "column <code>vcd</code> added, required — rows written before it lack it" in page
    assert '<td class="before" data-label="Before"><span class="absent">— absent</span></td>' in page
    assert "<code>float64</code>, required, nullable" in page
    assert "(breaks this mode; proven)" in page
    assert "/columns/vcd" not in page and "additionalProperties" not in page and "null\n..." not in page


def test_the_diff_page_of_an_event_contract_keeps_json_schema_paths(browser, published, owner, local_store):
    record_version(order_placed("1.1") | {"payload": {**order_placed()["payload"], "properties": {
        **order_placed()["payload"]["properties"], "coupon": {"type": "string"}}}}, by=owner, store=local_store)
    page = browser.get("/contracts/retail.checkout.order_placed/diff/?from=1.0&to=1.1").content.decode()
    assert "<code>/payload/properties/coupon</code>" in page
    assert '<td class="before" data-label="Before"><span class="absent">— absent</span></td>' in page
    assert "property_added" in page and 'id="column-changes"' not in page


def test_an_event_contract_shows_its_payload_as_a_table_with_the_yaml_a_click_away(browser, published):
    page = browser.get("/contracts/retail.checkout.order_placed/").content.decode()
    assert "<h2>payload</h2>" in page and 'class="grid properties stacking"' in page
    assert '<td data-label="Property" class="name"><code>total</code></td>' in page
    assert '<td data-label="Constraints"><code>≥ 0</code></td>' in page
    assert '<details class="raw-yaml"><summary>Raw YAML</summary><pre>type: object' in page
    assert "REGISTRY.get_schema" in page


def test_an_api_contract_shows_a_table_per_request_response_and_callback(browser, published):
    page = browser.get("/contracts/retail.payments.refund_api/").content.decode()
    for heading in ("<h2>request</h2>", "<h2>response</h2>", "<h2>callback refund_settled</h2>"):
        assert heading in page
    assert '<td data-label="Constraints"><code>&gt; 0</code></td>' in page


def test_a_dataframe_contract_has_no_property_tables(browser, published):
    assert 'class="grid properties' not in browser.get("/contracts/lab.analytics.cell_count/").content.decode()


def test_the_nav_links_to_the_catalogue(browser, published):
    assert 'href="/contracts/">Contracts</a>' in browser.get("/contracts/").content.decode()


def test_a_bound_dataset_links_to_its_contract(browser, published, dataset, owner):
    from contracts_app.models import Contract

    Contract.objects.get(name="lab.analytics.cell_count").bind(dataset, by=owner)
    page = browser.get(dataset.get_absolute_url()).content.decode()
    assert 'href="/contracts/lab.analytics.cell_count/"' in page


def test_the_contract_page_takes_a_constant_number_of_queries(browser, published, local_store, owner, django_assert_num_queries, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for minor in range(1, 6):
            record_version(cell_count(f"1.{minor}"), by=owner, store=local_store)
    # 1: session, 2: user, 3: the contract with its owner team, 4: its versions with their publishers,
    # 5: its bound datasets with their consumer counts, 6: is the reader in the owner team (may they
    # change the mode and bindings?), 7: the audit rows of the mode's weakenings,
    # 8: its contract status per bound dataset (the status section), 9: its lanes and 10: the readers
    # seen on them (the lanes section, which reuses the page's versions and bindings)
    with django_assert_num_queries(10):
        page = browser.get("/contracts/lab.analytics.cell_count/").content.decode()
    assert "?version=1.5" in page
