"""Owners read from dbt artefacts (registry.ownership.record_dbt_owners), rule 3 of job ownership."""

import pytest
from django.core.exceptions import PermissionDenied

from registry.jobs import DbtOwner
from registry.models import AuditEvent, RegistryError
from registry.ownership import declare_alias, record_dbt_owners


def owners():
    return {o.unique_id: (o.team.slug, o.original_file_path, o.project) for o in DbtOwner.objects.select_related("team")}


def test_an_admin_records_dbt_owners_by_team_slug_or_alias(admin, owner_team, consumer_team):
    declare_alias(consumer_team, "group:analytics", by=admin)

    recorded = record_dbt_owners([
        {"unique_id": "model.shop.orders", "team": "checkout", "original_file_path": "models/checkout/orders.sql",
         "source": "meta.owner"},
        {"unique_id": "model.shop.revenue", "team": "Group:Analytics", "original_file_path": "models/bi/revenue.sql"},
    ], by=admin)

    assert recorded.created == ["model.shop.orders", "model.shop.revenue"]
    assert owners() == {"model.shop.orders": ("checkout", "models/checkout/orders.sql", "shop"),
                        "model.shop.revenue": ("analytics", "models/bi/revenue.sql", "shop")}
    assert AuditEvent.objects.filter(action="dbt_owner.recorded").count() == 2


def test_recording_again_changes_only_what_differs_and_replace_removes_the_rest(admin, owner_team, consumer_team):
    record_dbt_owners([{"unique_id": "model.shop.orders", "team": owner_team},
                       {"unique_id": "model.shop.revenue", "team": owner_team}], by=admin)

    recorded = record_dbt_owners([{"unique_id": "model.shop.orders", "team": owner_team},
                                  {"unique_id": "model.shop.new", "team": consumer_team}],
                                 by=admin, project="shop", replace=True)

    assert recorded.to_dict() == {"created": ["model.shop.new"], "changed": [], "unchanged": ["model.shop.orders"],
                                  "removed": ["model.shop.revenue"]}
    assert set(owners()) == {"model.shop.orders", "model.shop.new"}
    assert AuditEvent.objects.filter(action="dbt_owner.removed").count() == 1


def test_an_unknown_owner_name_stores_nothing_and_names_the_node(admin, owner_team):
    with pytest.raises(RegistryError, match='model.shop.b: no team is named or aliased "finance"'):
        record_dbt_owners([{"unique_id": "model.shop.a", "team": "checkout"},
                           {"unique_id": "model.shop.b", "team": "finance"}], by=admin)
    assert not DbtOwner.objects.exists()


def test_only_a_governance_admin_records_dbt_owners(owner, owner_team):
    with pytest.raises(PermissionDenied):
        record_dbt_owners([{"unique_id": "model.shop.a", "team": "checkout"}], by=owner)
