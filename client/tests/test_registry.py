from __future__ import annotations

import time

import pytest
from registry_client import (
    InvalidContract,
    Registry,
    StoreUnreachable,
    UnknownContract,
    UnknownVersion,
)
from registry_client.backends import LocalBackend
from registry_client.resolution import latest_release, semantic_sort


def test_latest_never_picks_pre_or_dev_releases_and_orders_semantically():
    versions = ["9.0", "10.0", "2.0.0rc1", "10.1.dev2", "1.0.1", "1.0"]
    assert latest_release(versions) == "10.0"
    assert semantic_sort(versions) == ["1.0", "1.0.1", "2.0.0rc1", "9.0", "10.0", "10.1.dev2"]
    assert latest_release(["2.0.0rc1"]) is None


def test_get_schema_resolves_specific_latest_and_all(store, docs):
    for version in ("1.0", "2.0.0rc1", "10.0", "9.0"):
        store.publish(docs.cell_count(version))
    registry = Registry(LocalBackend(store.root))
    assert registry.get_schema("lab.analytics.cell_count")["schema"]["version"] == "10.0"
    assert registry.get_schema("lab.analytics.cell_count", "2.0.0rc1")["schema"]["version"] == "2.0.0rc1"
    assert list(registry.get_schema("lab.analytics.cell_count", None)) == ["1.0", "2.0.0rc1", "9.0", "10.0"]
    assert list(registry.get_pandera_model("lab.analytics.cell_count", None)) == ["1.0", "2.0.0rc1", "9.0", "10.0"]


def test_latest_of_a_contract_with_only_pre_releases_is_an_unknown_version(store, docs):
    store.publish(docs.cell_count("2.0.0rc1"))
    with pytest.raises(UnknownVersion, match=r"no version 'latest' \(published: 2.0.0rc1\)"):
        Registry(LocalBackend(store.root)).get_schema("lab.analytics.cell_count")


def test_listing_and_meta_queries(store, docs):
    store.publish(docs.cell_count())
    store.publish(docs.event())
    store.publish(docs.event("retail.payments.refund_settled", tier="gold"))
    registry = Registry.from_url(str(store.root))
    assert registry.list_names() == ["lab.analytics.cell_count", "retail.checkout.order_placed", "retail.payments.refund_settled"]
    assert registry.list_domains() == ["lab", "retail"]
    assert registry.versions("retail.checkout.order_placed") == ["1.0"]
    assert registry.find_by_meta(source_system="eln") == ["lab.analytics.cell_count"]
    assert registry.find_by_meta(source_system="LIMS", tier="bronze") == ["lab.analytics.cell_count"]
    assert registry.find_by_meta(tier="gold") == ["retail.payments.refund_settled"]
    assert registry.get_tiers() == ["bronze", "gold", "silver"]
    with pytest.raises(ValueError, match="unknown meta key"):
        registry.find_by_meta(colour="red")


def test_errors_name_what_was_wrong(store, tmp_path, docs):
    store.publish(docs.cell_count())
    registry = Registry(LocalBackend(store.root))
    with pytest.raises(UnknownContract, match="Did you mean lab.analytics.cell_count"):
        registry.get_schema("lab.analytics.cellcount")
    with pytest.raises(UnknownVersion, match=r"has no version '3.0' \(published: 1.0\)"):
        registry.get_schema("lab.analytics.cell_count", "3.0")
    with pytest.raises(StoreUnreachable, match="does not exist"):
        Registry(LocalBackend(tmp_path / "missing")).list_names()
    with pytest.raises(InvalidContract, match="only dataframe contracts become Pandera models"):
        store.publish(docs.event())
        registry.refresh()
        registry.get_pandera_model("retail.checkout.order_placed")


def test_the_index_is_cached_until_refresh(store, docs):
    store.publish(docs.cell_count("1.0"))
    registry = Registry(LocalBackend(store.root))
    assert registry.versions("lab.analytics.cell_count") == ["1.0"]
    store.publish(docs.cell_count("1.1"))
    assert registry.versions("lab.analytics.cell_count") == ["1.0"]
    registry.refresh()
    assert registry.versions("lab.analytics.cell_count") == ["1.0", "1.1"]


def test_a_warm_model_lookup_is_cached(store, docs):
    store.publish(docs.cell_count())
    registry = Registry(LocalBackend(store.root))
    first = registry.get_pandera_model("lab.analytics.cell_count")
    assert registry.get_pandera_model("lab.analytics.cell_count", "latest") is first
    assert registry.get_pandera_model("lab.analytics.cell_count", "1.0") is first


def test_the_default_registry_reads_its_url_from_the_environment(store, monkeypatch, docs):
    from registry_client import REGISTRY

    store.publish(docs.cell_count())
    monkeypatch.setenv("REGISTRY_URL", str(store.root))
    REGISTRY.reset()
    try:
        assert REGISTRY.list_names() == ["lab.analytics.cell_count"]
        assert "Registry over directory" in repr(REGISTRY._get())
    finally:
        REGISTRY.reset()


def test_an_unsupported_url_is_refused():
    with pytest.raises(ValueError, match="unsupported registry URL 'ftp://x'"):
        Registry.from_url("ftp://x")


def test_an_unreachable_http_registry_is_reported():
    from registry_client.backends import HttpBackend

    started = time.monotonic()
    with pytest.raises(StoreUnreachable, match="Could not reach registry API at http://127.0.0.1:9"):
        Registry(HttpBackend("http://127.0.0.1:9", "t", timeout=2)).list_names()
    assert time.monotonic() - started < 10


def test_get_odcs_from_a_store_is_the_documents_odcs(store, docs):
    store.publish(docs.cell_count("1.0"))
    store.publish(docs.cell_count("2.0.0rc1"))
    registry = Registry(LocalBackend(store.root))
    odcs = registry.get_odcs("lab.analytics.cell_count")
    assert (odcs["apiVersion"], odcs["id"], odcs["version"], odcs["status"]) == (
        "v3.1.0", "lab.analytics.cell_count", "1.0", "active")
    assert registry.get_odcs("lab.analytics.cell_count", "2.0.0rc1")["status"] == "draft"
    assert list(registry.get_odcs("lab.analytics.cell_count", None)) == ["1.0", "2.0.0rc1"]
    with pytest.raises(UnknownVersion):
        registry.get_odcs("lab.analytics.cell_count", "3.0")
