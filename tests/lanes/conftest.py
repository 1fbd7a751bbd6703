"""Lanes on top of the shared world.

`cells` (lab.analytics.cell_count) is owned by Checkout (alice) and bound to `dataset`,
which Analytics (carol) consumes. `two_lanes` publishes 2.0 and 2.1, then 3.0, which
drops the `viability` column: lane 2.x and lane 3.x are both live.
"""

from __future__ import annotations

import copy

import pytest

from contracts_app.models import Contract
from contracts_app.publishing import record_version
from registry.env import parse_contract_store
from tests.publish.conftest import cell_count


@pytest.fixture(autouse=True)
def contract_store(settings, tmp_path):
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    return tmp_path / "store"


def version(number: str, *, without: str | None = None, extra: dict | None = None, description: str = "") -> dict:
    document = cell_count(number)
    if without:
        document["columns"] = [c for c in document["columns"] if c["name"] != without]
    if extra:
        document["columns"].append(extra)
    if description:
        document["schema"]["description"] = description
    return document


def optional_column(name: str) -> dict:
    return {"name": name, "dtype": "str", "nullable": True, "coerce": True, "required": False, "unique": False,
            "description": "", "checks": []}


def without_viability(number: str) -> dict:
    return version(number, without="viability")


@pytest.fixture
def two_lanes(dataset, owner_team, owner) -> Contract:
    record_version(version("2.0"), by=owner)
    record_version(version("2.1", extra=optional_column("operator")), by=owner)
    contract = record_version(without_viability("3.0"), by=owner).contract
    contract.bind(dataset, by=owner)
    return contract


@pytest.fixture
def deep_copy():
    return copy.deepcopy
