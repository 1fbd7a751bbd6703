"""The model rebuilt from published YAML behaves exactly like the authored class,
for every demo dataframe contract: same pass/fail, same failures, same output."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_client.pandera_models import build_model

from contracts_app.exporting import import_schema_module, registered_models
from contracts_app.yamlio import load_yaml_file
from tests.publish.equivalence import ROOT, assert_same_behaviour, frames, hand_made_frames


def demo_contracts() -> list[tuple[str, object, dict]]:
    found = []
    for source in sorted((ROOT / "domains").rglob("schema.py")):
        document = load_yaml_file(source.with_name("schema.yaml"))
        (authored,) = registered_models(import_schema_module(source, ROOT))
        found.append((f"{document['schema']['name']}=={document['schema']['version']}", authored, document))
    return found


CONTRACTS = demo_contracts()


def test_every_demo_dataframe_contract_is_covered():
    assert len(CONTRACTS) >= 10
    assert {doc["schema"]["schema_type"] for _, _, doc in CONTRACTS} == {"dataframe"}


@pytest.mark.parametrize(("label", "authored", "document"), CONTRACTS, ids=[c[0] for c in CONTRACTS])
def test_hand_made_edge_cases_behave_the_same(label, authored, document):
    rebuilt = build_model(document)
    results = {case: assert_same_behaviour(authored, rebuilt, frame) for case, frame in hand_made_frames(document).items()}
    assert results["valid"] == "ok" and results["valid_with_extra_column"] == "ok"
    assert "error" in results.values()  # the cases exercise failures too


@pytest.mark.parametrize(("label", "authored", "document"), CONTRACTS, ids=[c[0] for c in CONTRACTS])
def test_generated_frames_behave_the_same(label, authored, document):
    rebuilt = build_model(document)

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(st.data())
    def check(data):
        assert_same_behaviour(authored, rebuilt, data.draw(frames(document)))

    check()
