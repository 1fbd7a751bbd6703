"""The admin speaks of the product: its title, its model names and the sentences a
refused constraint shows (issue 16, point 11)."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import models

from registry.models import ApiToken

pytestmark = pytest.mark.django_db

PROJECT_APPS = ("registry", "contracts_app", "change_requests", "lineage", "freshness")


def project_models() -> list[type[models.Model]]:
    return [m for m in apps.get_models() if m._meta.app_label in PROJECT_APPS]


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


def test_the_admin_header_and_title_name_the_product(as_admin):
    page = as_admin.get("/admin/").content.decode()
    assert "Dataset registry administration" in page
    assert "<title>Governance | Dataset registry</title>" in page
    assert "Django administration" not in page and "Django site admin" not in page


def test_the_admin_login_page_names_the_product_too(client):
    page = client.get("/admin/login/").content.decode()
    assert "Dataset registry administration" in page and "Django administration" not in page


def test_model_names_pluralise_as_english_does(as_admin):
    plurals = {m._meta.label: str(m._meta.verbose_name_plural) for m in project_models()}
    assert plurals["change_requests.ReviewPolicy"] == "review policies"
    assert plurals["lineage.DatasetAlias"] == "dataset aliases"
    assert plurals["freshness.DatasetFreshness"] == "dataset freshness"
    assert plurals["registry.ApiToken"] == "API tokens"
    # Django's guess (the name plus "s") is wrong after a consonant and "y", and after s, x, ch or sh.
    guessed_wrong = {
        m._meta.label: str(m._meta.verbose_name_plural) for m in project_models()
        if str(m._meta.verbose_name_plural) == f"{m._meta.verbose_name}s"
        and (str(m._meta.verbose_name).endswith(("s", "x", "ch", "sh"))
             or (str(m._meta.verbose_name).endswith("y") and str(m._meta.verbose_name)[-2] not in "aeiou"))
    }
    assert guessed_wrong == {}
    index = as_admin.get("/admin/").content.decode()
    assert "Review policies" in index and "Review policys" not in index


def test_every_constraint_in_the_project_has_a_sentence_for_its_violation():
    constraints = [(m._meta.label, c) for m in project_models() for c in m._meta.constraints]
    assert len(constraints) >= 20
    for label, constraint in constraints:
        message = str(constraint.violation_error_message)
        assert message != str(constraint.default_violation_error_message), f"{label}.{constraint.name}"
        assert message[0].isupper() and message.endswith("."), f"{label}.{constraint.name}: {message}"
        assert constraint.name not in message


def test_a_token_with_neither_user_nor_team_is_refused_with_a_sentence(as_admin):
    response = as_admin.post("/admin/registry/apitoken/add/", {"name": "orphan", "scopes": ["read"]})

    page = response.content.decode()
    assert response.status_code == 200
    assert "A token belongs to exactly one of a user or a team: choose one and leave the other empty." in page
    assert "is violated" not in page
    assert not ApiToken.objects.exists()


def test_a_second_membership_of_the_same_person_is_refused_with_a_sentence(as_admin, owner_team, owner):
    response = as_admin.post("/admin/registry/membership/add/", {
        "team": owner_team.pk, "user": owner.pk, "joined_at_0": "2026-01-01", "joined_at_1": "00:00:00"})

    page = response.content.decode()
    assert "This person is already a member of this team." in page
    assert "already exists" not in page
