"""Semantic-version advice: the smallest bump the changes allow, and a refusal when a number understates them."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

BUMPS = ("none", "patch", "minor", "major")


def suggested_bump(changes) -> str:
    """breaking in either direction → major; other changes to what is valid → minor; annotations → patch.

    The advice ignores the compatibility mode on purpose. The mode decides what the
    gate lets through without waiting for consumers; the version number tells every
    reader, including those the mode does not protect (a consumer still validating
    against the old version, a replay of history), whether their expectations still
    hold. A change that breaks either direction breaks someone, so it is a major.
    """
    if not changes:
        return "none"
    if any(c.breaks_backward or c.breaks_forward for c in changes):
        return "major"
    if any(c.kind != "annotation_changed" for c in changes):
        return "minor"
    return "patch"


def _parse(version: str, which: str) -> Version:
    try:
        return Version(str(version))
    except InvalidVersion as exc:
        raise ValueError(f"the {which} version {version!r} is not a version number like 1.0, 2.1 or 1.0.1") from exc


def _release(v: Version) -> tuple[int, int, int]:
    parts = (list(v.release) + [0, 0, 0])[:3]
    return parts[0], parts[1], parts[2]


def _what_breaks(report) -> str:
    """Which directions the report's changes break, in words (the report may be a bare bump string)."""
    changes = getattr(report, "changes", None) or []
    backward = any(c.breaks_backward for c in changes)
    forward = any(c.breaks_forward for c in changes)
    if backward and forward:
        return "it breaks both directions (old documents can fail it, and readers of the old version can fail on new ones)"
    if backward:
        return "it breaks backward compatibility (documents written under the old version can fail it)"
    if forward:
        return "it breaks forward compatibility (readers still on the old version can fail on new documents)"
    return "it breaks compatibility"


def version_bump_problem(previous_version: str, proposed_version: str, report) -> str | None:
    """A sentence saying why `proposed_version` understates the change in `report`, or None when it is fine."""
    prev, new = _parse(previous_version, "published"), _parse(proposed_version, "proposed")
    bump = report.suggested_bump if hasattr(report, "suggested_bump") else str(report)
    if bump == "none":
        if new < prev:
            return f"version {proposed_version} is lower than the published {previous_version}"
        return None
    if new <= prev:
        return (f"version {proposed_version} is not greater than the published {previous_version}; "
                f"the changes need a {bump} release")
    (pm, pn, _), (nm, nn, _) = _release(prev), _release(new)
    if bump == "major" and nm <= pm:
        return (f"version {proposed_version} understates the change: {_what_breaks(report)}, whatever the "
                f"contract's mode, so it needs a major release ({pm + 1}.0 or later), not a "
                f"{'minor' if nn > pn else 'patch'} one")
    if bump == "minor" and (nm, nn) <= (pm, pn):
        return (f"version {proposed_version} understates the change: it changes which documents are valid, "
                f"so it needs at least a minor release ({pm}.{pn + 1} or later), not a patch one")
    return None
