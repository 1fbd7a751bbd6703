"""The compatibility checker (pure Python, no Django).

Public interface, used by the publish gate, the diff API and the CLI:

    check_compatibility(previous, proposed, mode="BACKWARD") -> CompatibilityReport
        previous: the earlier published documents, oldest first (JSON Schemas or
        contract documents of any schema_type); proposed: the new one.
        Non-transitive modes compare with the last of `previous` only.

    CompatibilityReport: .mode, .compatible, .suggested_bump ("major"|"minor"|"patch"|"none"),
        .changes (list[Change]), .to_dict() in the CLI's JSON shape.
    Change: .path (JSON pointer), .kind, .breaks_backward, .breaks_forward, .reason,
        .against (the version compared with, or None).

Until the full engine lands, any difference counts as breaking both ways.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

MODES = (
    "NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE",
)


@dataclass(frozen=True)
class Change:
    path: str
    kind: str
    breaks_backward: bool
    breaks_forward: bool
    reason: str
    against: str | None = None


@dataclass
class CompatibilityReport:
    mode: str
    compatible: bool
    suggested_bump: str
    changes: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "compatible": self.compatible,
            "suggested_bump": self.suggested_bump,
            "changes": [asdict(c) for c in self.changes],
        }


def check_compatibility(previous: Sequence[dict], proposed: dict, mode: str = "BACKWARD") -> CompatibilityReport:
    if mode not in MODES:
        raise ValueError(f"unknown compatibility mode {mode!r}; expected one of {', '.join(MODES)}")
    if not previous:
        return CompatibilityReport(mode=mode, compatible=True, suggested_bump="none")
    last = previous[-1]
    if json.dumps(last, sort_keys=True) == json.dumps(proposed, sort_keys=True):
        return CompatibilityReport(mode=mode, compatible=True, suggested_bump="none")
    change = Change("", "changed", True, True, "the document changed; every change counts as breaking until the checker lands")
    return CompatibilityReport(mode=mode, compatible=mode == "NONE", suggested_bump="major", changes=[change])
