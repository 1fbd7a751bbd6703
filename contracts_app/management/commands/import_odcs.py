"""``manage.py import_odcs FILE… [--into DIR]``: Open Data Contract Standard contracts -> the contracts tree."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from contracts_app.importing import ImportFailed, import_odcs_file


class Command(BaseCommand):
    help = (
        "Write each ODCS v3 contract into the contracts tree: schema.py (a Pandera class to edit) and "
        "schema.yaml for a table, schema.yaml for an event or api contract; through the same gates as "
        "any contract. What the contract format has no place for is reported with its path."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="ODCS YAML files")
        parser.add_argument("--into", type=Path, default=None,
                            help="the contracts root holding 'domains/' (default: settings.CONTRACTS_ROOT)")
        parser.add_argument("--id", dest="name", default=None, metavar="NAME",
                            help="the contract's dotted name (domain.sub….entity), where the file's id is "
                                 "missing or not one")
        parser.add_argument("--team", default=None, metavar="SLUG",
                            help="the owner team's slug, where the file's team.name is missing or not one")

    def handle(self, *args, files: list[Path], into: Path | None = None, name: str | None = None,
               team: str | None = None, **options) -> None:
        root = Path(into or settings.CONTRACTS_ROOT)
        if name is not None and len(files) > 1:
            raise CommandError("--id names one contract: give one FILE with it")
        failures = []
        for path in files:
            try:
                outcome = import_odcs_file(path, into=root, name=name, team=team)
            except ImportFailed as exc:
                failures.append(str(exc))
                self.stderr.write(self.style.ERROR(str(exc)))
                continue
            written = ", ".join(str(p.relative_to(root)) for p in outcome.written)
            self.stdout.write(f"{path}: {outcome.name} {outcome.version} ({outcome.schema_type}) -> "
                              f"{self.style.SUCCESS(written)}")
            for note in outcome.notes:
                self.stdout.write(self.style.WARNING(f"  not imported: {note}"))
        if failures:
            raise CommandError(f"{len(failures)} of {len(files)} file(s) could not be imported; nothing was written for them")
