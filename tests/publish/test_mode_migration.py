"""Contracts get a mode of their own: existing contracts keep what the gate checked
them against before (their datasets' modes, or BACKWARD), and only new ones get FULL."""

from __future__ import annotations

import pytest

from contracts_app.models import Contract
from contracts_app.publishing import compatibility_modes
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("contracts_app", "0005_change_requests_move_out")]
AFTER = [("contracts_app", "0006_contract_compatibility_mode")]


def test_existing_contracts_keep_the_modes_they_were_checked_under():
    apps = migrate(BEFORE).loader.project_state(BEFORE).apps
    Dataset = apps.get_model("registry", "Dataset")
    OldContract = apps.get_model("contracts_app", "Contract")
    DatasetBinding = apps.get_model("contracts_app", "DatasetBinding")

    def contract(name: str, *dataset_modes: str):
        c = OldContract.objects.create(name=f"retail.{name}", domain="retail", subdomains=[], entity=name,
                                       schema_type="event")
        for i, mode in enumerate(dataset_modes):
            d = Dataset.objects.create(namespace="db", name=f"{name}_{i}", compatibility_mode=mode)
            DatasetBinding.objects.create(dataset=d, contract=c)

    contract("unbound")
    contract("backward", "BACKWARD")
    contract("off", "NONE")
    contract("forward", "FORWARD")
    contract("both", "BACKWARD", "FORWARD_TRANSITIVE")
    contract("strict", "FULL_TRANSITIVE", "NONE")
    before = {c.name: (sorted({b.dataset.compatibility_mode for b in c.bindings.all()}) or ["BACKWARD"])
              for c in OldContract.objects.prefetch_related("bindings__dataset")}

    migrate(AFTER)
    modes = dict(Contract.objects.values_list("name", "compatibility_mode"))
    assert modes == {
        "retail.unbound": "BACKWARD", "retail.backward": "BACKWARD", "retail.off": "NONE",
        "retail.forward": "FORWARD", "retail.both": "FULL", "retail.strict": "FULL_TRANSITIVE",
    }
    # The contract's mode adds nothing to what its datasets required: the gate checks the same.
    for c in Contract.objects.all():
        required = set(compatibility_modes(c))
        assert required - {c.compatibility_mode} <= set(before[c.name])
        if c.bindings.exists():
            assert set(before[c.name]) <= required
    assert Contract.objects.create(name="retail.new", domain="retail", entity="new",
                                   schema_type="event").compatibility_mode == "FULL"
