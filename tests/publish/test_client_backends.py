"""The thin client reads what publishing wrote, through all three backends."""

from __future__ import annotations

import pandas as pd
import pytest
from registry_client import Registry, StoreUnreachable, UnknownContract, UnknownVersion
from registry_client.backends import HttpBackend, LocalBackend, S3Backend

from contracts_app.publishing import publish_document
from contracts_app.specs import record_spec
from registry.models import ApiToken
from tests.publish.conftest import (
    cell_count,
    order_placed,
    with_column,
)
from tests.servers import ACCESS_KEY, SECRET_KEY

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def s3_registry(store) -> Registry:
    return Registry(S3Backend(store.bucket, store.prefix, endpoint_url=store.endpoint_url,
                              aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY))


def test_a_new_version_reaches_the_client_by_republishing_without_reinstalling(owner_team, s3_store):
    publish_document(cell_count(), by=None, store=s3_store)
    registry = s3_registry(s3_store)
    assert registry.versions("lab.analytics.cell_count") == ["1.0"]
    Model = registry.get_pandera_model("lab.analytics.cell_count")
    assert "vcd" not in Model.to_schema().columns

    v1_1 = with_column(cell_count("1.1"), {"name": "vcd", "dtype": "float64", "nullable": True, "required": False})
    from registry_client import compat

    # Adding an optional column is what a real checker calls compatible; until it lands, publish as NONE.
    report = compat.check_compatibility([cell_count()], v1_1, mode="NONE")
    assert report.compatible
    from contracts_app.publishing import record_version

    record_version(v1_1, by=None, store=s3_store)

    assert registry.versions("lab.analytics.cell_count") == ["1.0"]  # the index is cached per instance
    registry.refresh()
    assert registry.versions("lab.analytics.cell_count") == ["1.0", "1.1"]
    Model = registry.get_pandera_model("lab.analytics.cell_count", "latest")
    assert "vcd" in Model.to_schema().columns
    frame = Model.validate(pd.DataFrame({"run_row_id": ["a"], "viability": [0.5], "run_date": ["2024-01-01"], "vcd": [1.0]}))
    assert list(frame.columns) == ["run_row_id", "viability", "run_date", "vcd"]


def test_latest_skips_pre_releases_and_orders_semantically(owner_team, s3_store):
    from contracts_app.publishing import record_version

    for version in ("9.0", "10.0", "2.0.0rc1", "11.0.dev1"):
        record_version(cell_count(version), by=None, store=s3_store)
    registry = s3_registry(s3_store)
    assert registry.versions("lab.analytics.cell_count") == ["2.0.0rc1", "9.0", "10.0", "11.0.dev1"]
    assert registry.get_schema("lab.analytics.cell_count")["schema"]["version"] == "10.0"
    assert registry.get_schema("lab.analytics.cell_count", "2.0.0rc1")["schema"]["version"] == "2.0.0rc1"
    assert set(registry.get_schema("lab.analytics.cell_count", None)) == {"2.0.0rc1", "9.0", "10.0", "11.0.dev1"}


def test_clear_errors_for_unknown_names_versions_and_unreachable_stores(owner_team, s3_store):
    publish_document(cell_count(), by=None, store=s3_store)
    registry = s3_registry(s3_store)
    with pytest.raises(UnknownContract, match=r"No contract named 'lab.analytics.cell_cout'.*Did you mean lab.analytics.cell_count"):
        registry.get_schema("lab.analytics.cell_cout")
    with pytest.raises(UnknownVersion, match=r"has no version '3.0' \(published: 1.0\)"):
        registry.get_pandera_model("lab.analytics.cell_count", "3.0")
    dead = Registry(S3Backend("nowhere", endpoint_url="http://127.0.0.1:9", aws_access_key_id="x", aws_secret_access_key="y"))
    with pytest.raises(StoreUnreachable, match="127.0.0.1:9"):
        dead.list_names()


def answers(registry: Registry) -> dict:
    names = registry.list_names()
    return {
        "names": names,
        "domains": registry.list_domains(),
        "versions": {n: registry.versions(n) for n in names},
        "documents": {n: registry.get_schema(n, None) for n in names},
        "lims": registry.find_by_meta(source_system="lims"),
        "historian_silver": registry.find_by_meta(source_system="historian", tier="silver"),
        "egress": registry.find_by_meta(contract_type="egress"),
        "tiers": registry.get_tiers(),
        "specs": {n: registry.get_spec(n, "1.0") for n in names if n in SPEC_NAMES},
        "model_columns": {
            n: list(registry.get_pandera_model(n).to_schema().columns)
            for n in names if registry.get_schema(n)["schema"]["schema_type"] == "dataframe"
        },
    }


SPEC_NAMES = {"lab.analytics.cell_count", "retail.sales.orders", "retail.crm.customers"}


def test_all_three_backends_give_the_same_answers_for_the_demo_registry(demo_teams, s3_store, local_store, live_server, owner, settings):
    from pathlib import Path

    from contracts_app.management.commands.publish_contracts import discover_contracts
    from contracts_app.models import ContractVersion, IntegrationSpec
    from contracts_app.publishing import upload_spec, upload_version
    from contracts_app.yamlio import load_yaml

    root = Path(settings.BASE_DIR) / "fixtures" / "contracts"
    for _, document, text, problems in discover_contracts(root):
        assert not problems
        publish_document(document, by=None, yaml_text=text, store=s3_store)
    for path in sorted((root.parent / "integrations" / "source_specs").rglob("spec.yaml")):
        record_spec(load_yaml(path.read_text()), by=None, store=s3_store)
    # The same published rows, uploaded to a second store (a local directory).
    for pk in ContractVersion.objects.values_list("pk", flat=True):
        assert upload_version(pk, store=local_store)
    for pk in IntegrationSpec.objects.values_list("pk", flat=True):
        assert upload_spec(pk, store=local_store)
    _, secret = ApiToken.issue("pipeline", user=owner)
    registries = {
        "s3": s3_registry(s3_store),
        "local": Registry(LocalBackend(local_store.root)),
        "http": Registry(HttpBackend(live_server.url, secret)),
    }
    results = {kind: answers(registry) for kind, registry in registries.items()}
    assert results["s3"] == results["local"] == results["http"]
    demo = results["s3"]
    assert len(demo["names"]) == 10 and demo["domains"] == ["lab", "retail"]
    assert "lab.analytics.cell_count" in demo["lims"] and "lab.upstream.bioreactor_run" in demo["lims"]
    assert demo["historian_silver"] == ["lab.upstream.bioreactor_run"]  # a list-valued source_system
    assert set(demo["specs"]) == SPEC_NAMES and demo["tiers"]


def test_the_http_backend_needs_a_valid_token(live_server):
    from registry_client import RegistryClientError

    with pytest.raises(RegistryClientError, match="refused the request \\(401\\)"):
        Registry(HttpBackend(live_server.url, "dr_wrong")).list_names()


def test_the_default_registry_is_configured_from_the_environment(owner_team, local_store, monkeypatch):
    from registry_client import REGISTRY

    publish_document(order_placed(), by=None, store=local_store)
    monkeypatch.setenv("REGISTRY_URL", local_store.root)
    REGISTRY.reset()
    try:
        assert REGISTRY.list_names() == ["retail.checkout.order_placed"]
    finally:
        REGISTRY.reset()
