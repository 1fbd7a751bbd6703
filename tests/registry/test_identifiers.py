"""Identifiers refuse bidirectional controls and combining marks, which would let one pass
for another on screen: team slugs, dataset and job namespaces and names (pages, admin, API,
the lineage ingest) and a contract's name parts and owner (the publish gates)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from contracts_app.gates import validate_document
from registry.identifiers import BIDI_CONTROLS, identifier_problem
from registry.models import Dataset, Team
from registry.usage import NamespaceTeam

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
STROKE = "\u0336"  # COMBINING LONG STROKE OVERLAY


@pytest.mark.parametrize("char", sorted(BIDI_CONTROLS))
def test_every_bidirectional_control_is_refused_naming_it_and_where_it_is(char):
    problem = identifier_problem("checkout" + char + "txt")
    assert problem.startswith(f"contains the bidirectional control U+{ord(char):04X} (")
    assert "at character 9" in problem


@pytest.mark.parametrize("mark", ["\u0301", STROKE, "\u20dd", "\u0903", "\u0488"])  # Mn, Mn, Me, Mc, Me
def test_combining_marks_of_every_kind_are_refused(mark):
    assert identifier_problem("orders" + mark).startswith(f"contains the combining mark U+{ord(mark):04X} (")


@pytest.mark.parametrize("value", ["retail.orders", "postgres://db:5432", "café", "日本語", "Ærø", "naïve_table"])
def test_ascii_and_precomposed_letters_are_identifiers(value):
    assert identifier_problem(value) == ""


def test_the_message_says_what_to_do_about_a_decomposed_accent():
    assert identifier_problem("cafe\u0301") == ("contains the combining mark U+0301 (COMBINING ACUTE ACCENT) at character 5; "
                                               "identifiers may not hold combining marks (write an accented letter as one character)")


@pytest.mark.django_db
def test_a_team_slug_with_a_bidi_control_fails_validation():
    team = Team(name="Checkout", slug="checkout" + RLO)
    with pytest.raises(ValidationError) as refused:
        team.full_clean()
    assert any("bidirectional control U+202E" in m for m in refused.value.message_dict["slug"])


@pytest.mark.django_db
def test_a_dataset_namespace_or_name_with_a_combining_mark_fails_validation():
    with pytest.raises(ValidationError) as refused:
        Dataset(namespace="warehouse" + STROKE, name="orders" + RLO).full_clean()
    assert "combining mark U+0336" in refused.value.message_dict["namespace"][0]
    assert "bidirectional control U+202E" in refused.value.message_dict["name"][0]


@pytest.mark.django_db
def test_a_job_namespace_with_a_bidi_control_is_refused_by_the_api(client, other_team, outsider):
    client.force_login(outsider)
    response = client.post("/api/teams/warehouse/job-namespaces/", {"namespace": "airflow" + RLO},
                           content_type="application/json")
    assert response.status_code == 409, response.json()
    assert "The job namespace contains the bidirectional control U+202E" in response.json()["detail"]
    assert not NamespaceTeam.objects.exists()


def test_the_publish_gates_refuse_such_a_contract_name_or_owner():
    document = {"schema": {"name": "retail.check" + STROKE + "out.orders", "domain": "retail",
                           "subdomains": ["check" + STROKE + "out"], "entity": "orders", "version": "1.0",
                           "owner": "checkout" + RLO, "schema_type": "event"},
                "meta": {"tier": "gold"}, "payload": {"type": "object"}}
    problems = {p.where: p for p in validate_document(document) if p.code == "identifier"}
    assert set(problems) == {"schema.name", "schema.subdomains[0]", "schema.owner"}
    assert problems["schema.owner"].message.startswith("contains the bidirectional control U+202E")
