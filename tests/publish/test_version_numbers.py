"""The publish gate refuses a version number that understates the change.

The advice counts both directions whatever the contract's mode: a change that
breaks backward or forward needs a major. The tests about numbering set the mode
to BACKWARD where the change would otherwise wait in a change request under the
default FULL, so what they show is the numbering rule, not the gate's verdict.
"""

import copy

from contracts_app.models import Contract, ContractVersion
from contracts_app.publishing import publish_document
from tests.publish.conftest import order_placed


def with_a_looser_total(document: dict) -> dict:
    """Drops `minimum: 0`: every old document stays valid (backward-compatible), but a reader
    of the old version fails on a negative total (breaks forward)."""
    changed = copy.deepcopy(document)
    del changed["payload"]["properties"]["total"]["minimum"]
    return changed


def with_a_restated_total(document: dict) -> dict:
    """The total's schema restated as a one-branch anyOf: the same documents are valid, the schema changed."""
    changed = copy.deepcopy(document)
    total = changed["payload"]["properties"]["total"]
    changed["payload"]["properties"]["total"] = {"anyOf": [total]}
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


def in_mode(mode: str) -> None:
    Contract.objects.filter(name="retail.checkout.order_placed").update(compatibility_mode=mode)


def test_a_breaking_change_numbered_as_a_minor_release_is_refused(owner_team, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)

    outcome = publish_document(with_new_required_field(order_placed("1.1")), by=None, store=local_store)

    assert outcome.status == "refused"
    assert "needs a major release (2.0 or later)" in outcome.message
    assert not ContractVersion.objects.filter(version="1.1").exists()


def test_a_forward_only_break_under_backward_is_refused_as_a_minor_and_published_as_a_major(owner_team, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)
    in_mode("BACKWARD")

    understated = publish_document(with_a_looser_total(order_placed("1.1")), by=None, store=local_store)

    assert understated.status == "refused"
    assert understated.report.compatible  # BACKWARD lets it through; the number still has to say it breaks
    assert "breaks forward compatibility" in understated.message
    assert "needs a major release (2.0 or later)" in understated.message
    assert not ContractVersion.objects.filter(version="1.1").exists()
    assert publish_document(with_a_looser_total(order_placed("2.0")), by=None, store=local_store).status == "published"


def test_a_restated_schema_numbered_as_a_patch_is_refused(owner_team, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)

    outcome = publish_document(with_a_restated_total(order_placed("1.0.1")), by=None, store=local_store)

    assert outcome.status == "refused"
    assert "needs at least a minor release (1.1 or later)" in outcome.message


def test_versions_that_match_the_change_publish(owner_team, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)
    in_mode("BACKWARD")

    assert publish_document(with_new_description(order_placed("1.0.1")), by=None, store=local_store).status == "published"
    assert publish_document(with_a_restated_total(with_new_description(order_placed("1.1"))), by=None,
                            store=local_store).status == "published"
    assert publish_document(with_a_restated_total(with_a_looser_total(with_new_description(order_placed("2.0")))),
                            by=None, store=local_store).status == "published"


def test_a_version_lower_than_the_published_one_is_measured_against_what_is_below_it(owner_team, local_store):
    publish_document(order_placed("1.0"), by=None, store=local_store)
    in_mode("BACKWARD")
    publish_document(with_a_looser_total(order_placed("3.0")), by=None, store=local_store)

    # 2.0 slots in between 1.0 and 3.0: compared with 1.0, a forward-breaking change is a major release.
    assert publish_document(with_a_looser_total(order_placed("1.1")), by=None, store=local_store).status == "refused"
    assert publish_document(with_a_looser_total(order_placed("2.0")), by=None, store=local_store).status == "published"
