"""YAML people type or send is read by the one bounded loader (registry_client.safeyaml):
anchors and aliases are refused naming their line and column, before anything walks
the document, on the propose page, its live preview and the impact_preview command."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from change_requests.models import ChangeRequest

from .conftest import proposed_document

pytestmark = pytest.mark.django_db

PROPOSE = reverse("change-request-propose")
PREVIEW = reverse("change-request-preview")


def aliased_examples(levels: int = 9) -> str:
    """An event contract whose payload `examples` nest aliases, each level ten of the one
    before: under 1 KB of text, 10**levels strings once expanded."""
    lines = [yaml.safe_dump(proposed_document(), sort_keys=False).rstrip(), "  examples:",
             "  - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  - &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# the first `examples` item, where the first anchor stands (at column 5)
ANCHOR_LINE = aliased_examples().splitlines().index("  - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]") + 1


def test_the_aliased_examples_are_small_and_would_expand_a_billionfold():
    assert len(aliased_examples()) < 1500
    assert "examples" in yaml.safe_load(aliased_examples())["payload"]  # PyYAML itself reads it (lazily shared)


def test_the_propose_page_refuses_aliases_naming_line_and_column(client, contract, owner):
    client.force_login(owner)
    page = client.post(PROPOSE, {"contract": contract.pk, "document": aliased_examples()}).content.decode()
    # the editor's message: where (a link that puts the cursor there), then what
    assert f"Line {ANCHOR_LINE}, column 5</a>: <span class=\"editor-error-message\">an anchor (&amp;l0) is not accepted" in page
    assert not ChangeRequest.objects.exists() and contract.versions.count() == 1


def test_the_preview_refuses_aliases_naming_line_and_column(client, contract, owner):
    client.force_login(owner)
    response = client.post(PREVIEW, {"document": aliased_examples()})
    assert response.status_code == 400 and response.json()["code"] == "bad_document"
    assert f"line {ANCHOR_LINE}, column 5: an anchor (&l0) is not accepted" in response.json()["detail"]


def test_an_alias_alone_is_refused_where_it_stands(client, contract, owner):
    client.force_login(owner)
    text = "schema: {name: x}\nmeta: *m\n"
    response = client.post(PREVIEW, {"document": text})
    assert "line 2, column 7: an alias (*m) is not accepted" in response.json()["detail"]


def test_the_propose_page_refuses_a_document_over_the_size_limit(client, contract, owner, settings):
    settings.YAML_MAX_BYTES = 2048
    client.force_login(owner)
    text = yaml.safe_dump(proposed_document()) + "# " + "x" * 2048 + "\n"
    page = client.post(PROPOSE, {"contract": contract.pk, "document": text}).content.decode()
    assert f"the document is {len(text) - 1} bytes; at most 2048 are read" in page  # the form strips the last newline


def test_the_propose_page_refuses_a_document_nested_too_deep(client, contract, owner, settings):
    settings.YAML_MAX_DEPTH = 20
    client.force_login(owner)
    text = yaml.safe_dump(proposed_document()) + "extra: " + "[" * 30 + "]" * 30 + "\n"
    response = client.post(PREVIEW, {"document": text})
    assert "nested deeper than 20 levels of mappings and lists" in response.json()["detail"]


def test_the_impact_preview_command_refuses_aliases_naming_line_and_column(contract, tmp_path, capsys):
    path = tmp_path / "proposed.yaml"
    path.write_text(aliased_examples())
    with pytest.raises(SystemExit) as exit_:
        call_command("impact_preview", str(path))
    assert exit_.value.code == 2
    assert f"line {ANCHOR_LINE}, column 5: an anchor (&l0) is not accepted" in capsys.readouterr().err
