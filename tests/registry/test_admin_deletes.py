"""Deletes in the Django admin are audited, or refused where they would drop a
dependency without a word (issue 15, point 10)."""

from __future__ import annotations

import pytest

from change_requests.models import TeamChannel
from registry.constants import AuditAction
from registry.models import ApiToken, AuditEvent, Consumer, Dataset, Membership, Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


def deletions(action=AuditAction.DELETED_IN_ADMIN):
    return AuditEvent.objects.filter(action=action)


def test_a_dataset_with_consumers_is_not_deleted_and_says_who_depends_on_it(as_admin, dataset):
    page = as_admin.get(f"/admin/registry/dataset/{dataset.pk}/delete/").content.decode()
    assert f"Dataset {dataset} cannot be deleted: consumer teams depend on it (analytics); they unregister first." in page

    as_admin.post(f"/admin/registry/dataset/{dataset.pk}/delete/", {"post": "yes"})

    assert Dataset.objects.filter(pk=dataset.pk).exists()
    assert Consumer.objects.filter(dataset=dataset).count() == 1
    assert not deletions(AuditAction.DATASET_DELETED).exists()


def test_deleting_selected_datasets_is_refused_when_one_has_consumers(as_admin, dataset):
    spare = Dataset.objects.create(namespace="s3://lake", name="spare")
    as_admin.post("/admin/registry/dataset/", {"action": "delete_selected", "_selected_action": [dataset.pk, spare.pk],
                                               "post": "yes"})
    assert Dataset.objects.filter(pk__in=[dataset.pk, spare.pk]).count() == 2


def test_a_dataset_nobody_consumes_is_deleted_with_an_audit_row(as_admin, admin, owner_team, owner):
    dataset = Dataset.objects.create(namespace="s3://lake", name="scratch", owner_team=owner_team, owner=owner)

    response = as_admin.post(f"/admin/registry/dataset/{dataset.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    event = deletions(AuditAction.DATASET_DELETED).get()
    assert (event.actor, event.object_id) == (admin, str(dataset.pk))
    assert event.before == {"namespace": "s3://lake", "name": "scratch", "owner_team": "checkout", "owner": "alice",
                            "contract": None}


def test_a_team_that_consumes_datasets_is_not_deleted(as_admin, dataset, consumer_team):
    page = as_admin.get(f"/admin/registry/team/{consumer_team.pk}/delete/").content.decode()
    assert f"Team analytics cannot be deleted: it is a registered consumer of {dataset}" in page
    as_admin.post(f"/admin/registry/team/{consumer_team.pk}/delete/", {"post": "yes"})
    assert Team.objects.filter(pk=consumer_team.pk).exists() and Consumer.objects.exists()


def test_a_team_deleted_in_the_admin_is_audited_with_its_last_values(as_admin, admin, other_team):
    assert as_admin.post(f"/admin/registry/team/{other_team.pk}/delete/", {"post": "yes"}).status_code == 302
    event = deletions().get(object_type="registry.team")
    assert event.actor == admin and event.before["slug"] == "warehouse" and event.after is None


def test_a_membership_deleted_in_the_admin_is_audited(as_admin, owner_team, teammate):
    membership = Membership.objects.get(team=owner_team, user=teammate)
    as_admin.post(f"/admin/registry/membership/{membership.pk}/delete/", {"post": "yes"})
    event = deletions().get(object_type="registry.membership")
    assert event.before["team_id"] == owner_team.pk and event.before["user_id"] == teammate.pk


def test_a_membership_removed_in_the_teams_inline_is_audited(as_admin, owner_team, owner, teammate):
    memberships = list(Membership.objects.filter(team=owner_team).order_by("pk"))
    form = {"name": owner_team.name, "slug": owner_team.slug, "description": "",
            "created_at_0": owner_team.created_at.strftime("%Y-%m-%d"),
            "created_at_1": owner_team.created_at.strftime("%H:%M:%S"),
            "memberships-TOTAL_FORMS": str(len(memberships)), "memberships-INITIAL_FORMS": str(len(memberships)),
            "memberships-MIN_NUM_FORMS": "0", "memberships-MAX_NUM_FORMS": "1000"}
    for i, m in enumerate(memberships):
        form |= {f"memberships-{i}-id": m.pk, f"memberships-{i}-team": owner_team.pk, f"memberships-{i}-user": m.user_id,
                 f"memberships-{i}-role": m.role,
                 f"memberships-{i}-joined_at_0": m.joined_at.strftime("%Y-%m-%d"),
                 f"memberships-{i}-joined_at_1": m.joined_at.strftime("%H:%M:%S")}
    form[f"memberships-{memberships.index(next(m for m in memberships if m.user == teammate))}-DELETE"] = "on"

    response = as_admin.post(f"/admin/registry/team/{owner_team.pk}/change/", form)

    assert response.status_code == 302
    assert list(owner_team.members.all()) == [owner]
    assert deletions().get(object_type="registry.membership").before["user_id"] == teammate.pk


def test_a_deleted_token_and_channel_leave_no_secret_in_the_audit_log(as_admin, consumer_team, consumer):
    token, secret = ApiToken.issue("ci", user=consumer)
    channel = TeamChannel.objects.create(team=consumer_team, kind="webhook",
                                         settings={"url": "https://hooks.example.com/x", "secret": "s3cret"})
    as_admin.post(f"/admin/registry/apitoken/{token.pk}/delete/", {"post": "yes"})
    as_admin.post(f"/admin/change_requests/teamchannel/{channel.pk}/delete/", {"post": "yes"})

    token_row = deletions().get(object_type="registry.apitoken")
    channel_row = deletions().get(object_type="change_requests.teamchannel")
    assert token_row.before["key_hash"] == "(hidden)" and token_row.before["name"] == "ci"
    assert channel_row.before["settings"] == {"url": "https://hooks.example.com/x", "secret": "(hidden)"}
    assert "s3cret" not in str(channel_row.before) and secret not in str(token_row.before)
