"""Contract identity travels with data: a flat `contract.*` header in Parquet
file metadata, read back to answer which contract and version produced a file.

Needs pyarrow (the `parquet` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from registry_client.pandera_models import contract_header

PREFIX = "contract."


@dataclass(frozen=True)
class ContractIdentity:
    name: str
    version: str
    header: dict[str, str]


def write_parquet(df: pd.DataFrame, path: str | Path, document: dict, **kwargs: Any) -> None:
    """Write `df` with the contract's header in the file's key/value metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=kwargs.pop("preserve_index", False))
    existing = dict(table.schema.metadata or {})
    existing.update({k.encode(): v.encode() for k, v in contract_header(document).items()})
    pq.write_table(table.replace_schema_metadata(existing), str(path), **kwargs)


def read_contract_header(path: str | Path) -> dict[str, str]:
    import pyarrow.parquet as pq

    metadata = pq.read_schema(str(path)).metadata or {}
    return {k.decode(): v.decode() for k, v in metadata.items() if k.decode().startswith(PREFIX)}


def contract_of(path: str | Path) -> ContractIdentity:
    """Which contract and version produced this file (ValueError if unstamped)."""
    header = read_contract_header(path)
    if "contract.name" not in header or "contract.version" not in header:
        raise ValueError(f"{path} carries no contract header (no contract.name / contract.version in its metadata)")
    return ContractIdentity(name=header["contract.name"], version=header["contract.version"], header=header)


def validate_parquet(path: str | Path, registry: Any = None, **validate_kwargs: Any) -> pd.DataFrame:
    """Read the file and validate it against the contract version named in its header."""
    if registry is None:
        from registry_client.registry import REGISTRY as registry
    identity = contract_of(path)
    model = registry.get_pandera_model(identity.name, identity.version)
    return model.validate(pd.read_parquet(str(path)), **validate_kwargs)
