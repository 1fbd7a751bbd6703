"""Publishing contract versions over the API needs the contracts:publish scope."""

from __future__ import annotations

import pytest

from contracts_app.models import ContractVersion
from registry.models import ApiToken
from tests.conftest import bearer

from .conftest import proposed_document


def secret_with(*scopes: str, user=None, team=None) -> str:
    return ApiToken.issue("scoped", user=user, team=team, scopes=list(scopes))[1]


@pytest.mark.django_db
def test_publishing_a_contract_version_needs_the_publish_scope(client, contract, owner):
    without = secret_with("read", "write", user=owner)
    response = client.post("/api/change-requests/", {"document": proposed_document()},
                           content_type="application/json", **bearer(without))
    assert response.status_code == 403
    assert "contracts:publish" in response.json()["detail"]

    with_it = secret_with("read", "contracts:publish", user=owner)
    response = client.post("/api/change-requests/", {"document": proposed_document()},
                           content_type="application/json", **bearer(with_it))
    assert response.status_code == 201, response.json()


@pytest.mark.django_db
def test_publishing_an_approved_request_needs_the_publish_scope(client, change_request, consumer_team, owner):
    url = f"/api/change-requests/{change_request.pk}/"
    ack = secret_with("read", "write", team=consumer_team)
    assert client.post(url + "acknowledge/", {"team": "analytics"}, content_type="application/json",
                       **bearer(ack)).status_code == 200

    response = client.post(url + "publish/", content_type="application/json",
                           **bearer(secret_with("read", "write", user=owner)))

    assert response.status_code == 403
    assert not ContractVersion.objects.filter(version="2.0").exists()
