"""Tokens created before scopes keep what they could do (registry 0007)."""

from __future__ import annotations

import pytest

from registry.models import ApiToken
from tests.migrations import migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_SCOPES = [("registry", "0006_usage_facts_without_db_constraints")]


def test_existing_tokens_get_the_scopes_of_what_they_could_do():
    old = migrate(BEFORE_SCOPES).loader.project_state(BEFORE_SCOPES).apps
    try:
        Team = old.get_model("registry", "Team")
        OldToken = old.get_model("registry", "ApiToken")
        team = Team.objects.create(name="Checkout", slug="checkout")
        OldToken.objects.create(name="airflow", team=team, key_hash="a" * 64, key_prefix="dr_a", can_write_lineage=True)
        OldToken.objects.create(name="dashboards", team=team, key_hash="b" * 64, key_prefix="dr_b", can_write_lineage=False)
    finally:
        migrate_to_latest()

    scopes = dict(ApiToken.objects.values_list("name", "scopes"))
    assert scopes == {"airflow": "read write contracts:publish lineage:write",
                      "dashboards": "read write contracts:publish"}
