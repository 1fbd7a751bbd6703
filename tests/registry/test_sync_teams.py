"""manage.py sync_teams: a teams file (docs/teams.md) made true, idempotently and audited."""

from __future__ import annotations

import io
import textwrap

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from change_requests.notifications import TeamChannel
from registry import teamsync
from registry.models import AuditEvent, Consumer, Dataset, Membership, Team
from tests.conftest import make_team


def sync(tmp_path, text: str, *args: str) -> str:
    path = tmp_path / "teams.yaml"
    path.write_text(textwrap.dedent(text))
    out = io.StringIO()
    call_command("sync_teams", str(path), *args, stdout=out)
    return out.getvalue()


def fails(tmp_path, text: str, *args: str) -> str:
    with pytest.raises(CommandError) as failure:
        sync(tmp_path, text, *args)
    return str(failure.value)


FINANCE = """
    teams:
      - slug: data-platform
        name: Data platform
      - slug: finance
        name: Finance
        description: Revenue and costs
        parent: data-platform
        channels:
          - kind: email
            address: finance-data@example.com
        members:
          - username: alice
            email: alice@example.com
            role: lead
          - email: erin@example.com
"""


def audit_actions() -> list[str]:
    return sorted(AuditEvent.objects.values_list("action", flat=True))


def roles(slug: str) -> dict[str, str]:
    return dict(Membership.objects.filter(team__slug=slug).values_list("user__username", "role"))


def test_a_teams_file_creates_teams_people_members_and_channels(tmp_path, owner):
    out = sync(tmp_path, FINANCE)

    finance = Team.objects.get(slug="finance")
    assert finance.name == "Finance"
    assert finance.description == "Revenue and costs"
    assert finance.parent.slug == "data-platform"
    assert roles("finance") == {"alice": "lead", "erin@example.com": "member"}
    assert list(TeamChannel.objects.filter(team=finance).values_list("kind", "settings")) == [
        ("email", {"address": "finance-data@example.com"})]
    erin = get_user_model().objects.get(username="erin@example.com")
    assert erin.email == "erin@example.com"
    assert not erin.has_usable_password()
    assert "+ user erin@example.com <erin@example.com>, with an unusable password" in out
    assert "1 user created with an unusable password" in out
    assert "+ team finance \"Finance\"" in out
    assert "+ finance: member alice (lead)" in out
    assert out.strip().endswith("2 teams in the file; 7 changes applied, each in the audit log.")


def test_every_change_is_one_audit_row_naming_the_command(tmp_path, owner):
    sync(tmp_path, FINANCE)

    assert audit_actions() == sorted([
        "user.created", "team.created", "team.created", "team.updated",
        "team.member_added", "team.member_added", "team.channel_added"])
    added = AuditEvent.objects.get(action="team.member_added", after__user="alice")
    assert added.actor_label == "manage.py sync_teams teams.yaml"
    assert added.object_repr == "Finance"
    assert added.after == {"user": "alice", "role": "lead"}


def test_a_second_run_changes_nothing_and_writes_no_audit_row(tmp_path, owner):
    sync(tmp_path, FINANCE)
    rows = AuditEvent.objects.count()

    out = sync(tmp_path, FINANCE)

    assert AuditEvent.objects.count() == rows
    assert out.strip() == "2 teams in the file; no changes: the registry matches the file."


def test_a_changed_file_updates_names_roles_parents_emails_and_channels(tmp_path, owner, teammate):
    sync(tmp_path, FINANCE)

    out = sync(tmp_path, """
        teams:
          - slug: data-platform
            name: Data platform
          - slug: finance
            name: Finance and revenue
            parent: null
            channels:
              - kind: webhook
                url: https://hooks.example.com/finance
                secret: s3cret
            members:
              - username: alice
                role: member
              - username: bob
                email: bob@corp.example
    """)

    finance = Team.objects.get(slug="finance")
    assert finance.name == "Finance and revenue"
    assert finance.description == "Revenue and costs"  # left out: left as it is
    assert finance.parent is None
    assert roles("finance") == {"alice": "member", "bob": "member", "erin@example.com": "member"}
    assert get_user_model().objects.get(username="bob").email == "bob@corp.example"
    assert TeamChannel.objects.filter(team=finance).count() == 2  # nothing removed without --prune
    assert out.splitlines()[:6] == [
        "~ user bob: e-mail bob@example.com → bob@corp.example",
        "~ team finance: name 'Finance' → 'Finance and revenue'",
        "~ team finance: parent data-platform → none",
        "~ finance: alice lead → member",
        "+ finance: member bob (member)",
        "+ finance: channel webhook https://hooks.example.com/finance",
    ]
    changed = AuditEvent.objects.get(action="team.channel_added", after__kind="webhook")
    assert changed.after == {"kind": "webhook", "url": "https://hooks.example.com/finance", "secret": "(hidden)"}


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path, owner):
    out = sync(tmp_path, FINANCE, "--dry-run")

    assert out.splitlines() == [
        "+ user erin@example.com <erin@example.com>, with an unusable password",
        "+ team data-platform \"Data platform\"",
        "+ team finance \"Finance\"",
        "~ team finance: parent none → data-platform",
        "+ finance: member alice (lead)",
        "+ finance: member erin@example.com (member)",
        "+ finance: channel email finance-data@example.com",
        "1 user would be created with an unusable password (they sign in through single sign-on, or an admin "
        "sets one): erin@example.com",
        "2 teams in the file; 7 changes (dry run: nothing written).",
    ]
    assert not Team.objects.exists()
    assert not get_user_model().objects.filter(username="erin@example.com").exists()
    assert not AuditEvent.objects.exists()


