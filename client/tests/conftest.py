"""The client tests' world: no Django, no server. A store is a directory written by hand.

Fixtures: `store` (a DirectoryStore) and `docs` (document factories: docs.cell_count(version), docs.event(...)).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml


def cell_count(version: str = "1.0") -> dict:
    return {
        "schema": {"name": "lab.analytics.cell_count", "domain": "lab", "subdomains": ["analytics"],
                   "entity": "cell_count", "version": version, "owner": "lab-data", "schema_type": "dataframe",
                   "description": "LIMS cell count assay table."},
        "meta": {"tier": "bronze", "alignment": "source", "source_system": ["lims", "eln"]},
        "config": {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None},
        "columns": [
            {"name": "run_row_id", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": True,
             "checks": [{"str_length": {"min_value": 1}}]},
            {"name": "viability", "dtype": "float64", "nullable": True, "coerce": True, "required": True,
             "unique": False, "checks": [{"ge": 0.0}, {"le": 1.0}]},
            {"name": "status", "dtype": "str", "nullable": False, "coerce": True, "required": False,
             "unique": False, "checks": [{"isin": ["ok", "failed"]}]},
            {"name": "run date", "dtype": "datetime64[ns]", "nullable": True, "coerce": True, "required": True,
             "unique": False, "checks": []},
            {"name": "tags", "dtype": "List[str]", "nullable": True, "coerce": False, "required": False,
             "unique": False, "checks": []},
        ],
    }


def event(name: str = "retail.checkout.order_placed", version: str = "1.0", tier: str = "silver") -> dict:
    domain, sub, entity = name.split(".")
    return {
        "schema": {"name": name, "domain": domain, "subdomains": [sub], "entity": entity, "version": version,
                   "owner": "checkout", "schema_type": "event"},
        "meta": {"tier": tier, "contract_type": "egress", "source_system": "shop"},
        "payload": {"type": "object"},
    }


class DirectoryStore:
    """Writes a store the way publishing does: objects, then the index."""

    def __init__(self, root: Path):
        self.root = root
        self.rows: list[dict] = []

    def publish(self, document: dict) -> None:
        schema = document["schema"]
        folder = "v" + schema["version"].replace(".", "_")
        key = "/".join(["contracts", "domains", schema["domain"], *schema["subdomains"], schema["entity"], folder, "schema.yaml"])
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        self.rows.append({"name": schema["name"], "key": key, "version": schema["version"], "date": "2026-01-01",
                          "schema_type": schema["schema_type"]})
        index = self.root / "contracts/index/schema_index.csv"
        index.parent.mkdir(parents=True, exist_ok=True)
        with index.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["name", "key", "version", "date", "schema_type"])
            writer.writeheader()
            writer.writerows(self.rows)


class Documents:
    cell_count = staticmethod(cell_count)
    event = staticmethod(event)


@pytest.fixture
def store(tmp_path) -> DirectoryStore:
    return DirectoryStore(tmp_path / "store")


@pytest.fixture
def docs() -> Documents:
    return Documents()
