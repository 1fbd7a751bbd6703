"""Contract versions and their folder encoding.

A version is ``MAJOR.MINOR`` or ``MAJOR.MINOR.PATCH``, optionally followed by a
pre-release (``a1``, ``b2``, ``rc1``) and/or a dev release (``.dev1``), always in
the normalized form that ``packaging`` prints. It lives in a folder whose name
is a Python-safe encoding of it::

    1.0        <-> v1_0
    2.1        <-> v2_1
    1.0.1      <-> v1_0_1
    2.0.0rc1   <-> v2_0_0rc1
    1.1.dev3   <-> v1_1_dev3

Both directions refuse anything else, so every version has exactly one folder
and every folder exactly one version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from packaging.version import InvalidVersion, Version

T = TypeVar("T")

__all__ = [
    "InvalidVersionError",
    "validate_version",
    "version_to_folder",
    "folder_to_version",
    "parse_version",
    "is_prerelease",
    "latest_release",
    "lane_of",
    "lane_selector",
    "latest_in_lane",
]

_NUMBER = r"(?:0|[1-9][0-9]*)"
_VERSION_RE = re.compile(
    rf"^(?P<release>{_NUMBER}\.{_NUMBER}(?:\.{_NUMBER})?)(?P<pre>(?:a|b|rc){_NUMBER})?(?:\.dev(?P<dev>{_NUMBER}))?$"
)
_FOLDER_RE = re.compile(
    rf"^v(?P<release>{_NUMBER}_{_NUMBER}(?:_{_NUMBER})?)(?P<pre>(?:a|b|rc){_NUMBER})?(?:_dev(?P<dev>{_NUMBER}))?$"
)


class InvalidVersionError(ValueError):
    """A version string or version folder name that does not follow the encoding."""


def validate_version(version: object) -> str:
    """Return ``version`` unchanged if it is a well-formed contract version, else raise."""
    if not isinstance(version, str):
        raise InvalidVersionError(
            f"version must be a string such as '1.0', not {type(version).__name__} {version!r}"
            + (" (quote it in YAML)" if isinstance(version, (int, float)) else "")
        )
    if not _VERSION_RE.match(version):
        raise InvalidVersionError(
            f"malformed version {version!r}: expected MAJOR.MINOR or MAJOR.MINOR.PATCH, "
            "optionally with a pre-release (a1, b1, rc1) or .devN suffix, e.g. '1.0', '1.0.1', '2.0.0rc1'"
        )
    try:
        normalized = str(Version(version))
    except InvalidVersion as exc:  # pragma: no cover - the pattern is stricter than packaging
        raise InvalidVersionError(f"malformed version {version!r}: {exc}") from None
    if normalized != version:
        raise InvalidVersionError(f"version {version!r} is not in normalized form; write {normalized!r}")
    return version


def version_to_folder(version: str) -> str:
    """``"1.0.1"`` -> ``"v1_0_1"``."""
    match = _VERSION_RE.match(validate_version(version))
    assert match is not None
    folder = "v" + match.group("release").replace(".", "_") + (match.group("pre") or "")
    if match.group("dev") is not None:
        folder += f"_dev{match.group('dev')}"
    return folder


def folder_to_version(folder: str) -> str:
    """``"v1_0_1"`` -> ``"1.0.1"``."""
    if not isinstance(folder, str):
        raise InvalidVersionError(f"version folder must be a string, not {type(folder).__name__}")
    match = _FOLDER_RE.match(folder)
    if not match:
        raise InvalidVersionError(
            f"malformed version folder {folder!r}: expected v<MAJOR>_<MINOR>[_<PATCH>] with an optional "
            "a/b/rc pre-release or _devN suffix, e.g. v1_0, v1_0_1, v2_0_0rc1"
        )
    version = match.group("release").replace("_", ".") + (match.group("pre") or "")
    if match.group("dev") is not None:
        version += f".dev{match.group('dev')}"
    return validate_version(version)


def parse_version(version: str) -> Version:
    """The ``packaging`` Version, for semantic comparison (``10.0`` > ``9.0``)."""
    return Version(validate_version(version))


def is_prerelease(version: str) -> bool:
    """Pre-releases and dev releases are never chosen as "latest"."""
    parsed = parse_version(version)
    return parsed.is_prerelease or parsed.is_devrelease


def latest_release(versions: Iterable[T], *, key: Callable[[T], str] = str) -> T | None:
    """The one rule for "the latest version": the highest release in semantic order.

    Pre-releases and dev releases never count (2.0rc1 can be pinned, but nothing
    asking for "latest" picks it up by accident), nor do unparsable strings; None
    when no release is left. `key` reads the version string of each item, so the
    same rule serves strings, database rows and index entries alike.
    """
    best: tuple[Version, T] | None = None
    for item in versions:
        try:
            parsed = Version(key(item))
        except InvalidVersion:
            continue
        if parsed.is_prerelease or parsed.is_devrelease:
            continue
        if best is None or parsed > best[0]:
            best = (parsed, item)
    return best[1] if best else None


# A lane selector names a major version: "2" or "2.x" means the newest 2.y.z release.
_LANE_RE = re.compile(rf"^(?P<major>{_NUMBER})(?:\.x)?$")


def lane_of(version: str) -> int:
    """The lane (major version) a version belongs to: ``"2.3.1"`` -> 2."""
    return int(validate_version(version).split(".", 1)[0])


def lane_selector(selector: object) -> int | None:
    """The major a lane selector names (``"2"`` or ``"2.x"`` -> 2), or None when it is not one."""
    if not isinstance(selector, str):
        return None
    match = _LANE_RE.match(selector)
    return int(match.group("major")) if match else None


def latest_in_lane(versions: Iterable[T], major: int, *, key: Callable[[T], str] = str) -> T | None:
    """The newest release of one lane: the one rule for "latest" (latest_release),
    applied to the versions whose major is `major`. Versions are in normalized form,
    so the major is the text before the first dot: a cheap filter before any parsing."""
    prefix = f"{major}."
    return latest_release((item for item in versions if key(item).startswith(prefix)), key=key)
