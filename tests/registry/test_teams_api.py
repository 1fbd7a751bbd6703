"""The teams API: everyone reads teams; governance admins create, change and sync them."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from change_requests.notifications import TeamChannel
from registry.models import ApiToken, AuditEvent, Membership, Team
from tests.conftest import bearer


def post(client, url: str, body, **extra):
    return client.post(url, body, content_type="application/json", **extra)


def patch(client, url: str, body, **extra):
    return client.patch(url, body, content_type="application/json", **extra)


def roles(slug: str) -> dict[str, str]:
    return dict(Membership.objects.filter(team__slug=slug).values_list("user__username", "role"))


NEW_TEAM = {"slug": "finance", "name": "Finance", "parent": "checkout",
            "channels": [{"kind": "email", "address": "finance-data@example.com"}],
            "members": [{"username": "alice", "role": "lead"}, {"email": "erin@example.com"}]}


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


# --- who may do what ------------------------------------------------------------------

def test_a_governance_admin_creates_a_team_with_members_and_channels(as_admin, owner_team):
    response = post(as_admin, "/api/teams/", NEW_TEAM)

    assert response.status_code == 201
    body = response.json()
    assert body["slug"] == "finance" and body["parent"] == "checkout"
    assert [(m["username"], m["role"]) for m in body["members"]] == [("alice", "lead"), ("erin@example.com", "member")]
    assert body["channels"] == [{"kind": "email", "recipient": "finance-data@example.com",
                                 "settings": {"address": "finance-data@example.com"}}]
    assert AuditEvent.objects.filter(action="team.created", actor__username="gina").exists()
    assert not get_user_model().objects.get(username="erin@example.com").has_usable_password()


@pytest.mark.parametrize("who", ["owner", "outsider"])
def test_a_team_member_or_an_outsider_cannot_create_change_or_sync_teams(client, owner_team, other_team, request, who):
    client.force_login(request.getfixturevalue(who))

    responses = [
        post(client, "/api/teams/", NEW_TEAM),
        patch(client, "/api/teams/checkout/", {"name": "Renamed"}),
        post(client, "/api/teams/checkout/members/", {"username": "dave"}),
        client.delete("/api/teams/checkout/members/bob/"),
        post(client, "/api/team-sync/", {"teams": [{"slug": "x", "name": "X"}]}),
    ]

    assert [r.status_code for r in responses] == [403] * 5
    assert responses[0].json() == {"detail": "Managing teams and their members is for governance admins.",
                                   "code": "permission_denied"}
    assert Team.objects.get(slug="checkout").name == "Checkout"
    assert set(roles("checkout")) == {"alice", "bob"}
    assert not AuditEvent.objects.exists()


def test_a_team_token_cannot_manage_teams(client, owner_team):
    _, secret = ApiToken.issue("ci", team=owner_team)

    response = post(client, "/api/teams/checkout/members/", {"username": "carol"}, **bearer(secret))

    assert response.status_code == 403


def test_anyone_signed_in_reads_teams_and_members_but_not_channel_secrets(client, owner_team, outsider):
    TeamChannel.objects.add_webhook(owner_team, url="https://hooks.example.com/checkout", secret="s3cret")
    Membership.objects.filter(user__username="alice").update(role="lead")
    client.force_login(outsider)

    listing = client.get("/api/teams/").json()["results"]
    detail = client.get("/api/teams/checkout/").json()
    members = client.get("/api/teams/checkout/members/").json()

    assert listing == [{"id": owner_team.pk, "name": "Checkout", "slug": "checkout", "description": "", "parent": None}]
    assert detail["channels"] == [{"kind": "webhook", "recipient": "https://hooks.example.com/checkout",
                                   "settings": {"url": "https://hooks.example.com/checkout", "secret": "(hidden)"}}]
    assert [(m["username"], m["email"], m["role"]) for m in members] == [
        ("alice", "alice@example.com", "lead"), ("bob", "bob@example.com", "member")]


def test_a_team_of_200_people_reads_in_a_constant_number_of_queries(client, owner_team, outsider,
                                                                    django_assert_num_queries):
    people = get_user_model().objects.bulk_create(
        get_user_model()(username=f"person{i:03}", email=f"person{i:03}@example.com") for i in range(200))
    Membership.objects.bulk_create(Membership(team=owner_team, user=p) for p in people)
    TeamChannel.objects.add(owner_team, "email", address="checkout@example.com")
    client.force_login(outsider)

    # 1: the session, 2: the user, 3: the team with its parent, 4: its memberships with their
    # users, 5: its channels.
    with django_assert_num_queries(5):
        body = client.get("/api/teams/checkout/").json()

    assert len(body["members"]) == 202
    assert len(body["channels"]) == 1


def test_signed_out_nobody_reads_teams(client, owner_team):
    assert client.get("/api/teams/checkout/").status_code in (401, 403)


# --- changing a team ------------------------------------------------------------------

def test_patch_changes_only_what_it_names_and_adds_members(as_admin, owner_team, other_team):
    response = patch(as_admin, "/api/teams/checkout/", {"description": "Orders and payments", "parent": "warehouse",
                                                       "members": [{"username": "dave", "role": "lead"}]})

    assert response.status_code == 200
    checkout = Team.objects.get(slug="checkout")
    assert (checkout.name, checkout.description, checkout.parent.slug) == ("Checkout", "Orders and payments", "warehouse")
    assert roles("checkout") == {"alice": "member", "bob": "member", "dave": "lead"}
    assert sorted(AuditEvent.objects.values_list("action", flat=True)) == [
        "team.member_added", "team.updated", "team.updated"]


def test_patch_with_prune_makes_the_member_list_exact(as_admin, owner_team):
    response = patch(as_admin, "/api/teams/checkout/?prune=true", {"members": [{"username": "bob"}]})

    assert response.status_code == 200
    assert roles("checkout") == {"bob": "member"}
    assert AuditEvent.objects.get(action="team.member_removed").before == {"user": "alice", "role": "member"}


def test_patch_refuses_a_different_slug_and_an_unknown_team(as_admin, owner_team):
    renamed = patch(as_admin, "/api/teams/checkout/", {"slug": "shop"})
    missing = patch(as_admin, "/api/teams/nowhere/", {"name": "Nowhere"})

    assert renamed.status_code == 400
    assert renamed.json() == {"detail": "slug: is 'checkout' in the URL; rename a team in the admin.",
                              "code": "teams_file_invalid"}
    assert missing.status_code == 404


def test_creating_a_team_that_exists_is_a_conflict(as_admin, owner_team):
    response = post(as_admin, "/api/teams/", {"slug": "checkout", "name": "Checkout"})

    assert response.status_code == 409
    assert "Team checkout exists already; change it with PATCH /api/teams/checkout/." in response.json()["detail"]


def test_a_bad_team_body_names_each_problem_with_its_path(as_admin):
    response = post(as_admin, "/api/teams/", {"slug": "finance", "members": [{"username": "alice", "role": "boss"}],
                                              "channels": [{"kind": "email"}]})

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "name: is required. channels[0]: An e-mail channel needs \"address\": a valid e-mail address. "
        "members[0].role: must be one of member, lead, not 'boss'.")
    assert not Team.objects.filter(slug="finance").exists()


# --- members ----------------------------------------------------------------------------

def test_an_admin_adds_a_member_then_changes_their_role(as_admin, owner_team, consumer):
    added = post(as_admin, "/api/teams/checkout/members/", {"username": "carol"})
    promoted = post(as_admin, "/api/teams/checkout/members/", {"email": "CAROL@example.com", "role": "lead"})

    assert (added.status_code, added.json()["role"]) == (201, "member")
    assert (promoted.status_code, promoted.json()["role"]) == (200, "lead")
    assert [e.action for e in AuditEvent.objects.order_by("id")] == ["team.member_added", "team.member_role_changed"]


def test_adding_someone_unknown_by_email_creates_them(as_admin, owner_team):
    response = post(as_admin, "/api/teams/checkout/members/", {"email": "new.hire@example.com"})

    assert response.status_code == 201
    assert response.json()["username"] == "new.hire@example.com"
    assert AuditEvent.objects.filter(action="user.created").count() == 1


def test_removing_a_member_is_audited_and_a_dataset_owner_needs_a_reason(as_admin, dataset):
    refused = as_admin.delete("/api/teams/checkout/members/alice/")
    removed = as_admin.delete("/api/teams/checkout/members/alice/?reason=left+the+company")
    again = as_admin.delete("/api/teams/checkout/members/alice/")

    assert refused.status_code == 409
    assert "alice is the named owner of 1 dataset of team checkout" in refused.json()["detail"]
    assert removed.status_code == 204
    assert again.status_code == 404
    dataset.refresh_from_db()
    assert dataset.owner is None and dataset.owner_team.slug == "checkout"
    assert AuditEvent.objects.get(action="team.member_removed").after == {"reason": "left the company"}


# --- a whole document -----------------------------------------------------------------

TEAMS_YAML = """\
teams:
  - slug: checkout
    name: Checkout
  - slug: finance
    name: Finance
    members:
      - username: alice
