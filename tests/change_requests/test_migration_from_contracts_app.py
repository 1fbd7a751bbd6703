"""Change requests moved out of contracts_app: a database populated under the old
layout (requests in every state, their reviews, notifications, review policies, a
team webhook) migrates forward with every row where the new app looks for it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from change_requests.models import (
    ChangeRequest,
    Notification,
    ReviewPolicy,
    TeamChannel,
    TeamReview,
)
from registry.models import AuditEvent, Team
from tests.migrations import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

OLD_LAYOUT = [
    ("contracts_app", "0004_schema_drift"),
    ("registry", "0002_audit_append_only"),
    ("change_requests", None),
]
STATES = ["open", "approved", "published", "rejected", "withdrawn"]


def populate_old_layout(apps) -> dict:
    """Rows written through the historical models of the old layout."""
    User = apps.get_model("auth", "User")
    Team = apps.get_model("registry", "Team")
    Dataset = apps.get_model("registry", "Dataset")
    Contract = apps.get_model("contracts_app", "Contract")
    ContractVersion = apps.get_model("contracts_app", "ContractVersion")
    ChangeRequest = apps.get_model("contracts_app", "ChangeRequest")
    TeamReview = apps.get_model("contracts_app", "TeamReview")
    Notification = apps.get_model("contracts_app", "Notification")
    ReviewPolicy = apps.get_model("contracts_app", "ReviewPolicy")

    alice = User.objects.create(username="alice", email="alice@example.com")
    owners = Team.objects.create(name="Checkout", slug="checkout")
    readers = Team.objects.create(name="Analytics", slug="analytics", webhook_url="https://hooks.example.com/a",
                                  webhook_secret="s3cret")
    dataset = Dataset.objects.create(namespace="postgres://db", name="retail.orders", owner_team=owners)
    policy = ReviewPolicy.objects.create(dataset=dataset, review_period=timedelta(days=3))
    now = timezone.now()
    requests, reviews, notifications = {}, [], []
    for i, state in enumerate(STATES):
        # One contract per request: at most one unfinished request per contract.
        contract = Contract.objects.create(name=f"retail.checkout.c{i}", domain="retail", entity=f"c{i}",
                                           schema_type="event", owner_team=owners)
        base = ContractVersion.objects.create(contract=contract, version="1.0", document={"v": 1}, checksum="x",
                                              json_schema={"type": "object"})
        request = ChangeRequest.objects.create(
            contract=contract, state=state, owner_team=owners, base_version=base, proposed_version="2.0",
            proposed_document={"v": 2}, proposed_json_schema=None, report={"mode": "BACKWARD"},
            opened_by=alice, opened_by_label="alice", deadline_at=now + timedelta(days=7),
            remind_at=now + timedelta(days=6), summary=f"request {state}",
        )
        requests[state] = request.pk
        reviews.append(TeamReview.objects.create(change_request=request, team=readers,
                                                 status="acknowledged" if state != "open" else "pending").pk)
        notifications.append(Notification.objects.create(
            change_request=request, event="opened", channel="email", recipient="carol@example.com", team=readers,
            subject="s", body="b").pk)
        notifications.append(Notification.objects.create(
            change_request=request, event="opened", channel="webhook", recipient=readers.webhook_url, team=readers,
            subject="s", body="b", payload={"event": "change_request.opened"}).pk)
    return {"requests": requests, "reviews": reviews, "notifications": notifications, "policy": policy.pk,
            "readers": readers.pk,
            "content_type": ContentType.objects.get_or_create(app_label="contracts_app", model="changerequest")[0].pk}


@pytest.fixture
def old_layout():
    """The database at the old layout; whatever happens, migrated forward again afterwards."""
    old = migrate(OLD_LAYOUT)
    yield old.loader.project_state([node for node in OLD_LAYOUT if node[1]]).apps
    migrate(latest())


def test_a_database_of_the_old_layout_migrates_forward_with_every_row(old_layout):
    rows = populate_old_layout(old_layout)

    new = migrate(latest())
    assert not new.migration_plan(latest())  # fully migrated
    ContentType.objects.clear_cache()

    assert ChangeRequest._meta.db_table == "change_requests_changerequest"
    by_state = {cr.state: cr for cr in ChangeRequest.objects.select_related("contract", "base_version")}
    assert {state: cr.pk for state, cr in by_state.items()} == rows["requests"]
    assert by_state["open"].summary == "request open" and by_state["open"].base_version.version == "1.0"
    assert sorted(TeamReview.objects.values_list("pk", flat=True)) == sorted(rows["reviews"])
    assert sorted(Notification.objects.values_list("pk", flat=True)) == sorted(rows["notifications"])
    assert ReviewPolicy.objects.get().pk == rows["policy"]

    # The team's webhook is a channel now, and the queued webhook rows still know their secret.
    channel = TeamChannel.objects.get()
    assert (channel.team_id, channel.kind, channel.settings) == (
        rows["readers"], "webhook", {"url": "https://hooks.example.com/a", "secret": "s3cret"})
    hooks = Notification.objects.filter(channel="webhook")
    assert hooks.count() == len(STATES) and all(n.team_channel_id == channel.pk for n in hooks)
    assert not hasattr(Team.objects.get(pk=rows["readers"]), "webhook_url")

    # Permissions and anything else pointing at the content type followed the model.
    assert ContentType.objects.get_for_model(ChangeRequest).pk == rows["content_type"]

    # New rows keep working in the renamed tables, and audit rows keep naming requests the old way.
    open_request = by_state["open"]
    admin = get_user_model().objects.create_user("gina", is_staff=True)
    open_request.reject(by=admin, comment="moved")
    assert AuditEvent.objects.filter(object_type="contracts_app.changerequest", object_id=str(open_request.pk)).exists()