def test_members_and_channels_missing_from_the_file_go_only_with_prune(tmp_path, owner, teammate):
    sync(tmp_path, FINANCE)
    Membership.objects.create(team=Team.objects.get(slug="finance"), user=teammate)
    smaller = """
        teams:
          - slug: data-platform
            name: Data platform
          - slug: finance
            name: Finance
            channels: []
            members:
              - username: alice
                role: lead
    """

    assert "- finance" not in sync(tmp_path, smaller)
    assert set(roles("finance")) == {"alice", "bob", "erin@example.com"}

    out = sync(tmp_path, smaller, "--prune")

    assert roles("finance") == {"alice": "lead"}
    assert not TeamChannel.objects.filter(team__slug="finance").exists()
    assert "- finance: member bob" in out
    assert "- finance: channel email finance-data@example.com" in out
    assert get_user_model().objects.filter(username="bob").exists()  # people are never deleted
    removed = AuditEvent.objects.get(action="team.member_removed", before__user="bob")
    assert removed.before == {"user": "bob", "role": "member"}


def test_a_team_whose_members_the_file_leaves_out_keeps_them_even_with_prune(tmp_path, owner_team):
    sync(tmp_path, """
        teams:
          - slug: checkout
            name: Checkout
    """, "--prune")

    assert set(roles("checkout")) == {"alice", "bob"}


def test_pruning_refuses_to_remove_a_team_that_owns_datasets_without_a_reason(tmp_path, dataset):
    message = fails(tmp_path, """
        teams:
          - slug: analytics
            name: Analytics
    """, "--prune")

    assert "nothing applied" in message
    assert ("team checkout: it owns 1 dataset: removing it needs a reason (its datasets become unowned, its "
            "registrations go).") in message
    assert Team.objects.filter(slug="checkout").exists()
    assert not AuditEvent.objects.exists()


def test_pruning_with_a_reason_removes_the_team_and_leaves_its_datasets_unowned(tmp_path, dataset, owner_team):
    out = sync(tmp_path, """
        teams:
          - slug: analytics
            name: Analytics
    """, "--prune", "--reason", "Checkout merged into Analytics (JIRA-12)")

    assert "- team checkout (owns 1 dataset; reason: Checkout merged into Analytics (JIRA-12))" in out
    assert not Team.objects.filter(slug="checkout").exists()
    dataset.refresh_from_db()
    assert dataset.owner_team is None and dataset.owner is None
    assert Consumer.objects.filter(dataset=dataset, team__slug="analytics").exists()
    removed = AuditEvent.objects.get(action="team.removed")
    assert removed.before["members"] == ["alice", "bob"]
    assert removed.after == {"reason": "Checkout merged into Analytics (JIRA-12)"}
    unowned = AuditEvent.objects.get(action="dataset.owner_changed")
    assert unowned.before == {"owner_team": "checkout", "owner": "alice"}
    assert unowned.after == {"owner_team": None, "owner": None, "reason": "Checkout merged into Analytics (JIRA-12)"}


def test_pruning_a_consumer_team_needs_a_reason_and_drops_its_registrations(tmp_path, dataset):
    keep_checkout = """
        teams:
          - slug: checkout
            name: Checkout
    """
    assert "team analytics: it consumes 1 dataset" in fails(tmp_path, keep_checkout, "--prune")

    sync(tmp_path, keep_checkout, "--prune", "--reason", "team disbanded")

    assert not Consumer.objects.exists()
    unregistered = AuditEvent.objects.get(action="consumer.unregistered")
    assert unregistered.before == {"team": "analytics"}


