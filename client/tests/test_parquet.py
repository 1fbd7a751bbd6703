"""Contract identity travels with the data in Parquet metadata."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
import pytest
from registry_client import Registry
from registry_client.backends import LocalBackend
from registry_client.parquet import (
    contract_of,
    read_contract_header,
    validate_parquet,
    write_parquet,
)


def frame() -> pd.DataFrame:
    return pd.DataFrame({"run_row_id": ["a", "b"], "viability": [0.5, 0.9], "run date": pd.to_datetime(["2024-01-01", None])})


def test_a_file_says_which_contract_and_version_produced_it(tmp_path, docs):
    path = tmp_path / "cells.parquet"
    write_parquet(frame(), path, docs.cell_count("1.0"))
    identity = contract_of(path)
    assert (identity.name, identity.version) == ("lab.analytics.cell_count", "1.0")
    header = read_contract_header(path)
    assert header["contract.meta.tier"] == "bronze"
    assert header["contract.meta.source_system"] == '["lims", "eln"]'
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame())


def test_a_file_is_validated_against_the_contract_named_in_it(tmp_path, store, docs):
    store.publish(docs.cell_count("1.0"))
    registry = Registry(LocalBackend(store.root))
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    write_parquet(frame(), good, docs.cell_count("1.0"))
    write_parquet(frame().assign(viability=[2.0, 0.1]), bad, docs.cell_count("1.0"))
    assert len(validate_parquet(good, registry)) == 2
    with pytest.raises(pa.errors.SchemaError, match="less_than_or_equal_to"):
        validate_parquet(bad, registry)


def test_an_unstamped_file_is_reported(tmp_path):
    path = tmp_path / "plain.parquet"
    frame().to_parquet(path)
    with pytest.raises(ValueError, match="carries no contract header"):
        contract_of(path)
