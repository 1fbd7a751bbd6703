"""The Sync teams page: a governance admin uploads a teams file, a dry run first."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from registry.models import AuditEvent, Team

TEAMS_FILE = b"teams:\n  - slug: marketing\n    name: Marketing\n"


def upload(client, content: bytes, **fields):
    return client.post("/teams/sync/", {"teams_file": SimpleUploadedFile("teams.yaml", content), **fields})


def test_a_dry_run_lists_the_changes_and_stores_nothing(client, admin):
    client.force_login(admin)
    page = upload(client, TEAMS_FILE, dry_run="on").content.decode()
    assert "Dry run: nothing was stored" in page
    assert "marketing" in page
    assert not Team.objects.filter(slug="marketing").exists()


def test_without_the_dry_run_the_file_is_applied_and_audited(client, admin):
    client.force_login(admin)
    page = upload(client, TEAMS_FILE).content.decode()
    assert "Applied" in page
    marketing = Team.objects.get(slug="marketing")
    assert AuditEvent.objects.filter(object_id=str(marketing.pk)).exists()


def test_a_file_with_problems_is_refused_whole_saying_where(client, admin):
    client.force_login(admin)
    page = upload(client, b"teams:\n  - slug: marketing\n  - name: Nameless\n").content.decode()
    assert 'id="teams-sync-error"' in page
    assert "teams[1]" in page
    assert not Team.objects.filter(slug="marketing").exists()


def test_only_a_governance_admin_may_sync_teams(client, consumer):
    client.force_login(consumer)
    assert client.get("/teams/sync/").status_code == 403
    assert upload(client, TEAMS_FILE).status_code == 403
    assert not Team.objects.filter(slug="marketing").exists()
