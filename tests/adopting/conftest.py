"""The dbt project the adoption tests import (tests/adopting/dbt_shop: a hand-written
manifest.json and catalog.json in dbt 1.9's shapes) and the teams that own it:

- Sales (alice, the `owner`) owns model orders (meta.owner) and snapshot orders_snapshot;
- Finance (carol, the `consumer`) owns model revenue (group money, whose owner is "Finance");
- Platform (bob, the `teammate`) owns source raw.orders (source meta), seed country_codes
  (config meta.owner_team) and model stg_orders (group platform: its owner "Platform Crew"
  is no team, the group's name is);
- model mystery names owner "nobody-here", which is no team; dave (`outsider`) is in Warehouse.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_team

SHOP = Path(__file__).resolve().parent / "dbt_shop"
MANIFEST, CATALOG = SHOP / "manifest.json", SHOP / "catalog.json"
NAMESPACE = "postgres://127.0.0.1:5432"


@pytest.fixture
def sales(owner):
    return make_team("Sales", "sales", owner)


@pytest.fixture
def finance(consumer):
    return make_team("Finance", "finance", consumer)


@pytest.fixture
def platform(teammate):
    return make_team("Platform", "platform", teammate)


@pytest.fixture
def shop_teams(sales, finance, platform, other_team):
    return {"sales": sales, "finance": finance, "platform": platform}
