"""``manage.py validate_contracts [--root DIR]``: run the publish gates on every contract document."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from contracts_app.gates import TemplateError, load_templates, validate_tree


class Command(BaseCommand):
    help = (
        "Validate every <root>/domains/**/v*/schema.yaml: its schema_type template, then the canonical-dtype "
        "gate. Reports every problem of every document, then exits non-zero if there were any."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--root", type=Path, default=None,
            help="the contracts root holding 'domains/' (default: settings.CONTRACTS_ROOT)",
        )

    def handle(self, *args, root: Path | None = None, **options) -> None:
        root = Path(root or settings.CONTRACTS_ROOT)
        verbosity = options.get("verbosity", 1)
        try:
            templates = load_templates()
        except TemplateError as exc:
            raise CommandError(str(exc)) from None
        if verbosity:
            listed = ", ".join(f"{t.schema_type} {t.version}" for t in templates.values())
            self.stdout.write(f"validating contracts under {root} (templates: {listed})")
        try:
            results = validate_tree(root)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from None

        failed = 0
        for index, (item, problems) in enumerate(results, start=1):
            label = f"[{index}/{len(results)}] {item.relative}"
            if item.name:
                version = (item.document.get("schema") or {}).get("version")
                label += f"  {item.name} {version}"
            if problems:
                failed += 1
                self.stderr.write(self.style.ERROR(f"{label}  {len(problems)} problem(s)"))
                for problem in problems:
                    self.stderr.write(f"    {problem.where}: {problem.message}")
            elif verbosity:
                self.stdout.write(f"{label}  {self.style.SUCCESS('ok')}")
        if verbosity:
            self.stdout.write(f"{len(results)} documents: {len(results) - failed} ok, {failed} refused")
        if failed:
            raise CommandError(f"{failed} of {len(results)} contract documents fail the gates (details above)")