def test_a_team_with_nothing_is_pruned_without_a_reason_and_its_children_lose_their_parent(tmp_path, other_team):
    child = make_team("Warehouse loaders", "warehouse-loaders")
    child.parent = other_team
    child.save()

    out = sync(tmp_path, """
        teams:
          - slug: warehouse-loaders
            name: Warehouse loaders
    """, "--prune")

    assert out.splitlines()[:2] == ["- team warehouse", "~ team warehouse-loaders: parent warehouse → none"]
    child.refresh_from_db()
    assert child.parent is None


def test_removing_a_member_who_owns_datasets_needs_a_reason_and_keeps_the_team_as_owner(tmp_path, dataset):
    only_bob = """
        teams:
          - slug: checkout
            name: Checkout
            members:
              - username: bob
    """
    message = fails(tmp_path, only_bob, "--prune")
    assert "teams[0].members: alice is the named owner of 1 dataset of team checkout" in message

    sync(tmp_path, only_bob, "--prune", "--reason", "alice left")

    dataset.refresh_from_db()
    assert dataset.owner_team.slug == "checkout" and dataset.owner is None
    assert set(roles("checkout")) == {"bob"}


BAD = """
    teams:
      - slug: finance
        name: Finance
        members:
          - username: alice
            role: boss
          - {}
      - slug: Not a slug
        name: Finance
      - name: No slug
      - slug: ops
        name: Ops
        parent: nowhere
        colour: blue
        channels:
          - kind: pager
          - kind: email
            address: not-an-address
"""


def test_a_bad_file_names_every_problem_with_its_path_and_applies_nothing(tmp_path, owner):
    message = fails(tmp_path, BAD)

    assert message.splitlines()[1:] == [
        "  teams[0].members[0].role: must be one of member, lead, not 'boss'.",
        "  teams[0].members[1]: name the person with username, email, or both.",
        "  teams[1].slug: 'Not a slug' is not a slug: letters, digits, hyphens and underscores only.",
        "  teams[2].slug: is required.",
        "  teams[3].colour: unknown key; the keys here are slug, name, description, parent, channels, members.",
        "  teams[3].channels[0].kind: must be one of email, webhook, not 'pager'.",
        "  teams[3].channels[1]: An e-mail channel needs \"address\": a valid e-mail address.",
    ]
    assert not Team.objects.exists()


def test_problems_found_against_the_registry_also_have_paths(tmp_path, owner_team):
    message = fails(tmp_path, """
        teams:
          - slug: finance
            name: Checkout
            parent: nowhere
          - slug: a
            name: A
            parent: b
          - slug: b
            name: B
            parent: a
    """)

    assert "teams[0].name: 'Checkout' is already the name of team checkout." in message
    assert "teams[0].parent: no team 'nowhere' in the file or the registry." in message
    assert "teams[1].parent: parents make a loop: a → b → a." in message
    assert not Team.objects.filter(slug__in=["finance", "a", "b"]).exists()


def test_nothing_is_applied_when_a_late_team_is_wrong(tmp_path, owner):
    fails(tmp_path, """
        teams:
          - slug: finance
            name: Finance
            members:
              - username: alice
          - slug: ops
            name: Ops
            parent: nowhere
    """)

    assert not Team.objects.exists()
    assert not AuditEvent.objects.exists()


def test_yaml_that_does_not_parse_says_where(tmp_path):
    message = fails(tmp_path, "teams:\n  - slug: [unclosed\n")

    assert "The teams file, line 3, column 1: not valid YAML" in message


def test_a_document_that_is_not_a_mapping_of_teams_says_so(tmp_path):
    assert "A teams document is a mapping with a `teams` list, not a list." in fails(tmp_path, "- slug: x\n")
    assert "teams: must be a list of teams, not a mapping." in fails(tmp_path, "teams: {slug: x}\n")


def test_two_users_with_one_email_must_be_named_by_username(tmp_path, owner):
    get_user_model().objects.create_user("alice2", "alice@example.com")

    message = fails(tmp_path, """
        teams:
          - slug: finance
            name: Finance
            members:
              - email: ALICE@example.com
    """)

    assert ("teams[0].members[0].email: several users have e-mail ALICE@example.com (alice, alice2); name the "
            "username.") in message


