"""The impact preview says what submit does: both ask contracts_app.publishing.gate_document,
and over a corpus of edits to every demo contract their answers agree."""

from __future__ import annotations

import copy
import io

import pytest
from django.core.exceptions import PermissionDenied
from django.db import transaction

from change_requests.demo import open_demo_change_request
from change_requests.impact import preview
from change_requests.workflows import submit_version
from contracts_app.demo import publish_demo_contracts
from contracts_app.models import Contract
from registry.demo import load_core_demo
from registry.models import Membership

pytestmark = pytest.mark.django_db


def _bump(version: str, part: str) -> str:
    major, minor = (int(x) for x in version.split(".")[:2])
    return f"{major + 1}.0" if part == "major" else f"{major}.{minor + 1}"


def _with(document: dict, version: str | None = None, **edit) -> dict:
    out = copy.deepcopy(document)
    if version:
        out["schema"]["version"] = version
    if edit.get("describe"):
        out["schema"]["description"] = (out["schema"].get("description") or "") + " (edited)"
    if edit.get("add"):
        if "columns" in out:
            column = {**copy.deepcopy(out["columns"][0]), "name": "zz_note", "required": False, "nullable": True,
                      "unique": False, "checks": []}
            out["columns"].append(column)
        else:
            out["payload"].setdefault("properties", {})["zz_note"] = {"type": "string"}
    if edit.get("remove"):
        if "columns" in out:
            out["columns"].pop(0)
        else:
            gone = next(iter(out["payload"]["properties"]))
            del out["payload"]["properties"][gone]
            out["payload"]["required"] = [r for r in out["payload"].get("required", []) if r != gone]
    return out


def demo_edits():
    """(label, document, who) for each edit a person makes to each demo contract."""
    # two dataframe contracts and the event contract the demo's change request is about
    names = [*Contract.objects.filter(schema_type="dataframe").order_by("name").values_list("name", flat=True)[:2],
             "retail.checkout.order_placed"]
    for contract in Contract.objects.filter(name__in=names).order_by("name"):
        latest = contract.latest_version()
        if latest is None:
            continue
        document, version = latest.document, latest.version
        member = Membership.objects.filter(team=contract.owner_team).select_related("user").first().user
        stranger = Membership.objects.exclude(team=contract.owner_team).select_related("user").first().user
        yield f"{contract.name}: the same document", document, member
        yield f"{contract.name}: edited under its published version", _with(document, describe=True), member
        yield f"{contract.name}: a new description, minor", _with(document, _bump(version, "minor"), describe=True), member
        yield f"{contract.name}: an optional addition, minor", _with(document, _bump(version, "minor"), add=True), member
        yield f"{contract.name}: a removal, major", _with(document, _bump(version, "major"), remove=True), member
        yield f"{contract.name}: a removal, only minor", _with(document, _bump(version, "minor"), remove=True), member
        yield f"{contract.name}: by another team", _with(document, _bump(version, "minor"), add=True), stranger


def submitted(document: dict, who) -> tuple[str, bool]:
    """(status, whether a new change request opened) of submitting `document`, undone after."""
    with transaction.atomic():
        try:
            outcome = submit_version(document, by=who)
        except PermissionDenied:
            result = ("refused", False)
        else:
            result = (outcome.status, bool(getattr(outcome.change_request, "just_opened", False)))
        transaction.set_rollback(True)
    return result


def test_the_preview_and_submit_agree_on_every_demo_edit():
    load_core_demo()
    publish_demo_contracts(stdout=io.StringIO())
    open_demo_change_request(stdout=io.StringIO())
    seen = set()
    for label, document, who in list(demo_edits()):
        answer = preview(document, by=who)
        opens = answer["outcome"] == "breaking" and answer["waits_in"] is None
        assert (answer["outcome"], opens) == submitted(document, who), label
        seen.add(answer["outcome"])
    # the corpus reaches every outcome the gate has
    assert seen == {"published", "unchanged", "refused", "breaking"}


def test_an_edited_published_version_previews_as_refused_not_as_a_change_request(owner, contract):
    published = contract.latest_version()
    answer = preview(_with(published.document, describe=True), by=owner)
    assert answer["outcome"] == "refused"
    assert "already published with different content" in answer["outcome_message"]
