"""A safe default posture, tried as a new user would: copy the demo's latest
retail.sales.orders to a 3.0 that drops the required column `item_count` and run
publish_contracts. Readers still on 2.0 require `item_count`, so the change
breaks FORWARD: under the new contract default FULL it waits in a change request
for the consumer team, and the advice says it is a major."""

from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from change_requests.models import ChangeRequest
from contracts_app.models import Contract, ContractVersion
from contracts_app.publishing import publish_document, record_version
from tests.publish.conftest import order_placed, write_tree

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "contracts" / "domains" / "retail" / "sales" / "orders"


def demo_orders(version_folder: str) -> dict:
    return yaml.safe_load((FIXTURES / version_folder / "schema.yaml").read_text())


def without_item_count(document: dict, version: str) -> dict:
    changed = copy.deepcopy(document)
    changed["schema"]["version"] = version
    changed["columns"] = [c for c in changed["columns"] if c["name"] != "item_count"]
    return changed


def run(root: Path) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("publish_contracts", "--root", str(root), stdout=out)
    except SystemExit as exc:
        return exc.code, out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def orders_published(owner_team, dataset, owner, local_store, use_store, django_capture_on_commit_callbacks):
    """The demo's retail.sales.orders 1.0 and 2.0 published, bound to `dataset` (consumed by Analytics)."""
    use_store(local_store)
    with django_capture_on_commit_callbacks(execute=True):
        record_version(demo_orders("v1_0"), by=None, store=local_store)
        latest = record_version(demo_orders("v2_0"), by=None, store=local_store)
    latest.contract.bind(dataset, by=owner)
    return latest.contract


def test_a_new_contract_starts_in_full(owner_team, local_store):
    outcome = publish_document(order_placed("1.0"), by=None, store=local_store)
    assert outcome.contract_version.contract.compatibility_mode == "FULL"


def test_dropping_a_required_column_opens_a_change_request_through_publish_contracts(
        tmp_path, orders_published, django_capture_on_commit_callbacks):
    tree = write_tree(tmp_path, [demo_orders("v1_0"), demo_orders("v2_0"), without_item_count(demo_orders("v2_0"), "3.0")])

    with django_capture_on_commit_callbacks(execute=True):
        status, out = run(tree)

    assert status == 2, out
    assert "retail.sales.orders 3.0 breaks FULL compatibility" in out
    request = ChangeRequest.objects.get(contract=orders_published)
    assert (request.proposed_version, request.state) == ("3.0", "open")
    assert [r.team.slug for r in request.reviews.all()] == ["analytics"]
    assert request.report["suggested_bump"] == "major"
    dropped = [c for c in request.report["changes"] if "item_count" in c["path"] and c["breaking"]]
    assert dropped and all(c["breaks_forward"] for c in dropped)
    assert not ContractVersion.objects.filter(version="3.0").exists()


def test_the_advice_for_dropping_it_is_3_0(tmp_path, orders_published, django_capture_on_commit_callbacks):
    tree = write_tree(tmp_path, [demo_orders("v2_0"), without_item_count(demo_orders("v2_0"), "2.1")])

    with django_capture_on_commit_callbacks(execute=True):
        status, out = run(tree)

    assert status == 1, out
    assert "needs a major release (3.0 or later), not a minor one" in out
    assert not ChangeRequest.objects.exists()
    assert not ContractVersion.objects.filter(version="2.1").exists()


def test_under_backward_the_same_drop_publishes_at_once_but_only_as_a_major(
        tmp_path, orders_published, owner, django_capture_on_commit_callbacks):
    orders_published.set_mode("BACKWARD", by=owner)
    assert Contract.objects.get(pk=orders_published.pk).compatibility_mode == "BACKWARD"

    with django_capture_on_commit_callbacks(execute=True):
        minor = publish_document(without_item_count(demo_orders("v2_0"), "2.1"), by=owner)
        major = publish_document(without_item_count(demo_orders("v2_0"), "3.0"), by=owner)

    assert minor.status == "refused" and minor.report.compatible
    assert "breaks forward compatibility" in minor.message
    assert major.status == "published"
    assert not ChangeRequest.objects.exists()
