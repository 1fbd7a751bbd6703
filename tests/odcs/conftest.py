"""The demo contracts, published; the datacontract-cli; the ODCS JSON Schema it ships."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from contracts_app.yamlio import load_yaml_file
from tests.odcs.tools import ensure_datacontract_cli, odcs_json_schema

DEMO_ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "contracts"


def demo_documents() -> list[dict]:
    """Every demo contract document, in name and version order."""
    return [load_yaml_file(p) for p in sorted((DEMO_ROOT / "domains").rglob("schema.yaml"))]


DEMO = demo_documents()
DEMO_IDS = [f"{d['schema']['name']}=={d['schema']['version']}" for d in DEMO]


@pytest.fixture
def local_store(tmp_path):
    from contracts_app.store import LocalStore

    return LocalStore(root=str(tmp_path / "store"))


@pytest.fixture
def published_demo(db, owner_team, local_store, django_capture_on_commit_callbacks):
    """Every demo contract recorded as a published version (Checkout owns the retail.sales ones;
    the other teams the documents name are created as the demo has them)."""
    from contracts_app.publishing import record_version
    from registry.models import Team

    owners = {str(document["schema"]["owner"]) for document in DEMO}
    demo = yaml.safe_load((DEMO_ROOT.parent / "demo.yaml").read_text())
    for team in demo["teams"]:
        if team["slug"] in owners:
            Team.objects.get_or_create(slug=team["slug"], defaults={"name": team["name"]})

    with django_capture_on_commit_callbacks(execute=True):
        return [record_version(document, by=None, store=local_store) for document in DEMO]


@pytest.fixture(scope="session")
def datacontract_cli() -> Path:
    return ensure_datacontract_cli()


@pytest.fixture(scope="session", params=["3.1.0", "3.2.0"])
def odcs_validator(request, datacontract_cli):
    """A validator for the ODCS version the export declares (3.1.0) and the CLI's default (3.2.0),
    from the schemas the CLI ships."""
    schema = json.loads(odcs_json_schema(request.param).read_text())
    return jsonschema.validators.validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())


ORDERS_SPEC = DEMO_ROOT.parent / "integrations" / "source_specs" / "retail" / "sales" / "orders" / "v1_0" / "spec.yaml"


@pytest.fixture
def bound_orders(published_demo, dataset, owner, local_store, django_capture_on_commit_callbacks):
    """retail.sales.orders bound to retail.public.orders (owned by alice, consumed by Analytics,
    fresh within an hour), with its integration spec (rows dated by ordered_at)."""
    from datetime import timedelta

    from contracts_app.models import Contract
    from contracts_app.specs import record_spec
    from freshness.models import DatasetFreshness

    contract = Contract.objects.get(name="retail.sales.orders")
    contract.bind(dataset, by=owner)
    DatasetFreshness.objects.create(dataset=dataset, max_age=timedelta(hours=1), warn_after=timedelta(minutes=30))
    text = ORDERS_SPEC.read_text()
    with django_capture_on_commit_callbacks(execute=True):
        record_spec(load_yaml_file(ORDERS_SPEC), by=None, yaml_text=text, store=local_store)
    return contract
