"""The publish gate refuses a version number that understates the change."""

import copy

from contracts_app.models import ContractVersion
from contracts_app.publishing import publish_document
from tests.publish.conftest import order_placed


def with_a_looser_total(document: dict) -> dict:
    """Drops `minimum: 0`: every old document stays valid (backward-compatible), so a minor release."""
    changed = copy.deepcopy(document)
    del changed["payload"]["properties"]["total"]["minimum"]
    return changed


def with_new_required_field(document: dict) -> dict:
    changed = copy.deepcopy(document)
    changed["payload"]["required"].append("channel")
    changed["payload"]["properties"]["channel"] = {"type": "string"}
    return changed


def with_new_description(document: dict) -> dict:
    changed = copy.deepcopy(document)
    changed["payload"]["properties"]["total"]["description"] = "In minor units."
    return changed


def test_a_breaking_change_numbered_as_a_minor_release_is_refused(db, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)

    outcome = publish_document(with_new_required_field(order_placed("1.1")), by=None, store=local_store)

    assert outcome.status == "refused"
    assert "needs a major release (2.0 or later)" in outcome.message
    assert not ContractVersion.objects.filter(version="1.1").exists()


def test_a_loosening_change_numbered_as_a_patch_is_refused(db, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)

    outcome = publish_document(with_a_looser_total(order_placed("1.0.1")), by=None, store=local_store)

    assert outcome.status == "refused"
    assert "needs at least a minor release (1.1 or later)" in outcome.message


def test_versions_that_match_the_change_publish(db, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)

    assert publish_document(with_new_description(order_placed("1.0.1")), by=None, store=local_store).status == "published"
    assert publish_document(with_a_looser_total(with_new_description(order_placed("1.1"))), by=None,
                            store=local_store).status == "published"


def test_a_version_lower_than_the_published_one_is_measured_against_what_is_below_it(db, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)
    publish_document(with_a_looser_total(order_placed("1.2")), by=None, store=local_store)

    # 1.1 slots in between 1.0 and 1.2: compared with 1.0, a loosening change is a minor release.
    assert publish_document(with_a_looser_total(order_placed("1.1")), by=None, store=local_store).status == "published"
