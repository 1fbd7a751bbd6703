"""The records the checker returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .budget import BUDGET_KINDS


@dataclass(frozen=True)
class Change:
    """One difference between two schemas and the directions it may break.

    breaks_backward: a document valid under the old version can fail the new one.
    breaks_forward: a document valid under the new version can fail the old one.
    `breaking` is filled in by check_compatibility: does this change break a
    direction the mode requires? `against` names the version compared with.
    `column` and `summary` are filled in for dataframe contracts: what the change does, said
    of columns, dtypes, nullability and checks.
    `proof` is filled in for breaking changes: "proven" with a `witness` document (valid under
    one version, invalid under the other, in `witness_direction`), "assumed" when the checker
    could not prove the direction safe and found no witness within its budget (see witness.py),
    or "undecided" for a change a budget decided (`decided_by_budget`: the checker stopped
    before deciding that place and counts it as breaking both ways) and no witness showed.
    """

    path: str
    kind: str
    breaks_backward: bool
    breaks_forward: bool
    reason: str
    against: str | None = None
    breaking: bool | None = None
    proof: str | None = None
    witness: Any = None
    witness_direction: str | None = None
    # For a dataframe contract, the change in the frame's words (registry_client.compat.columns):
    # the column it is about (None: the frame's own settings) and the sentence a reader uses.
    # `path` stays the row schema's JSON pointer, for tools; people are shown `summary`.
    column: str | None = None
    summary: str | None = None

    @property
    def decided_by_budget(self) -> bool:
        """A budget stopped the checker here before it decided; the change counts as breaking both
        ways (unless the place cannot matter to either side, as an array keyword of an object)."""
        return self.kind in BUDGET_KINDS

    def to_dict(self) -> dict:
        return {**asdict(self), "decided_by_budget": self.decided_by_budget}


@dataclass
class CompatibilityReport:
    mode: str
    compatible: bool
    suggested_bump: str
    changes: list[Change] = field(default_factory=list)
    verdict: str = ""
    # The steps each budget allowed and spent (budget.py), summed over the comparisons.
    work: dict = field(default_factory=dict)

    @property
    def breaking_changes(self) -> list[Change]:
        return [c for c in self.changes if c.breaking]

    @property
    def undecided(self) -> list[Change]:
        """The changes a budget decided that count against the verdict (breaking some direction)."""
        return [c for c in self.changes if c.decided_by_budget and (c.breaks_backward or c.breaks_forward)]

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "compatible": self.compatible,
            "suggested_bump": self.suggested_bump,
            "verdict": self.verdict,
            "changes": [c.to_dict() for c in self.changes],
            "counts": {
                "breaking": len(self.breaking_changes),
                "proven": sum(c.proof == "proven" and not c.decided_by_budget for c in self.changes),
                "assumed": sum(c.proof == "assumed" for c in self.changes),
                "decided_by_budget": len(self.undecided),
            },
            "work": dict(self.work),
        }
