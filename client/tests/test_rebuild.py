"""YAML -> live Pandera model."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
import pytest
from registry_client import InvalidContract
from registry_client.pandera_models import build_model


def test_columns_become_fields_with_their_checks_and_flags(docs):
    schema = build_model(docs.cell_count()).to_schema()
    assert list(schema.columns) == ["run_row_id", "viability", "status", "run date", "tags"]
    viability = schema.columns["viability"]
    assert (str(viability.dtype), viability.nullable, viability.required) == ("float64", True, True)
    assert [c.name for c in viability.checks] == ["greater_than_or_equal_to", "less_than_or_equal_to"]
    assert schema.columns["status"].required is False
    assert schema.columns["run_row_id"].unique is True
    assert (schema.strict, schema.coerce, schema.name) == ("filter", True, "lab.analytics.cell_count")


def test_a_column_name_that_is_not_an_identifier_keeps_its_name(docs):
    model = build_model(docs.cell_count())
    frame = model.validate(pd.DataFrame({"run_row_id": [1], "viability": ["0.5"], "run date": ["2024-01-01"]}))
    assert list(frame.columns) == ["run_row_id", "viability", "run date"]
    assert str(frame["run date"].dtype) == "datetime64[ns]"


def test_config_filters_extra_columns_and_coerces(docs):
    model = build_model(docs.cell_count())
    frame = model.validate(pd.DataFrame({"run_row_id": [7], "viability": ["1"], "run date": [None], "extra": [1]}))
    assert "extra" not in frame.columns and frame["viability"].tolist() == [1.0]


def test_checks_reject_bad_values_lazily(docs):
    model = build_model(docs.cell_count())
    bad = pd.DataFrame({"run_row_id": ["a", "a"], "viability": [1.5, -1], "status": ["ok", "maybe"], "run date": [None, None]})
    with pytest.raises(pa.errors.SchemaErrors) as caught:
        model.validate(bad, lazy=True)
    failing = set(zip(caught.value.failure_cases["column"], caught.value.failure_cases["check"], strict=True))
    assert ("viability", "less_than_or_equal_to(1.0)") in failing
    assert ("viability", "greater_than_or_equal_to(0.0)") in failing
    assert ("status", "isin(['ok', 'failed'])") in failing
    assert ("run_row_id", "field_uniqueness") in failing


def test_a_non_canonical_dtype_or_unknown_check_is_refused_with_the_column_named(docs):
    document = docs.cell_count()
    document["columns"][1]["dtype"] = "double"
    with pytest.raises(InvalidContract, match="column 'viability'.*unknown dtype 'double'|column 'viability'.*double"):
        build_model(document)
    document = docs.cell_count()
    document["columns"][1]["checks"] = [{"between": [0, 1]}]
    with pytest.raises(InvalidContract, match="column 'viability'.*between"):
        build_model(document)
