"""Command-line front end shared by `python -m registry_client.compat` and `manage.py check_compat`.

Exit codes: 0 compatible under the mode, 1 breaking, 2 an input is invalid, 3 the checker could
not decide (it failed, or cannot read a schema; the message names the files and the path).
A change a budget decided is breaking (exit 1), and every output format says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

import jsonschema

from registry_client.safeyaml import YamlInputError, load_yaml

from . import (
    MODES,
    CompatibilityReport,
    check_compatibility,
    ecma,
    is_contract_document,
    to_json_schema,
    version_bump_problem,
)
from .documents import DocumentError, document_version

EXIT_COMPATIBLE, EXIT_BREAKING, EXIT_INVALID, EXIT_ERROR = 0, 1, 2, 3


class InputError(ValueError):
    """An input file that cannot be compared; the message says which file and what is wrong."""


def load_document(path: str | Path):
    """Read a JSON or YAML file holding a JSON Schema or a contract document, and check it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None
    try:
        if path.suffix.lower() == ".json":
            document = json.loads(text)
        else:
            document = load_yaml(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except YamlInputError as exc:
        raise InputError(f"{path}: {exc}") from None
    if not isinstance(document, dict | bool):
        raise InputError(f"{path}: expected a JSON Schema or a contract document (a mapping), got {type(document).__name__}")
    try:
        schema = to_json_schema(document)
    except DocumentError as exc:
        raise InputError(f"{path}: {exc}") from None
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema, format_checker=ecma.format_checker(cls))  # patterns are ECMA-262
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        what = "the schema derived from the contract" if is_contract_document(document) else "the schema"
        raise InputError(f"{path}: {what} is not a valid JSON Schema at {where}: {exc.message}") from None
    return document


def _work_line(report: CompatibilityReport) -> str:
    """What the budgets allowed and what was spent, so a reader can size them."""
    w = report.work
    if not w:
        return ""

    def of(spent, budget, what):
        return f"{what} {spent} of {budget} steps" if budget else f"{what} {spent} steps (unbounded)"

    search = (of(w["witness_steps"], w["witness_budget"], "witness search") if w.get("witness_budget")
              else "witness search off")
    stopped = {"steps": " (stopped by its budget)", "time guard": " (stopped by the time guard)"}.get(w.get("witness_stopped_by"), "")
    return f"work: {of(w['compare_steps'], w['compare_budget'], 'compare')}; {search}{stopped}"


def _undecided_line(report: CompatibilityReport) -> str | None:
    count = len(report.undecided)
    if not count:
        return None
    return (f"{count} change{'s' if count > 1 else ''} decided by a budget, not by the schemas: counted as breaking "
            "both ways (raise --budget, or $REGISTRY_COMPAT_BUDGET, to decide them)")


def render_text(report: CompatibilityReport, version_problem: str | None = None) -> str:
    lines = [f"mode {report.mode}: {'compatible' if report.compatible else 'BREAKING'}; suggested bump: {report.suggested_bump}"]
    if not report.changes:
        lines.append("no changes")
    for c in report.changes:
        directions = [d for d, on in (("backward", c.breaks_backward), ("forward", c.breaks_forward)) if on]
        marker = "!" if c.breaking else " "
        breaks = "breaks " + " and ".join(directions) if directions else "safe"
        against = f" [against {c.against}]" if c.against else ""
        if c.summary:  # a dataframe contract: said of its columns, not of the row schema's paths
            lines.append(f"{marker} {c.summary}  ({breaks}){against}")
        else:
            lines.append(f"{marker} {c.path or '/'}  {c.kind}  ({breaks}){against}: {c.reason}")
        if c.proof == "proven":
            lines.append(f"    proven {c.witness_direction}: {json.dumps(c.witness)} is valid under the "
                         f"{'old' if c.witness_direction == 'backward' else 'new'} version and fails the "
                         f"{'new' if c.witness_direction == 'backward' else 'old'} one")
        elif c.proof == "assumed":
            lines.append("    assumed: the checker could not prove this safe and found no witness document")
        elif c.proof == "undecided":
            lines.append("    undecided: a budget stopped the checker here; neither proven nor assumed, counted as breaking")
        if c.decided_by_budget and c.proof == "proven":
            lines.append("    (decided by a budget: the witness shows a break here, the checker did not reason it out)")
    lines.append(report.verdict)
    if _undecided_line(report):
        lines.append(_undecided_line(report))
    if report.work:
        lines.append(_work_line(report))
    if version_problem:
        lines.append(f"version: {version_problem}")
    return "\n".join(lines) + "\n"


