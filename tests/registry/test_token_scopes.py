"""What each token scope lets a token do over the API, and how scopes are granted."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from registry.models import ApiToken, Dataset
from tests.conftest import bearer


def secret_with(*scopes: str, user=None, team=None) -> str:
    return ApiToken.issue("scoped", user=user, team=team, scopes=list(scopes))[1]


def test_a_new_token_gets_every_scope_but_platform_wide_lineage(owner):
    token, _ = ApiToken.issue("ci", user=owner)

    assert token.scope_set == {"read", "write", "contracts:publish", "lineage:write"}


def test_a_read_only_token_reads_and_changes_nothing(client, unowned_dataset, owner_team, owner):
    secret = secret_with("read", user=owner)

    assert client.get("/api/datasets/", **bearer(secret)).status_code == 200
    response = client.post(f"/api/datasets/{unowned_dataset.pk}/claim/", {"team": "checkout"},
                           content_type="application/json", **bearer(secret))

    assert response.status_code == 403
    assert response.json()["code"] == "token_scope_missing"
    assert "'write'" in response.json()["detail"]
    assert Dataset.objects.get(pk=unowned_dataset.pk).owner_team is None


def test_a_token_without_read_cannot_get(client, owner):
    response = client.get("/api/datasets/", **bearer(secret_with("lineage:write", user=owner)))

    assert response.status_code == 403
    assert response.json()["code"] == "token_scope_missing"


def test_a_read_only_token_may_still_check_a_payload_or_preview_an_impact():
    # POSTs that store nothing are reads.
    from change_requests.api.views import ImpactPreview
    from contracts_app.api.views import ValidatePayload

    assert ImpactPreview.write_scope == ValidatePayload.write_scope == "read"


def test_an_unknown_scope_is_refused_naming_the_known_ones(owner):
    with pytest.raises(Exception, match="Unknown token scope 'admin'.*lineage:write"):
        ApiToken.issue("ci", user=owner, scopes=["admin"])


def test_create_token_takes_scopes(owner_team):
    out, err = io.StringIO(), io.StringIO()
    call_command("create_token", "platform ingest", "--team", "checkout", "--scope", "lineage:write:any",
                 "--scope", "read", stdout=out, stderr=err)

    token = ApiToken.objects.get(name="platform ingest")
    assert token.scope_set == {"read", "lineage:write:any"}
    assert "read lineage:write:any" in err.getvalue()


def test_create_token_without_lineage_keeps_the_other_default_scopes(owner_team):
    call_command("create_token", "dashboards", "--team", "checkout", "--no-lineage",
                 stdout=io.StringIO(), stderr=io.StringIO())

    assert ApiToken.objects.get(name="dashboards").scope_set == {"read", "write", "contracts:publish"}


def test_create_token_refuses_an_unknown_scope(owner_team):
    with pytest.raises(CommandError):
        call_command("create_token", "x", "--team", "checkout", "--scope", "everything",
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_the_admin_creates_a_token_with_the_scopes_ticked(client, admin, owner_team):
    client.force_login(admin)
    client.post("/admin/registry/apitoken/add/",
                {"name": "platform", "team": owner_team.pk, "scopes": ["lineage:write:any"]}, follow=True)

    assert ApiToken.objects.get(name="platform").scopes == "lineage:write:any"
