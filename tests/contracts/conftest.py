"""Helpers for the contracts tests: scratch contract trees and a minimal rebuild of a document."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any, Optional

import pandera.pandas as pa
import pytest
from registry_client.checks import field_kwargs
from registry_client.dtypes import pandera_annotation

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "contracts"


def write_schema(root: Path, folder: str, source: str, filename: str = "schema.py") -> Path:
    """Write a file at <root>/<folder>/<filename>, dedenting the source."""
    path = root / folder / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def contract_source(
    *,
    domain: str = "shop",
    subdomains: tuple[str, ...] = ("sales",),
    entity: str = "orders",
    version: str = "1.0",
    class_name: str = "OrdersSchema",
    body: str = "    order_id: str = pa.Field(unique=True)\n    amount: float = pa.Field(ge=0)\n",
    owner: str = "checkout",
    header: str = "",
) -> str:
    return (
        "import pandera.pandas as pa\n"
        "from registry_client.authoring import BaseDataFrameSchema, ContractMixin, SchemaMeta, register_dataframe_schema\n"
        f"{header}\n\n"
        "@register_dataframe_schema(\n"
        f"    domain={domain!r}, subdomains={list(subdomains)!r}, entity={entity!r}, version={version!r},\n"
        f"    owner={owner!r}, description='Test contract.', meta=SchemaMeta(tier='silver'),\n"
        ")\n"
        f"class {class_name}(ContractMixin, BaseDataFrameSchema):\n"
        f"{body}"
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """An empty contracts root."""
    (tmp_path / "domains").mkdir()
    return tmp_path


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A scratch copy of the committed demo contracts."""
    target = tmp_path / "contracts"
    shutil.copytree(FIXTURES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def rebuild_model(document: dict[str, Any]) -> type[pa.DataFrameModel]:
    """A live DataFrameModel from a dataframe document (a minimal rebuild for the round-trip tests)."""
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {}
    for column in document["columns"]:
        annotation = pandera_annotation(column["dtype"])
        annotations[column["name"]] = annotation if column.get("required", True) else Optional[annotation]  # noqa: UP045 - the spelling pandera reads as "not required"
        namespace[column["name"]] = pa.Field(
            nullable=column["nullable"],
            coerce=column.get("coerce", False),
            unique=column.get("unique", False),
            description=column.get("description"),
            **field_kwargs(column.get("checks")),
        )
    config = dict(document.get("config") or {})
    namespace["Config"] = type("Config", (), config)
    namespace["__annotations__"] = annotations
    return type("Rebuilt", (pa.DataFrameModel,), namespace)
