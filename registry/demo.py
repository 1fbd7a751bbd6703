"""Loading the embedded demo (fixtures/demo.yaml). Idempotent."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from registry_client.safeyaml import load_yaml

from registry.models import Consumer, Dataset, Membership, Team

DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo.yaml"


def _read(path: Path) -> dict:
    """The demo's users and teams file, read like any YAML people write (no aliases, bounded)."""
    return load_yaml(path.read_text(encoding="utf-8"), max_bytes=settings.YAML_MAX_BYTES, max_depth=settings.YAML_MAX_DEPTH)


def load_core_demo(path: Path = DEMO_FILE) -> dict:
    """Create the demo users, teams, datasets and consumers; return what the demo prints."""
    data = _read(path)
    User = get_user_model()
    password = data["password"]
    with transaction.atomic():
        users = {}
        for spec in data["users"]:
            user, created = User.objects.get_or_create(
                username=spec["username"],
                defaults={"first_name": spec.get("first_name", ""), "last_name": spec.get("last_name", ""),
                          "email": f"{spec['username']}@retail.example",
                          "is_staff": spec.get("staff", False), "is_superuser": spec.get("staff", False)},
            )
            if created:
                user.set_password(password)
                user.save(update_fields=["password"])
            users[user.username] = user
        teams = {}
        for spec in data["teams"]:
            team, _ = Team.objects.get_or_create(slug=spec["slug"], defaults={"name": spec["name"], "description": spec.get("description", "")})
            for member in spec.get("members", []):
                Membership.objects.get_or_create(team=team, user=users[member])
            teams[team.slug] = team
        for spec in data["datasets"]:
            dataset, _ = Dataset.objects.get_or_create(
                namespace=spec["namespace"], name=spec["name"], defaults={"description": spec.get("description", "")}
            )
            if spec.get("owner_team") and not dataset.owner_team_id:
                # Demo ownership is set as an admin would, through the audited path.
                dataset.assign_owner(teams[spec["owner_team"]], owner=users.get(spec.get("owner")), by=users["gina"])
            for slug in spec.get("consumers", []):
                if not Consumer.objects.filter(dataset=dataset, team=teams[slug]).exists():
                    dataset.register_consumer(teams[slug], by=teams[slug].members.first())
    return {
        "password": password,
        "users": [
            (u.username, ", ".join(t.slug for t in u.teams.all()) or ("governance admin" if u.is_staff else "—"))
            for u in users.values()
        ],
    }


def demo_logins(path: Path = DEMO_FILE) -> dict | None:
    """The demo users the login page names, with their password and what each can do
    (their teams, or governance admin), or None when the demo is not loaded here.
    One query: which of the demo's users exist."""
    data = _read(path)
    loaded = set(get_user_model().objects.filter(username__in=[u["username"] for u in data["users"]])
                 .values_list("username", flat=True))
    if not loaded:
        return None
    teams_of: dict[str, list[str]] = {}
    for team in data["teams"]:
        for member in team.get("members", []):
            teams_of.setdefault(member, []).append(team["name"])
    users = [{"username": u["username"], "name": " ".join(filter(None, (u.get("first_name"), u.get("last_name")))),
              "role": "governance admin" if u.get("staff") else ", ".join(teams_of.get(u["username"], [])) or "no team"}
             for u in data["users"] if u["username"] in loaded]
    return {"password": data["password"], "users": users}
