import pytest

from registry.models import ApiToken, hash_token
from tests.conftest import bearer


def test_a_token_is_stored_hashed_and_its_secret_shown_once(owner):
    token, secret = ApiToken.issue("ci", user=owner)

    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_hash == hash_token(secret)
    assert secret not in {stored.key_hash, stored.key_prefix}
    assert secret.startswith(stored.key_prefix)
    assert not any(secret in str(value) for value in ApiToken.objects.values_list().get(pk=token.pk))


def test_a_token_is_owned_by_a_user_or_a_team_never_both(owner, owner_team):
    with pytest.raises(Exception, match="exactly one"):
        ApiToken.issue("both", user=owner, team=owner_team)
    with pytest.raises(Exception, match="exactly one"):
        ApiToken.issue("neither")


def test_a_valid_token_authenticates_and_records_last_use(client, owner_token):
    token, secret = owner_token
    response = client.get("/api/teams/", **bearer(secret))

    assert response.status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_missing_token_gets_401_saying_it_is_missing(client, db):
    response = client.get("/api/datasets/")

    assert response.status_code == 401
    assert response.json()["code"] == "token_missing"
    assert "Authorization: Bearer" in response.json()["detail"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_wrong_token_gets_401_saying_it_is_invalid(client, db):
    response = client.get("/api/datasets/", **bearer("dr_not-a-real-token"))

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid bearer token: no such token.", "code": "token_invalid"}


def test_revoked_token_gets_401_saying_it_was_revoked(client, owner_token, owner):
    token, secret = owner_token
    token.revoke(by=owner)

    response = client.get("/api/datasets/", **bearer(secret))

    assert response.status_code == 401
    assert response.json()["code"] == "token_revoked"
    assert "revoked" in response.json()["detail"]


def test_malformed_authorization_header_gets_401(client, db):
    response = client.get("/api/datasets/", HTTP_AUTHORIZATION="Bearer two words")
    assert response.status_code == 401
    assert response.json()["code"] == "token_malformed"


def test_a_team_token_acts_for_its_team(client, unowned_dataset, owner_team, owner):
    _, secret = ApiToken.issue("checkout pipeline", team=owner_team)

    response = client.post(
        f"/api/datasets/{unowned_dataset.pk}/claim/", {"team": "checkout", "owner": "alice"},
        content_type="application/json", **bearer(secret),
    )

    assert response.status_code == 200, response.content
    assert response.json()["owner_team"] == "checkout"


def test_revoking_is_audited_once(owner_token, owner):
    from registry.models import AuditEvent

    token, _ = owner_token
    token.revoke(by=owner)
    token.revoke(by=owner)
    assert AuditEvent.objects.filter(action="token.revoked", object_id=str(token.pk)).count() == 1


def test_create_token_command_prints_a_working_secret(client, owner_team, capsys):
    from django.core.management import call_command

    call_command("create_token", "nightly load", team="checkout")
    secret = capsys.readouterr().out.strip()

    assert secret.startswith("dr_")
    assert client.get("/api/teams/", **bearer(secret)).status_code == 200


def test_create_token_command_names_an_unknown_team(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="No team with slug 'nope'"):
        call_command("create_token", "x", team="nope")
