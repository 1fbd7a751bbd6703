"""publish_contracts run by one person: other teams' contracts are skipped, not refused;
the first line says what happened; --contract publishes one; exit codes 0, 1, 2."""

from __future__ import annotations

import copy
import io

import pytest
from django.core.management import CommandError, call_command

from contracts_app.models import Contract, ContractVersion
from tests.conftest import make_team, make_user
from tests.publish.conftest import cell_count, order_placed, refund_api, with_column, write_tree

pytestmark = pytest.mark.django_db


@pytest.fixture
def payments(db):
    """Payments (erin) owns the refund API."""
    return make_team("Payments", "payments", make_user("erin"))


def refunds(version: str = "1.0") -> dict:
    document = refund_api(version)
    document["schema"]["owner"] = "payments"
    return document


def run(root, *args) -> tuple[int, list[str]]:
    out = io.StringIO()
    try:
        call_command("publish_contracts", "--root", str(root), *args, stdout=out)
    except SystemExit as exc:
        return exc.code, out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


@pytest.fixture
def store(local_store, use_store):
    use_store(local_store)
    return local_store


def test_alice_publishes_her_teams_contracts_and_skips_the_others_with_exit_0(tmp_path, store, owner, owner_team,
                                                                                payments):
    root = write_tree(tmp_path, [cell_count(), order_placed(), refunds()])
    assert run(root, "--user", "erin")[0] == 0  # erin publishes the refund API first (Payments')
    status, lines = run(root, "--user", "alice")
    assert status == 0, lines
    assert lines[0] == ("Published lab.analytics.cell_count 1.0, retail.checkout.order_placed 1.0; "
                        "skipped 1 owned by other teams (payments).")
    assert any(line.endswith("skipped       retail.payments.refund_api 1.0 (owned by payments)") for line in lines)
    assert not any("refused" in line and "refund_api" in line for line in lines)
    assert "refused 0, breaking 0, upload failed 0, skipped 1 (other teams')" in lines[-1]
    again_status, again = run(root, "--user", "alice")
    assert again_status == 0 and again[0] == "2 unchanged; skipped 1 owned by other teams (payments)."


def test_a_refusal_of_her_own_contract_exits_1(tmp_path, store, owner, owner_team, payments):
    root = write_tree(tmp_path, [cell_count()])
    run(root, "--user", "alice")
    changed = with_column(cell_count(), {"name": "vcd", "dtype": "float64", "nullable": True})
    status, lines = run(write_tree(tmp_path, [changed]), "--user", "alice")
    assert status == 1
    assert lines[0] == "Refused lab.analytics.cell_count 1.0."


def test_a_breaking_change_opens_a_request_named_with_its_link_first_and_exits_2(tmp_path, store, owner, owner_team,
                                                                                 settings):
    settings.SITE_URL = "https://registry.example"
    run(write_tree(tmp_path, [cell_count()]), "--user", "alice")
    Contract.objects.filter(name="lab.analytics.cell_count").update(compatibility_mode="BACKWARD")
    v2 = with_column(cell_count("2.0"), {"name": "vcd", "dtype": "float64", "nullable": True})
    status, lines = run(write_tree(tmp_path, [cell_count(), v2]), "--user", "alice")
    assert status == 2, lines
    request = Contract.objects.get(name="lab.analytics.cell_count").change_requests.get()
    assert lines[0] == (f"Lab.analytics.cell_count 2.0 opened change request #{request.pk}: "
                        f"https://registry.example/change-requests/{request.pk}/; 1 unchanged.")
    status, lines = run(write_tree(tmp_path, [cell_count(), v2]), "--user", "alice")
    assert status == 2 and f"already waits in change request #{request.pk}" in lines[0]


def test_one_contract_or_one_version_is_published_with_contract(tmp_path, store, owner, owner_team):
    later = copy.deepcopy(order_placed("1.1"))
    later["schema"]["description"] = "An order was placed, once it is paid."
    root = write_tree(tmp_path, [cell_count(), order_placed(), later])
    status, lines = run(root, "--user", "alice", "--contract", "retail.checkout.order_placed@1.0")
    assert status == 0 and lines[0] == "Published retail.checkout.order_placed 1.0."
    assert list(ContractVersion.objects.values_list("contract__name", "version")) == [("retail.checkout.order_placed", "1.0")]
    status, lines = run(root, "--user", "alice", "--contract", "retail.checkout.order_placed")
    assert status == 0 and lines[0] == "Published retail.checkout.order_placed 1.1; 1 unchanged."
    with pytest.raises(CommandError, match="no contract document retail.nothing"):
        run(root, "--contract", "retail.nothing")
    with pytest.raises(CommandError, match="name a contract"):
        run(root, "--contract", "retail.checkout.order_placed@")
