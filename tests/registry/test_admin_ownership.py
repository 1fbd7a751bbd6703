"""Governance admins assign, transfer and unclaim datasets with admin actions that ask
for a reason and go through Dataset.assign_owner, so each is audited with it
(issue 16, point 11)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from registry.models import AuditEvent, Dataset, Membership
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/registry/dataset/"


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


def run_action(client, action: str, datasets, **form):
    """The changelist's action, then (with `form`) the submitted intermediate page."""
    data = {"action": action, "_selected_action": [d.pk for d in datasets]}
    if form:
        data.update(apply="yes", **form)
    else:
        data["index"] = "0"
    return client.post(CHANGELIST, data, follow=True)


def owner_changes(dataset):
    return AuditEvent.objects.filter(action="dataset.owner_changed", object_id=str(dataset.pk))


def test_choosing_an_ownership_action_asks_for_the_new_owner_and_a_reason(as_admin, unowned_dataset):
    page = run_action(as_admin, "assign_owner", [unowned_dataset]).content.decode()

    assert 'id="ownership-form"' in page
    assert f"{unowned_dataset}" in page and "(no owner)" in page
    assert 'name="team"' in page and 'name="owner"' in page and 'name="reason"' in page
    assert not owner_changes(unowned_dataset).exists()


def test_an_admin_assigns_an_owner_with_a_reason_and_the_audit_row_keeps_it(
        as_admin, admin, unowned_dataset, owner_team, owner):
    response = run_action(as_admin, "assign_owner", [unowned_dataset], team=owner_team.pk, owner=owner.pk,
                          reason="Checkout writes this table.")

    assert f"1 dataset now owned by team checkout: {unowned_dataset}." in response.content.decode()
    unowned_dataset.refresh_from_db()
    assert (unowned_dataset.owner_team, unowned_dataset.owner) == (owner_team, owner)
    (event,) = owner_changes(unowned_dataset)
    assert event.actor == admin
    assert event.before == {"owner_team": None, "owner": None}
    assert event.after == {"owner_team": "checkout", "owner": "alice", "reason": "Checkout writes this table."}


def test_an_admin_transfers_datasets_to_another_team_in_one_go(as_admin, dataset, other_team, outsider,
                                                             owner_team, owner):
    second = Dataset.objects.create(namespace="s3://lake", name="refunds", owner_team=owner_team, owner=owner)

    response = run_action(as_admin, "transfer_owner", [dataset, second], team=other_team.pk, owner=outsider.pk,
                          reason="The warehouse team took over the order pipeline.")

    assert "2 datasets now owned by team warehouse" in response.content.decode()
    assert set(Dataset.objects.values_list("owner_team__slug", flat=True)) == {"warehouse"}
    for d in (dataset, second):
        (event,) = owner_changes(d)
        assert event.before == {"owner_team": "checkout", "owner": "alice"}
        assert event.after["reason"] == "The warehouse team took over the order pipeline."


def test_an_admin_unclaims_a_dataset_with_a_reason(as_admin, dataset):
    response = run_action(as_admin, "unclaim", [dataset], reason="Checkout no longer writes it.")

    assert "1 dataset now without an owner" in response.content.decode()
    dataset.refresh_from_db()
    assert dataset.owner_team is None and dataset.owner is None
    (event,) = owner_changes(dataset)
    assert event.after == {"owner_team": None, "owner": None, "reason": "Checkout no longer writes it."}


def test_an_ownership_change_without_a_reason_is_refused_and_changes_nothing(as_admin, dataset, other_team):
    page = run_action(as_admin, "transfer_owner", [dataset], team=other_team.pk, reason="   ").content.decode()

    assert "Say why the ownership changes; the audit log keeps the reason." in page
    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"
    assert not owner_changes(dataset).exists()


def test_the_owner_person_must_belong_to_the_new_team(as_admin, dataset, other_team, consumer):
    page = run_action(as_admin, "transfer_owner", [dataset], team=other_team.pk, owner=consumer.pk,
                      reason="Warehouse takes it.").content.decode()

    assert "carol is not a member of team warehouse; the owner must belong to the owning team." in page
    assert not owner_changes(dataset).exists()


def test_assigning_an_owned_dataset_is_refused_and_says_to_transfer(as_admin, dataset, unowned_dataset):
    spare = Dataset.objects.create(namespace="s3://lake", name="spare")

    page = run_action(as_admin, "assign_owner", [spare, dataset]).content.decode()

    assert f"Dataset {dataset} is already owned by team checkout: transfer it instead." in page
    assert 'id="ownership-form"' not in page


def test_transferring_or_unclaiming_an_unowned_dataset_is_refused(as_admin, unowned_dataset):
    for action in ("transfer_owner", "unclaim"):
        page = run_action(as_admin, action, [unowned_dataset], reason="why not").content.decode()
        assert f"Dataset {unowned_dataset} has no owner" in page
    assert not owner_changes(unowned_dataset).exists()


def test_the_change_form_shows_ownership_read_only_so_it_changes_only_with_a_reason(as_admin, dataset, other_team):
    page = as_admin.get(f"/admin/registry/dataset/{dataset.pk}/change/").content.decode()
    assert 'name="owner_team"' not in page and 'name="owner"' not in page

    as_admin.post(f"/admin/registry/dataset/{dataset.pk}/change/", {
        "namespace": dataset.namespace, "name": dataset.name, "description": "", "owner_team": other_team.pk,
        "compatibility_mode": "BACKWARD", "created_at_0": "2026-01-01", "created_at_1": "00:00:00",
        "consumers-TOTAL_FORMS": "0", "consumers-INITIAL_FORMS": "0"})

    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"
    assert not owner_changes(dataset).exists()


def test_staff_without_the_right_to_change_datasets_get_no_ownership_actions(client, dataset, other_team):
    viewer = make_user("vera", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_dataset"))
    client.force_login(viewer)

    page = client.get(CHANGELIST).content.decode()
    assert "Transfer the selected datasets" not in page

    response = run_action(client, "transfer_owner", [dataset], team=other_team.pk, reason="a forged post")
    assert response.status_code in (200, 403)
    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"
    assert not owner_changes(dataset).exists()


def test_people_outside_the_admin_cannot_reach_the_actions(client, owner, dataset, other_team):
    client.force_login(owner)
    response = client.post(CHANGELIST, {"action": "transfer_owner", "_selected_action": [dataset.pk],
                                        "apply": "yes", "team": other_team.pk, "reason": "mine now"})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"


def test_the_transfer_form_offers_only_active_team_members_as_owner_grouped_by_team(
        as_admin, dataset, owner_team, other_team, owner, outsider):
    make_user("nobody-in-a-team")
    retired = make_user("retired", is_active=False)
    Membership.objects.create(team=other_team, user=retired)
    page = run_action(as_admin, "transfer_owner", [dataset]).content.decode()
    owner_field = page[page.index('name="owner"'):page.index("</select>", page.index('name="owner"'))]
    assert '<optgroup label="Checkout">' in owner_field and '<optgroup label="Warehouse">' in owner_field
    assert ">alice<" in owner_field and ">dave<" in owner_field
    assert "nobody-in-a-team" not in owner_field and "retired" not in owner_field


def test_an_owner_from_outside_the_chosen_team_is_refused(as_admin, dataset, other_team, owner):
    page = run_action(as_admin, "transfer_owner", [dataset], team=other_team.pk, owner=owner.pk,
                      reason="Warehouse takes it over.").content.decode()
    assert "alice is not a member of team warehouse" in page
    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout"
