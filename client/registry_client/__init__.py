"""Thin client for the dataset registry. Imports no Django.

`Registry`, `REGISTRY` and `LATEST` are imported on first use: the registry's
rebuilding side pulls in pandas and pandera, which a process that only checks
compatibility or reads YAML (every `manage.py` command) should not pay for.
"""

from typing import Any

from registry_client import lazyformats
from registry_client.errors import (
    InvalidContract,
    RegistryClientError,
    StoreUnreachable,
    UnknownContract,
    UnknownVersion,
)

lazyformats.install()

__version__ = "0.1.0"

__all__ = [
    "LATEST", "REGISTRY", "InvalidContract", "Registry", "RegistryClientError", "StoreUnreachable",
    "UnknownContract", "UnknownVersion",
]

_LAZY = ("LATEST", "REGISTRY", "Registry")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from registry_client import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'registry_client' has no attribute {name!r}")
