"""Resolving a requested version: a specific one, "latest" or None (all)."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version


def semantic_sort(versions: Iterable[str]) -> list[str]:
    """Oldest first, by semantic order (10.0 after 9.0); unparsable ones last, as text."""
    parsed, unparsable = [], []
    for v in set(versions):
        try:
            parsed.append((Version(v), v))
        except InvalidVersion:
            unparsable.append(v)
    return [v for _, v in sorted(parsed)] + sorted(unparsable)


def latest_release(versions: Iterable[str]) -> str | None:
    """The highest version that is neither a pre-release nor a dev release."""
    releases = []
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        # 2.0.0rc1 can be pinned explicitly; nothing asking for "latest" picks it up by accident.
        if parsed.is_prerelease or parsed.is_devrelease:
            continue
        releases.append((parsed, v))
    return max(releases)[1] if releases else None
