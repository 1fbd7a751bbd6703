"""python manage.py impact_preview FILE [--format text|json|markdown] [--verify]

What publishing FILE would do, opening nothing: the checker's verdicts, the suggested
version, and which consumer teams would have to acknowledge (and which are told they
are not affected), each team's verdict with its kind (proven broken, assumed affected, verified
safe, not affected). `--verify` EXPLAINs the affected teams' compiled SQL on a scratch schema
holding the proposed shape (PostgreSQL only; change_requests.verify). Exit 0 when nothing would wait, 1 when teams would have to
acknowledge, 2 when the file is unreadable or fails the publish gates.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from change_requests.impact import PreviewError, as_markdown, preview
from contracts_app.yamlio import ContractYamlError, load_yaml


class Command(BaseCommand):
    help = ("Preview a proposed contract version: verdicts, suggested version, affected and unaffected teams, "
            "jobs and columns. Exit 0: nothing waits; 1: teams must acknowledge; 2: invalid input.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="the proposed contract document (.yaml or .json)")
        parser.add_argument("--format", dest="fmt", choices=("text", "json", "markdown"), default="text")
        parser.add_argument("--verify", action="store_true",
                            help="EXPLAIN each affected team's SQL on a scratch schema with the proposed shape "
                                 "(PostgreSQL; the schema is dropped afterwards)")

    def handle(self, *args, file: str, fmt: str, verify: bool = False, **options):
        try:
            document = load_yaml(Path(file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ContractYamlError) as exc:
            self.stderr.write(f"{file}: cannot read it as YAML or JSON: {exc}")
            sys.exit(2)
        try:
            answer = preview(document, verify=verify)
        except PreviewError as exc:
            self.stderr.write(f"{file}: {exc}:")
            for error in exc.errors:
                self.stderr.write(f"  - {error}")
            sys.exit(2)
        if fmt == "json":
            self.stdout.write(json.dumps(answer, indent=2, default=str))
        elif fmt == "markdown":
            self.stdout.write(as_markdown(answer))
        else:
            self.stdout.write(_text(answer))
        if answer["affected"]:
            sys.exit(1)


def _text(answer: dict) -> str:
    lines = [f"{answer['contract']} {answer['proposed_version']}: "
             + ("compatible" if answer["compatible"] else f"breaking under {answer['mode']}")
             + (f"; suggested version {answer['suggested_version']}" if answer.get("suggested_version") else "")]
    if answer.get("version_problem"):
        lines.append(f"  ! {answer['version_problem']}")
    for change in answer["changes"]:
        if change.get("breaking"):
            # a dataframe contract's change in the words of its columns; others by property path
            lines.append(f"  {change['summary']}" if change.get("summary") else f"  {change['path']}: {change['reason']}")
    touched = answer.get("touched_columns")
    lines.append("touched: " + ("every column" if touched is None else ", ".join(touched) or "nothing"))
    for team in answer["affected"]:
        lines.append(f"must acknowledge: {team['team']} ({team['why']})" + _verdict(team))
    for team in answer["not_affected"]:
        lines.append(f"not affected: {team['team']} ({team['why']})" + _verdict(team))
    verification = answer.get("verification")
    if verification:
        lines.append(f"verified: {verification['consumers']} consumer job(s) EXPLAINed in {verification['seconds']} s"
                     if verification.get("available") else f"not verified: {verification['reason']}")
    for reader in answer["unregistered_readers"]:
        lines.append(f"unregistered reader: {reader['job']} ({reader['team'] or 'team unknown'}) of {reader['dataset']}")
    return "\n".join(lines)


def _verdict(team: dict) -> str:
    verdict = team.get("verdict") or {}
    kind = verdict.get("kind", "")
    if kind == "proven_broken":
        return f"\n    proven broken ({verdict.get('by')}): {verdict.get('job')}: {verdict.get('error')}"
    if kind == "assumed_affected":
        return f"\n    assumed affected: {verdict.get('reason')}"
    if kind == "verified_safe":
        return f"\n    verified safe: {verdict.get('reason')}"
    return ""
