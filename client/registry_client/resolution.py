"""Resolving a requested version: a specific one, "latest" or None (all)."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from registry_client.versions import latest_release

__all__ = ["latest_release", "semantic_sort"]


def semantic_sort(versions: Iterable[str]) -> list[str]:
    """Oldest first, by semantic order (10.0 after 9.0); unparsable ones last, as text."""
    parsed, unparsable = [], []
    for v in set(versions):
        try:
            parsed.append((Version(v), v))
        except InvalidVersion:
            unparsable.append(v)
    return [v for _, v in sorted(parsed)] + sorted(unparsable)