def test_a_person_named_by_email_is_found_whatever_its_case(tmp_path, owner):
    sync(tmp_path, """
        teams:
          - slug: finance
            name: Finance
            members:
              - email: Alice@Example.com
    """)

    assert roles("finance") == {"alice": "member"}
    assert get_user_model().objects.count() == 1


def test_a_webhook_secret_can_come_from_the_environment(tmp_path, monkeypatch, db):
    monkeypatch.setenv("FINANCE_HOOK_SECRET", "from-the-vault")
    text = """
        teams:
          - slug: finance
            name: Finance
            channels:
              - kind: webhook
                url: https://hooks.example.com/finance
                secret_env: FINANCE_HOOK_SECRET
    """
    sync(tmp_path, text)

    assert TeamChannel.objects.get().settings == {"url": "https://hooks.example.com/finance",
                                                  "secret": "from-the-vault"}
    monkeypatch.delenv("FINANCE_HOOK_SECRET")
    assert ("teams[0].channels[0].secret_env: the environment variable 'FINANCE_HOOK_SECRET' is not set."
            in fails(tmp_path, text))


def test_standard_input_is_read_with_a_dash(owner):
    out = io.StringIO()

    call_command("sync_teams", "-", stdout=out, stdin=io.StringIO("teams:\n  - slug: finance\n    name: Finance\n"))

    assert Team.objects.filter(slug="finance").exists()


def test_planning_a_thousand_people_takes_a_few_queries(tmp_path, db, django_assert_max_num_queries):
    members = "\n".join(f"              - email: person{i}@example.com" for i in range(1000))
    path = tmp_path / "teams.yaml"
    path.write_text(f"teams:\n  - slug: big\n    name: Big\n    members:\n{members}\n")

    specs = teamsync.parse_document(teamsync.load_yaml(path.read_text()))
    # teams; users by username; users by e-mail; memberships; channels
    with django_assert_max_num_queries(5):
        plan = teamsync.plan(specs)

    assert len(plan.changes) == 2001
    assert Dataset.objects.count() == 0


def test_channel_settings_the_file_leaves_out_are_kept(tmp_path, owner_team):
    channel = TeamChannel.objects.add_webhook(owner_team, url="https://hooks.example.com/checkout", secret="s3cret")
    text = """
        teams:
          - slug: checkout
            channels:
              - kind: webhook
                url: https://hooks.example.com/checkout
    """

    assert "no changes" in sync(tmp_path, text)

    out = sync(tmp_path, text.replace("/checkout\n", "/checkout\n                secret: rotated\n"))

    assert "~ checkout: channel webhook https://hooks.example.com/checkout: secret changed" in out
    channel.refresh_from_db()
    assert channel.settings == {"url": "https://hooks.example.com/checkout", "secret": "rotated"}
    audit = AuditEvent.objects.get(action="team.channel_changed")
    assert audit.before["secret"] == audit.after["secret"] == "(hidden)"


def test_a_person_named_by_a_very_long_email_alone_needs_a_username(tmp_path, db):
    address = "a" * 140 + "@example.com"
    message = fails(tmp_path, f"""
        teams:
          - slug: finance
            name: Finance
            members:
              - email: {address}
    """)

    assert "teams[0].members[0].email: is longer than a username may be (150); give the username too." in message


def test_a_long_sync_says_how_far_it_is(tmp_path, db):
    members = "\n".join(f"      - email: person{i}@example.com" for i in range(300))
    path = tmp_path / "teams.yaml"
    path.write_text(f"teams:\n  - slug: big\n    name: Big\n    members:\n{members}\n")
    err = io.StringIO()

    call_command("sync_teams", str(path), stdout=io.StringIO(), stderr=err)

    assert err.getvalue() == "applied 500 of 601 changes…\n"
    assert Membership.objects.filter(team__slug="big").count() == 300


def test_yaml_aliases_are_refused(tmp_path, db):
    message = fails(tmp_path, """
        common: &people
          - username: alice
        teams:
          - slug: finance
            name: Finance
            members: *people
    """)

    assert "The teams file, line 2, column 9: an anchor (&people) is not accepted: anchors and aliases are refused" in message
    assert not Team.objects.exists()


def test_one_person_listed_twice_in_a_team_and_a_repeated_slug_are_named(tmp_path, db):
    message = fails(tmp_path, """
        teams:
          - slug: finance
            name: Finance
            members:
              - username: alice
              - username: alice
                role: lead
          - slug: finance
            name: Finance again
    """)

    assert "teams[0].members[1]: repeats teams[0].members[0]." in message
    assert "teams[1].slug: repeats teams[0].slug." in message
