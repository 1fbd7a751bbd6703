"""The compatibility checker (pure Python, no Django).

Public interface, used by the publish gate, the diff API and the CLI:

    check_compatibility(previous, proposed, mode="BACKWARD") -> CompatibilityReport
        previous: the earlier published documents, oldest first (JSON Schemas or
        contract documents of any schema_type); proposed: the new one.
        Non-transitive modes compare with the last of `previous` only; the
        TRANSITIVE modes with every one of them.

    compare(old_schema, new_schema, budget=None) -> list[Change]
        every difference between two JSON Schemas (Draft 3, 4, 6, 7, 2019-09 or 2020-12,
        each read by its own `$schema`), each with breaks_backward / breaks_forward and a
        reason. Never raises for a schema: a failure is a `checker_error` change and what is
        not decided within the budget (a number of steps, see budget.py) a `budget_exceeded`
        change, both breaking both ways.

    to_json_schema(document) -> dict
        the JSON Schema the checker compares for a contract document or a plain schema.

    version_bump_problem(previous_version, proposed_version, report) -> str | None
        a sentence when the proposed number understates the change.

    CompatibilityReport: .mode, .compatible, .suggested_bump ("major"|"minor"|"patch"|"none", judged
        in both directions whatever the mode),
        .verdict, .changes (list[Change]), .work (steps spent and budgets), .undecided (changes
        decided by a budget), .to_dict() in the CLI's JSON shape.
    Change: .path (JSON pointer), .kind, .breaks_backward, .breaks_forward, .reason,
        .against (the version compared with, or None), .breaking (under the mode),
        .proof ("proven" | "assumed" | "undecided" for a breaking change), .witness, .witness_direction.

How the checker reasons is written up in docs/compat.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .budget import (
    BUDGET_ENV,
    DEFAULT_BUDGET,
    DEFAULT_TIME_GUARD,
    DEFAULT_WITNESS_BUDGET,
    TIME_GUARD_ENV,
    WITNESS_BUDGET_ENV,
    Meter,
    compare_steps,
    time_guard,
    witness_steps,
)
from .columns import describe_changes, is_dataframe_document
from .documents import DocumentError, document_version, is_contract_document, to_json_schema
from .engine import compare as _compare_schemas
from .model import Change, CompatibilityReport
from .semver import suggested_bump, version_bump_problem
from .witness import attach_witnesses

MODES = (
    "NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE",
)

__all__ = [
    "BUDGET_ENV", "DEFAULT_BUDGET", "DEFAULT_TIME_GUARD", "DEFAULT_WITNESS_BUDGET", "MODES", "TIME_GUARD_ENV",
    "WITNESS_BUDGET_ENV", "Change", "CompatibilityReport", "DocumentError", "check_compatibility", "compare",
    "checks_backward", "checks_forward", "is_contract_document", "to_json_schema", "version_bump_problem",
]


def checks_backward(mode: str) -> bool:
    return mode.split("_")[0] in ("BACKWARD", "FULL")


def checks_forward(mode: str) -> bool:
    return mode.split("_")[0] in ("FORWARD", "FULL")


def compare(old_schema, new_schema, budget: int | None = None) -> list[Change]:
    """Every difference between two JSON Schemas (or contract documents), each with the directions it breaks."""
    return _compare_schemas(to_json_schema(old_schema), to_json_schema(new_schema), budget=budget)


def _checker_error(exc: BaseException) -> list[Change]:
    return [Change("", "checker_error", True, True,
                   f"breaking both ways: the checker could not decide ({type(exc).__name__}: {str(exc)[:200]})")]


def _compare_guarded(old_schema, new_schema, meter: Meter) -> list[Change]:
    """`compare` for the gate: an internal failure is a change breaking both ways, never an exception."""
    try:
        return _compare_schemas(old_schema, new_schema, meter=meter)
    except Exception as exc:  # pragma: no cover - the engine already turns failures into changes
        return _checker_error(exc)


def _is_breaking(change: Change, mode: str) -> bool:
    return (checks_backward(mode) and change.breaks_backward) or (checks_forward(mode) and change.breaks_forward)


def _verdict(mode: str, changes: list[Change], frames: bool = False) -> str:
    if mode == "NONE":
        return "not checked: the compatibility mode is NONE"
    breaking = [c for c in changes if c.breaking]
    if breaking:
        first = breaking[0]
        things = "frames" if frames else "documents"
        direction = (
            f"{things} written under the old version (history, replays) can fail the new one"
            if checks_backward(mode) and first.breaks_backward
            else f"consumers validating against the old version can receive {things} that fail it"
        )
        against = f" against {first.against}" if first.against else ""
        more = f" (and {len(breaking) - 1} more)" if len(breaking) > 1 else ""
        what = first.summary or f"{first.path or '/'} {first.kind}"
        return f"breaking under {mode}{against}: {what}{more}; {direction}"
    if any(c.breaks_backward or c.breaks_forward for c in changes):
        return f"safe under {mode}: the changes only break a direction this mode does not require"
    return "safe in both directions"


def check_compatibility(previous: Sequence, proposed, mode: str = "BACKWARD",
                        budget: int | None = None, witness_budget: int | None = None,
                        time_guard_seconds: float | None = None) -> CompatibilityReport:
    """Compare `proposed` with the earlier versions the mode requires and say which change breaks what.

    A failure inside the checker (or a schema it cannot read) is reported as a `checker_error`
    change breaking both ways ("the checker could not decide"), never raised; `budget` bounds each
    comparison in steps (default $REGISTRY_COMPAT_BUDGET, else 40000; 0: unbounded; past it the
    remaining paths are a `budget_exceeded` change breaking both ways). Each breaking change is
    then marked proven (with a witness document), assumed, or undecided (a change the budget
    decided); that search has its own budget, `witness_budget` steps per comparison (default
    $REGISTRY_COMPAT_WITNESS_BUDGET, else 100000; 0 skips it). `time_guard_seconds` is the
    last-resort wall-clock guard of each comparison and of each search (default
    $REGISTRY_COMPAT_TIME_GUARD, else 60). The verdict is a function of the documents, the mode
    and these settings only, never of the machine's speed or load (short of the guard).
    DocumentError (an invalid contract document) is still raised."""
    if mode not in MODES:
        raise ValueError(f"unknown compatibility mode {mode!r}; expected one of {', '.join(MODES)}")
    limit, search, guard = compare_steps(budget), witness_steps(witness_budget), time_guard(time_guard_seconds)
    work = {"compare_budget": limit, "compare_steps": 0, "witness_budget": search, "witness_steps": 0,
            "time_guard_s": guard, "witness_stopped_by": None}
    if not previous:
        return CompatibilityReport(mode=mode, compatible=True, suggested_bump="none", work=work,
                                   verdict="nothing published yet: the first version is always accepted")
    transitive = mode.endswith("_TRANSITIVE")
    frames = is_dataframe_document(proposed)
    targets = list(enumerate(previous)) if transitive else [(len(previous) - 1, previous[-1])]
    new_schema = to_json_schema(proposed)
    changes: list[Change] = []
    latest: list[Change] = []
    for index, document in targets:
        label = document_version(document) or (f"previous[{index}]" if transitive else None)
        old_schema = None
        try:
            old_schema = to_json_schema(document)
        except DocumentError:
            raise
        except Exception as exc:
            found = _checker_error(exc)
        else:
            meter = Meter(limit, guard)
            found = _compare_guarded(old_schema, new_schema, meter)
            work["compare_steps"] += meter.steps
        found = [replace(c, against=label) for c in found]
        if frames and is_dataframe_document(document):
            # said of columns, dtypes, nullability and checks, never of the row schema's paths
            found = [replace(c, column=d["column"], summary=d["summary"])
                     for c, d in zip(found, describe_changes(document, proposed, [c.to_dict() for c in found]), strict=True)]
        found = [replace(c, breaking=_is_breaking(c, mode)) for c in found]
        if old_schema is not None:
            required = tuple(d for d, on in (("backward", checks_backward(mode)), ("forward", checks_forward(mode))) if on)
            meter = Meter(search, guard)
            found = attach_witnesses(old_schema, new_schema, found, meter, required)
            work["witness_steps"] += meter.steps
            work["witness_stopped_by"] = work["witness_stopped_by"] or meter.stopped_by
        if index == len(previous) - 1:
            latest = found
        changes += found
    # The bump is advice for the step from the latest version, in both directions whatever the mode.
    bump = suggested_bump(latest)
    compatible = not any(c.breaking for c in changes)
    return CompatibilityReport(mode=mode, compatible=compatible, suggested_bump=bump, changes=changes,
                               verdict=_verdict(mode, changes, frames), work=work)
