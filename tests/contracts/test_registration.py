import sys
import textwrap
import types

import pandas as pd
import pandera.pandas as pa
import pytest
from registry_client.authoring import (
    BaseDataFrameSchema,
    ContractMixin,
    SchemaInfo,
    SchemaMeta,
    SourceSystemSchema,
    register_dataframe_schema,
    relaxed_registry_checks,
)
from registry_client.identity import InvalidIdentityError
from registry_client.registration import RegistryConfig

from contracts_app.exporting import ExportError, build_document


def test_the_decorator_stamps_a_frozen_identity_and_meta():
    meta = SchemaMeta(tier="bronze", alignment="source", source_system="lims")

    @register_dataframe_schema(
        domain="lab", subdomains=["analytics"], entity="cell_count", version="1.0",
        owner="lab-data", description="Cells.", meta=meta,
    )
    class CellCount(ContractMixin, BaseDataFrameSchema):
        sample_id: str

    assert CellCount.__schema_info__ == SchemaInfo(
        domain="lab", subdomains=("analytics",), entity="cell_count", version="1.0", owner="lab-data",
        description="Cells.",
    )
    assert CellCount.__schema_meta__ is meta
    assert CellCount.contract_name() == "lab.analytics.cell_count"
    assert CellCount.contract_version() == "1.0"
    assert CellCount.contract_header()["contract.meta.tier"] == "bronze"
    # the model still validates as a pandera model
    assert list(CellCount.validate(pd.DataFrame({"sample_id": ["S1"], "extra": [1]})).columns) == ["sample_id"]


def test_the_decorator_defaults_meta_and_refuses_bad_identity_at_definition_time():
    @register_dataframe_schema(domain="lab", entity="plate", version="1.0")
    class Plate(ContractMixin, BaseDataFrameSchema):
        well: str

    assert Plate.schema_meta() == SchemaMeta()
    with pytest.raises(InvalidIdentityError, match="contains '-'"):
        register_dataframe_schema(domain="lab-ops", entity="plate", version="1.0")
    with pytest.raises(InvalidIdentityError, match="malformed version"):
        register_dataframe_schema(domain="lab", entity="plate", version="v1")
    with pytest.raises(InvalidIdentityError, match="meta must be a SchemaMeta"):
        register_dataframe_schema(domain="lab", entity="plate", version="1.0", meta={"tier": "gold"})


def test_the_decorator_only_takes_dataframe_models():
    with pytest.raises(TypeError, match="DataFrameModel"):
        @register_dataframe_schema(domain="lab", entity="plate", version="1.0")
        class NotAModel:
            pass


def test_base_models_set_the_validation_posture():
    base = BaseDataFrameSchema.to_schema()
    assert (base.strict, base.coerce, base.drop_invalid_rows) == ("filter", True, False)

    class Readings(SourceSystemSchema):
        value: float = pa.Field(ge=0)

    schema = Readings.to_schema()
    assert (schema.strict, schema.coerce, schema.drop_invalid_rows) == ("filter", True, True)
    out = Readings.validate(pd.DataFrame({"value": ["1.5", "-2", "3"], "noise": [1, 2, 3]}), lazy=True)
    assert out["value"].tolist() == [1.5, 3.0]  # coerced, the invalid row dropped, the extra column filtered


NOTEBOOK_CELL = """
import pandera.pandas as pa
from registry_client.authoring import BaseDataFrameSchema, ContractMixin, SchemaMeta, register_dataframe_schema

@register_dataframe_schema(domain="lab", subdomains=["scratch"], entity="draft", version="0.1", owner="lab-data",
                           meta=SchemaMeta(tier="bronze"))
class DraftSchema(ContractMixin, BaseDataFrameSchema):
    sample_id: str = pa.Field(str_startswith="S")
    od600: float = pa.Field(ge=0)
"""


def run_in_notebook(source: str) -> types.ModuleType:
    """Run a cell as a notebook does: in a module with no file behind it."""
    module = types.ModuleType("__notebook_cell__")
    sys.modules[module.__name__] = module
    try:
        exec(textwrap.dedent(source), module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    return module


def test_a_notebook_draft_needs_no_contracts_tree_under_relaxed_checks():
    with relaxed_registry_checks():
        draft = run_in_notebook(NOTEBOOK_CELL).DraftSchema
        document = build_document(draft)
    assert document["schema"]["name"] == "lab.scratch.draft"
    assert [c["name"] for c in document["columns"]] == ["sample_id", "od600"]
    assert draft.validate(pd.DataFrame({"sample_id": ["S1"], "od600": ["0.5"]}))["od600"].tolist() == [0.5]


def test_outside_relaxed_checks_the_export_rules_refuse_a_notebook_draft():
    draft = run_in_notebook(NOTEBOOK_CELL).DraftSchema  # defining it is still cheap
    with pytest.raises(ExportError, match="relaxed_registry_checks"):
        build_document(draft)


def test_relaxed_checks_are_restored_afterwards_even_on_error():
    with pytest.raises(RuntimeError), relaxed_registry_checks():
        assert not RegistryConfig.enforce_domain_name
        raise RuntimeError
    assert RegistryConfig.enforce_domain_name and RegistryConfig.enforce_path_version
