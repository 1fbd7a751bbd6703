"""docs/teams.md: its example file syncs as described, and its identity-provider script
turns a group export into a teams file that syncs."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from django.core.management import call_command

from registry.models import Membership, Team

DOC = Path(__file__).resolve().parents[2] / "docs" / "teams.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)


def sync(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("sync_teams", str(path), *args, stdout=out)
    return out.getvalue()


def test_the_example_file_syncs_as_the_page_says(tmp_path, monkeypatch, db):
    monkeypatch.setenv("FINANCE_WEBHOOK_SECRET", "from-the-vault")
    (example,) = [b for b in blocks("yaml") if "teams:" in b]
    path = tmp_path / "teams.yaml"
    path.write_text(example)

    sync(path)

    finance = Team.objects.get(slug="finance")
    assert finance.parent.slug == "data-platform"
    assert dict(finance.memberships.values_list("user__email", "role")) == {
        "alice@example.com": "lead", "bob@example.com": "member"}
    assert "no changes" in sync(path)


def test_the_identity_provider_script_makes_a_file_that_syncs(tmp_path, db):
    (script,) = [b for b in blocks("python") if b.startswith('"""idp_to_teams.py')]
    (tmp_path / "idp_to_teams.py").write_text(script)
    (tmp_path / "groups.csv").write_text(
        "group,email,username\n"
        "data-finance,Alice@Example.com,alice\n"
        "data-finance,bob@example.com,\n"
        "data-platform,carol@example.com,carol\n"
        "all-staff,dave@example.com,dave\n")
    (tmp_path / "mapping.yaml").write_text(
        "data-finance: {slug: finance, name: Finance, parent: data-platform, leads: [alice@example.com]}\n"
        "data-platform: {slug: data-platform, name: Data platform}\n")

    made = subprocess.run([sys.executable, "idp_to_teams.py", "groups.csv", "mapping.yaml"], cwd=tmp_path,
                          capture_output=True, text=True, check=True, timeout=60)
    (tmp_path / "teams.yaml").write_text(made.stdout)
    out = sync(tmp_path / "teams.yaml")

    assert Team.objects.get(slug="finance").parent.slug == "data-platform"
    assert dict(Membership.objects.filter(team__slug="finance").values_list("user__username", "role")) == {
        "alice": "lead", "bob@example.com": "member"}
    assert "3 users created with an unusable password" in out
    assert "no changes" in sync(tmp_path / "teams.yaml")
