"""A contract's mode and bindings through the REST API: its owner team (or a
governance admin) changes them, everyone else is refused with 403, and every
change is an audit row written with it."""

from __future__ import annotations

import pytest

from contracts_app.models import AuditAction, Contract, DatasetBinding
from contracts_app.publishing import record_version
from registry.models import ApiToken, AuditEvent, Dataset
from tests.conftest import bearer
from tests.publish.conftest import order_placed

pytestmark = pytest.mark.django_db

NAME = "retail.checkout.order_placed"
URL = f"/api/contracts/{NAME}/"
BINDINGS = f"/api/contracts/{NAME}/bindings/"


@pytest.fixture
def contract(owner_team, dataset, owner, local_store, django_capture_on_commit_callbacks):
    """order_placed 1.0, owned by Checkout, bound to `dataset` (which Analytics consumes)."""
    with django_capture_on_commit_callbacks(execute=True):
        version = record_version(order_placed(), by=owner, store=local_store)
    version.contract.bind(dataset, by=owner)
    return version.contract


@pytest.fixture
def people(owner, teammate, consumer, outsider, admin, consumer_team, other_team):
    return {"owner": owner, "teammate": teammate, "consumer": consumer, "outsider": outsider, "admin": admin}


def as_(client, person):
    client.force_login(person)
    return client


def patch(client, body):
    return client.patch(URL, body, content_type="application/json")


def mode_events(contract):
    return AuditEvent.objects.filter(object_id=str(contract.pk), action__in=[AuditAction.MODE_CHANGED,
                                                                              AuditAction.MODE_WEAKENED])


def test_the_contract_shows_its_mode_its_datasets_and_what_a_version_must_pass(client, contract, consumer, dataset):
    body = as_(client, consumer).get(URL).json()
    assert body["compatibility_mode"] == "FULL"
    assert body["datasets"] == [{"id": dataset.pk, "namespace": dataset.namespace, "name": dataset.name,
                                 "compatibility_mode": "BACKWARD", "bound_at": body["datasets"][0]["bound_at"]}]
    assert body["required_modes"] == ["FULL", "BACKWARD"]


@pytest.mark.parametrize(("who", "allowed"), [
    ("owner", True), ("teammate", True), ("admin", True), ("consumer", False), ("outsider", False),
])
def test_only_the_owner_team_or_an_admin_sets_the_mode(client, contract, people, who, allowed):
    response = patch(as_(client, people[who]), {"compatibility_mode": "FULL_TRANSITIVE"})
    contract.refresh_from_db()
    if allowed:
        assert response.status_code == 200, response.json()
        assert response.json()["compatibility_mode"] == "FULL_TRANSITIVE" == contract.compatibility_mode
        event = mode_events(contract).get()
        assert (event.action, event.actor, event.before, event.after) == (
            AuditAction.MODE_CHANGED, people[who], {"compatibility_mode": "FULL"},
            {"compatibility_mode": "FULL_TRANSITIVE"})
    else:
        assert response.status_code == 403
        assert response.json()["detail"] == (
            f"Only a member of the owner team checkout or a governance admin can change the compatibility mode of {NAME}.")
        assert contract.compatibility_mode == "FULL" and not mode_events(contract).exists()


def test_a_team_token_of_the_owner_team_sets_the_mode(client, contract, owner_team):
    _, secret = ApiToken.issue("deploy", team=owner_team)
    response = client.patch(URL, {"compatibility_mode": "BACKWARD"}, content_type="application/json", **bearer(secret))
    assert response.status_code == 200
    assert mode_events(contract).get().actor_label == "token:deploy@checkout"


def test_weakening_a_mode_consumers_depend_on_is_audited_as_a_weakening(client, contract, owner):
    response = patch(as_(client, owner), {"compatibility_mode": "BACKWARD"})
    assert response.status_code == 200
    event = mode_events(contract).get()
    assert event.action == AuditAction.MODE_WEAKENED
    assert event.before == {"compatibility_mode": "FULL"}
    assert event.after == {"compatibility_mode": "BACKWARD", "consumer_teams": ["analytics"]}
    assert list(contract.weakenings()) == [event]


@pytest.mark.parametrize(("old", "new", "weaker"), [
    ("FULL", "NONE", True), ("FULL", "FORWARD", True), ("FULL_TRANSITIVE", "FULL", True),
    ("BACKWARD", "FORWARD", True), ("BACKWARD", "FULL", False), ("NONE", "BACKWARD", False),
    ("FULL", "FULL_TRANSITIVE", False),
])
def test_weaker_means_it_lets_through_a_change_the_old_mode_refused(contract, owner, old, new, weaker):
    Contract.objects.filter(pk=contract.pk).update(compatibility_mode=old)
    contract.refresh_from_db()
    contract.set_mode(new, by=owner)
    assert mode_events(contract).get().action == (AuditAction.MODE_WEAKENED if weaker else AuditAction.MODE_CHANGED)


def test_weakening_a_contract_nobody_consumes_is_an_ordinary_change(client, contract, owner, dataset):
    contract.unbind(dataset, by=owner)
    patch(as_(client, owner), {"compatibility_mode": "NONE"})
    assert mode_events(contract).get().action == AuditAction.MODE_CHANGED


