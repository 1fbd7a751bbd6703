"""The audit log in the admin, filtered by contract: the contract, its versions, its
change requests and the bindings of datasets to it (issue 16, point 11)."""

from __future__ import annotations

import pytest

from change_requests.workflows import open_change_request
from contracts_app.publishing import record_version
from tests.change_requests.conftest import BASE_DOCUMENT, report_for

pytestmark = pytest.mark.django_db

AUDIT_LOG = "/admin/registry/auditevent/"


def listed(response) -> set[str]:
    return {e.action for e in response.context["cl"].result_list}


def test_the_audit_log_filters_by_contract(client, admin, change_request, consumer_team, consumer, owner):
    change_request.acknowledge(consumer_team, by=consumer)
    other = dict(BASE_DOCUMENT, schema={**BASE_DOCUMENT["schema"], "name": "retail.checkout.order_refunded",
                                        "entity": "order_refunded"})
    other_version = record_version(other, by=owner)
    open_change_request(other_version.contract, {**other, "schema": {**other["schema"], "version": "2.0"}},
                        by=owner, report=report_for(other))
    client.force_login(admin)

    page = client.get(AUDIT_LOG).content.decode()
    assert 'data-filter-title="contract"' in page
    assert f"?contract={change_request.contract.pk}" in page and f"?contract={other_version.contract.pk}" in page

    actions = listed(client.get(AUDIT_LOG, {"contract": str(change_request.contract.pk)}))
    assert actions == {"contract.created", "contract.version_published", "contract.dataset_bound",
                       "change_request.opened", "change_request.acknowledged", "change_request.approved"}

    other_actions = listed(client.get(AUDIT_LOG, {"contract": str(other_version.contract.pk)}))
    assert "contract.dataset_bound" not in other_actions and "change_request.acknowledged" not in other_actions
    assert "change_request.opened" in other_actions


def test_the_contract_filter_combines_with_the_actor(client, admin, change_request, consumer_team, consumer):
    change_request.acknowledge(consumer_team, by=consumer)
    client.force_login(admin)

    actions = listed(client.get(AUDIT_LOG, {"contract": str(change_request.contract.pk), "actor": "carol"}))

    assert actions == {"change_request.acknowledged"}