"""


def test_a_teams_file_uploaded_as_yaml_dry_runs_then_applies(as_admin, owner_team):
    dry = as_admin.post("/api/team-sync/?dry_run=true", TEAMS_YAML, content_type="application/yaml")
    assert dry.json() == {"applied": False, "changes": ['+ team finance "Finance"', "+ finance: member alice (member)"],
                          "users_created": []}
    assert not Team.objects.filter(slug="finance").exists()

    applied = as_admin.post("/api/team-sync/", TEAMS_YAML, content_type="application/yaml")
    again = as_admin.post("/api/team-sync/", TEAMS_YAML, content_type="application/yaml")

    assert applied.json()["applied"] is True
    assert roles("finance") == {"alice": "member"}
    assert again.json()["changes"] == []


def test_a_synced_document_prunes_only_with_a_reason_for_an_owner_team(as_admin, dataset):
    document = {"teams": [{"slug": "analytics", "name": "Analytics"}]}

    refused = post(as_admin, "/api/team-sync/?prune=true", document)
    removed = post(as_admin, "/api/team-sync/?prune=true&reason=merged", document)

    assert refused.status_code == 400
    assert "team checkout: it owns 1 dataset: removing it needs a reason" in refused.json()["detail"]
    assert removed.status_code == 200
    assert "- team checkout (owns 1 dataset; reason: merged)" in removed.json()["changes"]
    assert not Team.objects.filter(slug="checkout").exists()


def test_yaml_that_does_not_parse_is_a_bad_request(as_admin):
    response = as_admin.post("/api/team-sync/", "teams: [unclosed", content_type="application/yaml")

    assert response.status_code == 400
    assert response.json()["code"] == "bad_yaml"
    assert "The teams file, line 2, column 1: not valid YAML" in response.json()["detail"]


def test_an_uploaded_file_with_aliases_is_refused(as_admin):
    text = "x: &t {slug: a, name: A}\nteams: [*t, *t]\n"

    response = as_admin.post("/api/team-sync/", text, content_type="application/yaml")

    assert response.status_code == 400
    assert response.json() == {"code": "bad_yaml", "detail": "The teams file, line 1, column 4: an anchor (&t) is not "
                                                             "accepted: anchors and aliases are refused, write the value "
                                                             "out in full."}
