import pytest
from django.core.exceptions import PermissionDenied

from registry.models import (
    AlreadyOwned,
    AuditEvent,
    Consumer,
    DatasetUnowned,
    OwnerCannotConsume,
    RegistryError,
)


def audit_rows(dataset):
    return AuditEvent.objects.filter(object_type="registry.dataset", object_id=str(dataset.pk))


def test_member_claims_unowned_dataset_for_their_team(unowned_dataset, owner_team, owner):
    unowned_dataset.claim(owner_team, owner=owner, by=owner)

    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team == owner_team
    assert unowned_dataset.owner == owner


def test_claim_writes_one_audit_row_with_before_and_after(unowned_dataset, owner_team, owner, teammate):
    unowned_dataset.claim(owner_team, owner=teammate, by=owner)

    (event,) = audit_rows(unowned_dataset)
    assert event.action == "dataset.claimed"
    assert event.actor == owner
    assert event.before == {"owner_team": None, "owner": None}
    assert event.after == {"owner_team": "checkout", "owner": "bob"}


def test_outsider_cannot_claim_for_a_team_they_are_not_in(unowned_dataset, owner_team, owner, outsider):
    with pytest.raises(PermissionDenied):
        unowned_dataset.claim(owner_team, owner=owner, by=outsider)
    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team is None
    assert not audit_rows(unowned_dataset).exists()


def test_owner_person_must_belong_to_the_claiming_team(unowned_dataset, owner_team, owner, outsider):
    with pytest.raises(RegistryError, match="not a member of team checkout"):
        unowned_dataset.claim(owner_team, owner=outsider, by=owner)


def test_an_owned_dataset_cannot_be_claimed_again(dataset, other_team, outsider):
    with pytest.raises(AlreadyOwned, match="already owned by team checkout"):
        dataset.claim(other_team, owner=outsider, by=outsider)
    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"


def test_only_an_admin_changes_an_owned_datasets_owner(dataset, other_team, outsider, owner, admin):
    with pytest.raises(PermissionDenied):
        dataset.assign_owner(other_team, owner=outsider, by=owner)

    dataset.assign_owner(other_team, owner=outsider, by=admin)

    dataset.refresh_from_db()
    assert (dataset.owner_team, dataset.owner) == (other_team, outsider)
    (event,) = audit_rows(dataset).filter(action="dataset.owner_changed")
    assert event.before == {"owner_team": "checkout", "owner": "alice"}
    assert event.after == {"owner_team": "warehouse", "owner": "dave"}


def test_consumer_registration_is_refused_before_a_claim(unowned_dataset, consumer_team, consumer):
    with pytest.raises(DatasetUnowned, match="a team must claim it before anyone can register"):
        unowned_dataset.register_consumer(consumer_team, by=consumer)
    assert not Consumer.objects.exists()
    assert not audit_rows(unowned_dataset).exists()


def test_consumer_team_registers_once_claimed(unowned_dataset, owner_team, owner, other_team, outsider):
    unowned_dataset.claim(owner_team, owner=owner, by=owner)

    unowned_dataset.register_consumer(other_team, by=outsider)
    unowned_dataset.register_consumer(other_team, by=outsider)  # a second time is a no-op

    assert list(unowned_dataset.consumer_teams()) == [other_team]
    assert audit_rows(unowned_dataset).filter(action="consumer.registered").count() == 1


def test_nobody_registers_a_team_they_are_not_in(dataset, other_team, consumer):
    with pytest.raises(PermissionDenied):
        dataset.register_consumer(other_team, by=consumer)


def test_a_team_unregisters_itself(dataset, consumer_team, consumer):
    assert dataset.unregister_consumer(consumer_team, by=consumer) is True

    assert not dataset.consumers.exists()
    (event,) = audit_rows(dataset).filter(action="consumer.unregistered")
    assert event.before == {"team": "analytics"}


def test_an_outsider_cannot_unregister_another_team(dataset, consumer_team, outsider):
    with pytest.raises(PermissionDenied):
        dataset.unregister_consumer(consumer_team, by=outsider)
    assert dataset.consumers.count() == 1


def test_the_owner_team_is_not_a_consumer_of_its_own_dataset(dataset, owner_team, owner):
    with pytest.raises(OwnerCannotConsume, match="does not register as a consumer of its own dataset"):
        dataset.register_consumer(owner_team, by=owner)
    assert not dataset.consumers.filter(team=owner_team).exists()