def render_markdown(report: CompatibilityReport, version_problem: str | None = None) -> str:
    """The report as a block fit for a pull-request comment: proven, assumed and budget-decided
    breaks each under their own heading."""
    verdict = "Compatible" if report.compatible else "Breaking"
    lines = [f"**{verdict}** under {report.mode}; suggested bump: **{report.suggested_bump}**", "", report.verdict]
    if version_problem:
        lines += ["", f"> :warning: version: {version_problem}"]
    groups = (
        ("Proven breaks", "a document valid under one version fails the other",
         lambda c: c.proof == "proven" and not c.decided_by_budget),
        ("Assumed breaks", "the checker could not prove these safe and found no document that shows the break",
         lambda c: c.proof == "assumed"),
        ("Decided by a budget", "the checker stopped before deciding these; they count as breaking both ways",
         lambda c: c.decided_by_budget),
    )
    for title, meaning, belongs in groups:
        rows = [c for c in report.changes if c.breaking and belongs(c)]
        if not rows:
            continue
        frames = all(c.summary for c in rows)
        head = "| column | change | breaks |" if frames else "| change | kind | breaks | why |"
        lines += ["", f"#### {title} ({len(rows)})", f"_{meaning}_", "", head, "|---|---|---|" if frames else "|---|---|---|---|"]
        for c in rows:
            directions = " + ".join(d for d, on in (("backward", c.breaks_backward), ("forward", c.breaks_forward)) if on)
            against = f" (against {c.against})" if c.against else ""
            if frames:
                lines.append(f"| {f'`{c.column}`' if c.column else 'the frame'} | {c.summary.replace('|', '∣')}{against} "
                             f"| {directions} |")
            else:
                lines.append(f"| `{c.path or '/'}` | {c.kind} | {directions} | {c.reason.replace('|', '∣')}{against} |")
    others = [c for c in report.changes if not c.breaking]
    if others:
        lines += ["", f"Changes this mode allows: {len(others)}"]
    if _undecided_line(report):
        lines += ["", _undecided_line(report)]
    if report.work:
        lines += ["", f"<sub>{_work_line(report)}</sub>"]
    return "\n".join(lines) + "\n"


def run(old_path: str, new_path: str, mode: str = "BACKWARD", fmt: str = "text",
        stdout: TextIO | None = None, stderr: TextIO | None = None, budget: int | None = None,
        witness_budget: int | None = None, time_guard: float | None = None) -> int:
    stderr = stderr or sys.stderr
    try:
        return _run(old_path, new_path, mode, fmt, stdout or sys.stdout, stderr, budget, witness_budget, time_guard)
    except Exception as exc:  # a failure is never a verdict
        stderr.write(f"error: the checker could not compare {old_path} and {new_path}: {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR


def _run(old_path: str, new_path: str, mode: str, fmt: str, stdout: TextIO, stderr: TextIO,
         budget: int | None, witness_budget: int | None = None, time_guard: float | None = None) -> int:
    mode = mode.upper()
    if mode not in MODES:
        stderr.write(f"error: unknown mode {mode!r}; expected one of {', '.join(MODES)}\n")
        return EXIT_INVALID
    try:
        old, new = load_document(old_path), load_document(new_path)
    except InputError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_INVALID
    report = check_compatibility([old], new, mode, budget=budget, witness_budget=witness_budget,
                                 time_guard_seconds=time_guard)
    problem = None
    old_version, new_version = document_version(old), document_version(new)
    if old_version and new_version:
        try:
            problem = version_bump_problem(old_version, new_version, report)
        except ValueError as exc:
            problem = str(exc)
    if fmt == "json":
        payload = report.to_dict()
        payload["version_problem"] = problem
        stdout.write(json.dumps(payload, indent=2) + "\n")
    elif fmt == "markdown":
        stdout.write(render_markdown(report, problem))
    else:
        stdout.write(render_text(report, problem))
    errors = [c for c in report.changes if c.kind == "checker_error"]
    if errors:
        for c in errors:
            stderr.write(f"error: the checker could not compare {old_path} and {new_path} at {c.path or '/'}: {c.reason}\n")
        return EXIT_ERROR
    return EXIT_COMPATIBLE if report.compatible else EXIT_BREAKING


def steps_argument(text: str) -> int:
    """argparse type of a budget: a whole number of steps (budgets were seconds once: say so)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of steps: budgets are counted in steps (whole numbers), "
            "not seconds; see docs/compat.md") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a budget cannot be negative")
    return value


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The budget flags, shared with `manage.py check_compat`."""
    parser.add_argument("--budget", type=steps_argument, default=None, metavar="STEPS",
                        help="compare budget in steps per comparison (default $REGISTRY_COMPAT_BUDGET, else 40000; "
                             "0: unbounded); what is not decided within it counts as breaking both ways")
    parser.add_argument("--witness-budget", type=steps_argument, default=None, metavar="STEPS", dest="witness_budget",
                        help="steps to look for witness documents per comparison (default "
                             "$REGISTRY_COMPAT_WITNESS_BUDGET, else 100000; 0: no search, every breaking change "
                             "is then 'assumed')")
    parser.add_argument("--time-guard", type=float, default=None, metavar="SECONDS", dest="time_guard",
                        help="last-resort wall-clock limit per comparison (default $REGISTRY_COMPAT_TIME_GUARD, "
                             "else 60; 0: none); the step budgets decide long before it")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m registry_client.compat",
                                     description="Compare two contract versions and say which change breaks whom.")
    parser.add_argument("old", help="the published version: a JSON Schema or contract document (.json, .yaml)")
    parser.add_argument("new", help="the proposed version")
    parser.add_argument("--mode", default="BACKWARD", help=f"one of {', '.join(MODES)} (default BACKWARD)")
    parser.add_argument("--format", dest="fmt", choices=("text", "json", "markdown"), default="text")
    add_budget_arguments(parser)
    args = parser.parse_args(argv)
    return run(args.old, args.new, args.mode, args.fmt, budget=args.budget, witness_budget=args.witness_budget,
               time_guard=args.time_guard)