def test_setting_the_same_mode_again_changes_nothing(client, contract, owner):
    assert patch(as_(client, owner), {"compatibility_mode": "FULL"}).status_code == 200
    assert not mode_events(contract).exists()


def test_an_unknown_mode_or_another_field_is_a_400(client, contract, owner):
    as_(client, owner)
    unknown = patch(client, {"compatibility_mode": "SIDEWAYS"})
    assert unknown.status_code == 400 and "compatibility_mode" in unknown.json()["fields"]
    other = patch(client, {"compatibility_mode": "FULL", "description": "mine now"})
    assert other.status_code == 400
    assert "Only compatibility_mode can be changed here, not description" in str(other.json())
    assert not mode_events(contract).exists()


@pytest.mark.parametrize("ref", ["id", "identity"])
@pytest.mark.parametrize(("who", "allowed"), [
    ("owner", True), ("teammate", True), ("admin", True), ("consumer", False), ("outsider", False),
])
def test_only_the_owner_team_or_an_admin_binds_a_dataset(client, contract, people, unowned_dataset, who, allowed, ref):
    other = Dataset.objects.create(namespace="kafka://retail-events", name="checkout.order_placed")
    body = {"dataset": other.pk if ref == "id" else {"namespace": other.namespace, "name": other.name}}
    response = as_(client, people[who]).post(BINDINGS, body, content_type="application/json")
    bound = AuditEvent.objects.filter(action=AuditAction.DATASET_BOUND, object_id=str(other.pk))
    if allowed:
        assert response.status_code == 201, response.json()
        assert response.json()["name"] == "checkout.order_placed"
        assert DatasetBinding.objects.get(dataset=other).contract == contract
        assert bound.get().actor == people[who] and bound.get().after == {"contract": NAME}
    else:
        assert response.status_code == 403
        assert "Only a member of the owner team checkout" in response.json()["detail"]
        assert not DatasetBinding.objects.filter(dataset=other).exists() and not bound.exists()


def test_binding_an_unknown_dataset_says_how_datasets_appear(client, contract, owner):
    response = as_(client, owner).post(BINDINGS, {"dataset": {"namespace": "s3://x", "name": "y"}},
                                       content_type="application/json")
    assert response.status_code == 400
    assert "No dataset s3://x/y" in str(response.json())
    shape = as_(client, owner).post(BINDINGS, {"dataset": "orders"}, content_type="application/json")
    assert shape.status_code == 400 and 'as its id or as {"namespace"' in str(shape.json())


def test_a_dataset_bound_to_another_teams_contract_is_not_taken(client, contract, owner, outsider, other_team,
                                                                  local_store, django_capture_on_commit_callbacks):
    theirs = order_placed()
    theirs["schema"].update(name="retail.warehouse.picks", subdomains=["warehouse"], entity="picks", owner="warehouse")
    with django_capture_on_commit_callbacks(execute=True):
        other_contract = record_version(theirs, by=outsider, store=local_store).contract
    picks = Dataset.objects.create(namespace="db", name="picks")
    other_contract.bind(picks, by=outsider)

    response = as_(client, owner).post(BINDINGS, {"dataset": picks.pk}, content_type="application/json")

    assert response.status_code == 403
    assert "bound to retail.warehouse.picks; only its owner team or a governance admin can move it" in response.json()["detail"]
    assert DatasetBinding.objects.get(dataset=picks).contract == other_contract


@pytest.mark.parametrize(("who", "allowed"), [
    ("owner", True), ("teammate", True), ("admin", True), ("consumer", False), ("outsider", False),
])
def test_only_the_owner_team_or_an_admin_unbinds_a_dataset(client, contract, people, dataset, who, allowed):
    response = as_(client, people[who]).delete(f"{BINDINGS}{dataset.pk}/")
    unbound = AuditEvent.objects.filter(action=AuditAction.DATASET_UNBOUND, object_id=str(dataset.pk))
    if allowed:
        assert response.status_code == 204
        assert not DatasetBinding.objects.exists()
        assert unbound.get().before == {"contract": NAME, "consumer_teams": ["analytics"]}
    else:
        assert response.status_code == 403
        assert DatasetBinding.objects.filter(dataset=dataset).exists() and not unbound.exists()


def test_unbinding_a_dataset_that_is_not_bound_is_a_404(client, contract, owner, unowned_dataset, dataset):
    other = Dataset.objects.create(namespace="db", name="elsewhere")
    response = as_(client, owner).delete(f"{BINDINGS}{other.pk}/")
    assert response.status_code == 404 and f"is not bound to {NAME}" in response.json()["detail"]


def test_the_bindings_are_listed(client, contract, consumer, dataset):
    assert [b["id"] for b in as_(client, consumer).get(BINDINGS).json()] == [dataset.pk]


def test_a_contract_without_an_owner_team_is_for_admins(client, owner_team, owner, admin, local_store,
                                                        django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        record_version(order_placed(), by=None, store=local_store)
    owner_team.delete()  # its document still names "checkout", which is no team any more
    response = patch(as_(client, owner), {"compatibility_mode": "NONE"})
    assert response.status_code == 403
    assert response.json()["detail"] == (
        f"{NAME} has no owner team (its document names 'checkout', which is no team here); "
        f"only a governance admin can change the compatibility mode of {NAME}.")
    assert patch(as_(client, admin), {"compatibility_mode": "NONE"}).status_code == 200
