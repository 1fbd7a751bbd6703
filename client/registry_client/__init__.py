"""Thin client for the dataset registry. Imports no Django."""

from registry_client.errors import (
    InvalidContract,
    RegistryClientError,
    StoreUnreachable,
    UnknownContract,
    UnknownVersion,
)
from registry_client.registry import LATEST, REGISTRY, Registry

__version__ = "0.1.0"

__all__ = [
    "LATEST", "REGISTRY", "InvalidContract", "Registry", "RegistryClientError", "StoreUnreachable",
    "UnknownContract", "UnknownVersion",
]
