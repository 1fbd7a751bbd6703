"""Semantic-version advice: the smallest bump the changes allow, and a refusal when a number understates them."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

BUMPS = ("none", "patch", "minor", "major")


def suggested_bump(changes, checks_backward: bool, checks_forward: bool) -> str:
    """breaking under the mode → major; other changes to what is valid → minor; annotations → patch.

    Under NONE both directions count, so the advice stays honest when the gate is off.
    """
    if not changes:
        return "none"
    if not checks_backward and not checks_forward:
        checks_backward = checks_forward = True
    if any((checks_backward and c.breaks_backward) or (checks_forward and c.breaks_forward) for c in changes):
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
        return (f"version {proposed_version} understates the change: it breaks consumers under the contract's mode, "
                f"so it needs a major release ({pm + 1}.0 or later), not a {'minor' if nn > pn else 'patch'} one")
    if bump == "minor" and (nm, nn) <= (pm, pn):
        return (f"version {proposed_version} understates the change: it changes which documents are valid, "
                f"so it needs at least a minor release ({pm}.{pn + 1} or later), not a patch one")
    return None
