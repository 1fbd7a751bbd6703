"""Fixtures for publishing: contract documents, a real S3 server, stores."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

import pytest
import yaml

from contracts_app.store import LocalStore, S3Store
from tests import servers
from tests.servers import ACCESS_KEY, SECRET_KEY


def cell_count(version: str = "1.0", **changes) -> dict:
    document = {
        "schema": {
            "name": "lab.analytics.cell_count", "domain": "lab", "subdomains": ["analytics"], "entity": "cell_count",
            "version": version, "owner": "checkout", "schema_type": "dataframe",
            "description": "LIMS cell count assay table.",
        },
        "meta": {"tier": "bronze", "alignment": "source", "contract_type": "ingress", "source_system": ["lims", "eln"]},
        "config": {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None},
        "columns": [
            {"name": "run_row_id", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": False,
             "description": "Row id.", "checks": [{"str_length": {"min_value": 1}}]},
            {"name": "viability", "dtype": "float64", "nullable": True, "coerce": True, "required": True, "unique": False,
             "description": "Fraction of live cells.", "checks": [{"ge": 0.0}, {"le": 1.0}]},
            {"name": "run_date", "dtype": "datetime64[ns]", "nullable": True, "coerce": True, "required": True,
             "unique": False, "description": "", "checks": []},
        ],
    }
    for dotted, value in changes.items():
        document[dotted] = value
    return document


def order_placed(version: str = "1.0") -> dict:
    return {
        "schema": {"name": "retail.checkout.order_placed", "domain": "retail", "subdomains": ["checkout"],
                   "entity": "order_placed", "version": version, "owner": "checkout", "schema_type": "event",
                   "description": "An order was placed."},
        "meta": {"tier": "silver", "contract_type": "egress", "source_system": "shop"},
        "payload": {"type": "object", "required": ["order_id", "total"],
                    "properties": {"order_id": {"type": "string"}, "total": {"type": "number", "minimum": 0}}},
    }


def refund_api(version: str = "1.0") -> dict:
    return {
        "schema": {"name": "retail.payments.refund_api", "domain": "retail", "subdomains": ["payments"],
                   "entity": "refund_api", "version": version, "owner": "checkout", "schema_type": "api",
                   "description": "Refund a payment."},
        "meta": {"tier": "gold", "contract_type": "egress", "source_system": "payments"},
        "request": {"type": "object", "required": ["payment_id", "amount"],
                    "properties": {"payment_id": {"type": "string"}, "amount": {"type": "number", "exclusiveMinimum": 0}}},
        "response": {"type": "object", "required": ["refund_id"], "properties": {"refund_id": {"type": "string"}}},
        "callbacks": {"refund_settled": {"type": "object", "required": ["refund_id", "settled_at"],
                                         "properties": {"refund_id": {"type": "string"}, "settled_at": {"type": "string"}}}},
    }


def with_column(document: dict, column: dict) -> dict:
    changed = copy.deepcopy(document)
    changed["columns"].append(column)
    return changed


def write_tree(root: Path, documents: list[dict], specs: list[dict] | None = None) -> Path:
    """An authoring tree: <root>/contracts/domains/... and <root>/integrations/source_specs/..."""
    from contracts_app.store import version_folder

    for document in documents:
        schema = document["schema"]
        folder = root / "contracts" / "domains" / schema["domain"] / Path(*schema["subdomains"]) / schema["entity"] / version_folder(schema["version"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "schema.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    for spec in specs or []:
        parts = spec["spec"]["contract"].split(".")
        folder = root / "integrations" / "source_specs" / Path(*parts) / version_folder(spec["spec"]["version"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root / "contracts"


def cell_count_spec(version: str = "1.0") -> dict:
    return {
        "spec": {"contract": "lab.analytics.cell_count", "version": version},
        "source": {"system": "lims", "schema": "lims", "table": "cell_counts", "created_column": "created_at",
                   "modified_column": "modified_at"},
        "field_to_source": {"run_row_id": "row_id", "viability": "viab_fraction", "run_date": "run_date"},
    }


@pytest.fixture
def demo_teams(db):
    """The teams of fixtures/demo.yaml, which the demo contracts tree names as owners."""
    from django.conf import settings

    from registry.models import Team

    demo = yaml.safe_load((Path(settings.BASE_DIR) / "fixtures" / "demo.yaml").read_text())
    return [Team.objects.get_or_create(slug=t["slug"], defaults={"name": t["name"]})[0] for t in demo["teams"]]


s3_server = servers.s3_server  # the session S3 server, shared with other suites


@pytest.fixture
def s3_store(s3_server) -> S3Store:
    """A fresh bucket per test."""
    bucket = s3_server.create_bucket(f"contracts-{uuid.uuid4().hex[:12]}")
    return S3Store(bucket=bucket, prefix="registry", endpoint_url=s3_server.endpoint_url,
                   access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY)


@pytest.fixture
def local_store(tmp_path) -> LocalStore:
    return LocalStore(root=str(tmp_path / "store"))


@pytest.fixture
def use_store(settings):
    """Point CONTRACT_STORE (and the S3 settings) at a given store, as production settings would."""
    from registry.env import ContractStore

    def use(store):
        if isinstance(store, S3Store):
            settings.CONTRACT_STORE = ContractStore(kind="s3", bucket=store.bucket, prefix=store.prefix)
            settings.S3_ENDPOINT_URL = store.endpoint_url
            settings.S3_ACCESS_KEY_ID = store.access_key_id
            settings.S3_SECRET_ACCESS_KEY = store.secret_access_key
        else:
            settings.CONTRACT_STORE = ContractStore(kind="local", path=store.root)
        return store

    return use


class RecordingStore:
    """Wraps a store and remembers the order of writes; can be told to fail."""

    def __init__(self, inner, fail_keys: set[str] | None = None, fail_times: int = 10**6):
        self.inner, self.writes, self.fail_keys, self.fail_times = inner, [], fail_keys or set(), fail_times
        self.attempts: list[str] = []

    def describe(self) -> str:
        return self.inner.describe()

    def put(self, key, body, content_type="application/yaml"):
        from contracts_app.store import StoreError

        self.attempts.append(key)
        if any(key.endswith(k) for k in self.fail_keys) and self.fail_times > 0:
            self.fail_times -= 1
            raise StoreError(f"could not write {key}: simulated outage")
        self.inner.put(key, body, content_type)
        self.writes.append(key)

    def get(self, key):
        return self.inner.get(key)

    def exists(self, key):
        return self.inner.exists(key)
