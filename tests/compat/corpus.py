"""The labelled corpus in tests/compat_cases/: one YAML file per case."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

CASES_DIR = Path(__file__).resolve().parent.parent / "compat_cases"
MISSING = object()


@dataclass(frozen=True)
class Case:
    id: str
    why: str
    tags: tuple[str, ...]
    old: object
    new: object
    breaks_backward: bool
    breaks_forward: bool
    counterexamples: dict = field(default_factory=dict)

    def counterexample(self, direction: str):
        return self.counterexamples.get(direction, MISSING)


def load_cases(directory: Path = CASES_DIR) -> list[Case]:
    cases = []
    for path in sorted(directory.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        missing = {"old", "new", "breaks_backward", "breaks_forward", "why"} - set(raw)
        if missing:
            raise ValueError(f"{path.name}: missing {', '.join(sorted(missing))}")
        cases.append(Case(
            id=raw.get("id", path.stem), why=raw["why"], tags=tuple(raw.get("tags", [])),
            old=raw["old"], new=raw["new"],
            breaks_backward=bool(raw["breaks_backward"]), breaks_forward=bool(raw["breaks_forward"]),
            counterexamples=raw.get("counterexamples") or {},
        ))
    return cases
