"""Who owns a contract, and who may publish it (issue 15, point 8: contract takeover).

The owner a document names must be a team; only the contract's current owner team
(or a governance admin) publishes its versions, so only they hand it to another
team, and every hand-over is an audit row."""

from __future__ import annotations

import copy

import pytest
from django.core.management import call_command

from contracts_app.models import AuditAction, Contract
from contracts_app.publishing import publish_document, record_version
from registry.models import ApiToken, AuditEvent, Team
from tests.conftest import bearer
from tests.publish.conftest import order_placed, write_tree

pytestmark = pytest.mark.django_db

NAME = "retail.checkout.order_placed"


@pytest.fixture(autouse=True)
def store(settings, tmp_path):
    from registry.env import parse_contract_store

    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)


@pytest.fixture
def contract(owner, owner_team, django_capture_on_commit_callbacks):
    """order_placed 1.0, published by alice for Checkout."""
    with django_capture_on_commit_callbacks(execute=True):
        return record_version(order_placed(), by=owner).contract


def version(number: str, owner: str) -> dict:
    """order_placed at `number`, naming `owner`; only the description changes, so the gate lets it through."""
    document = copy.deepcopy(order_placed(number))
    document["schema"].update(owner=owner, description=f"An order was placed ({number}).")
    return document


def publish(client, person, document):
    _, secret = ApiToken.issue("test", user=person)
    return client.post("/api/change-requests/", {"document": document}, content_type="application/json",
                       **bearer(secret))


def owner_changes(contract):
    return AuditEvent.objects.filter(action=AuditAction.OWNER_CHANGED, object_id=str(contract.pk))


def test_a_misspelt_owner_is_refused_and_the_owner_team_stays(client, contract, owner, owner_team):
    response = publish(client, owner, version("1.1", "chekout"))

    assert response.status_code == 400
    assert response.json()["errors"] == [f"{NAME} 1.1: schema.owner 'chekout' is no team here; did you mean 'checkout'?"]
    contract.refresh_from_db()
    assert contract.owner_team == owner_team and contract.owner_label == "checkout"
    assert contract.versions.count() == 1


def test_the_takeover_of_the_issue_no_longer_works(client, contract, owner, owner_team, outsider, other_team):
    """1.1 with a misspelt owner, then another team publishing 1.2 as itself: both refused."""
    assert publish(client, owner, version("1.1", "chekout")).status_code == 400

    response = publish(client, outsider, version("1.2", "warehouse"))

    assert response.status_code == 403
    assert response.json()["detail"] == (
        f"Only a member of the contract's owner team (checkout) can publish a version of {NAME}; naming warehouse "
        "as its owner is a hand-over only that team or a governance admin can make.")
    contract.refresh_from_db()
    assert contract.owner_team == owner_team
    assert publish(client, owner, version("1.2", "checkout")).status_code == 200


def test_another_team_cannot_publish_a_version_naming_the_owner_team_either(client, contract, outsider, other_team):
    response = publish(client, outsider, version("1.1", "checkout"))
    assert response.status_code == 403
    assert response.json()["detail"] == f"Only a member of the contract's owner team (checkout) can publish a version of {NAME}."


def test_the_owner_team_hands_the_contract_over_and_it_is_audited(client, contract, owner, teammate, outsider,
                                                                   owner_team, other_team):
    assert publish(client, teammate, version("1.1", "warehouse")).status_code == 200

    contract.refresh_from_db()
    assert contract.owner_team == other_team
    change = owner_changes(contract).get()
    assert change.actor == teammate
    assert (change.before, change.after) == ({"owner_team": "checkout"}, {"owner_team": "warehouse", "version": "1.1"})
    # From now on the new owner team publishes, and the old one is an outsider.
    assert publish(client, owner, version("1.2", "warehouse")).status_code == 403
    assert publish(client, outsider, version("1.2", "warehouse")).status_code == 200


def test_a_governance_admin_hands_a_contract_over_and_it_is_audited(client, contract, admin, other_team):
    assert publish(client, admin, version("1.1", "warehouse")).status_code == 200
    assert owner_changes(contract).get().actor == admin


def test_a_version_keeping_the_owner_writes_no_hand_over(client, contract, owner):
    assert publish(client, owner, version("1.1", "checkout")).status_code == 200
    assert not owner_changes(contract).exists()


def test_the_first_version_is_published_by_a_member_of_the_team_it_names(client, owner_team, outsider, other_team, owner):
    response = publish(client, outsider, version("1.0", "checkout"))
    assert response.status_code == 403
    assert response.json()["detail"] == (
        f"Only a member of the owner team (checkout) named in the document can publish the first version of {NAME}.")
    assert not Contract.objects.exists()
    assert publish(client, owner, version("1.0", "checkout")).status_code == 200


def test_a_first_version_naming_no_team_is_refused(client, owner, owner_team):
    response = publish(client, owner, version("1.0", "nobody"))
    assert response.status_code == 400
    assert response.json()["errors"] == [
        f"{NAME} 1.0: schema.owner 'nobody' is no team here; name an existing team by its slug, or create the team first."]
    assert not Contract.objects.exists()


def test_a_contract_whose_team_is_gone_is_published_by_an_admin_only(client, contract, owner, admin, other_team):
    Team.objects.filter(slug="checkout").delete()  # the contract's owner team is set null
    response = publish(client, owner, version("1.1", "warehouse"))
    assert response.status_code == 403
    assert response.json()["detail"] == f"{NAME} has no owner team; only a governance admin can publish a version of it."
    assert publish(client, admin, version("1.1", "warehouse")).status_code == 200
    contract.refresh_from_db()
    assert contract.owner_team == other_team


def test_the_publish_service_refuses_an_outsider_without_raising(contract, outsider, other_team):
    outcome = publish_document(version("1.1", "warehouse"), by=outsider)
    assert outcome.status == "refused"
    assert "owner team (checkout)" in outcome.message
    assert Contract.objects.get().owner_team.slug == "checkout"


def test_record_version_checks_the_owner_rule_under_its_lock(contract, outsider, other_team):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied, match=r"owner team \(checkout\)"):
        record_version(version("1.1", "warehouse"), by=outsider)
    assert contract.versions.count() == 1


def test_the_publish_command_refuses_a_document_naming_no_team(tmp_path, capsys, owner_team):
    root = write_tree(tmp_path / "tree", [version("1.0", "chekout")])
    with pytest.raises(SystemExit) as exit_:
        call_command("publish_contracts", "--root", str(root))
    assert exit_.value.code == 1
    out = capsys.readouterr().out
    assert "schema.owner 'chekout' is no team here; did you mean 'checkout'?" in out
    assert not Contract.objects.exists()
