"""``manage.py draft_contracts [--dataset ID…] [--dry-run] [--write-tree [DIR]]``: draft contracts
for owned datasets that have an observed schema and no contract."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from registry_client.warehouse_types import DIALECTS

from contracts_app.drafting import (
    CannotDraft,
    datasets_to_draft,
    draft_from_observed_schema,
    write_into_tree,
)
from registry.models import Dataset


class Command(BaseCommand):
    help = ("Draft a contract for every owned dataset with an observed schema (lineage's schema facet) and no "
            "contract, into its owner team's review queue. A type the table cannot map is named, never guessed.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", type=int, action="append", default=None, metavar="ID",
                            help="only these datasets (repeatable)")
        parser.add_argument("--dialect", choices=DIALECTS, default=None,
                            help="the warehouse's type dialect (default: from each dataset's namespace)")
        parser.add_argument("--dry-run", action="store_true", help="print what would be drafted; change nothing")
        parser.add_argument("--write-tree", nargs="?", const="", default=None, metavar="DIR",
                            help="also write each draft into the contracts tree (default settings.CONTRACTS_ROOT)")

    def handle(self, *args, dataset: list[int] | None, dialect: str | None, dry_run: bool, write_tree: str | None,
               **options) -> None:
        tree = None if write_tree is None else Path(write_tree or settings.CONTRACTS_ROOT)
        if dataset:
            targets = list(Dataset.objects.filter(pk__in=dataset).select_related("owner_team"))
            missing = sorted(set(dataset) - {d.pk for d in targets})
            if missing:
                raise CommandError(f"no dataset with id {', '.join(map(str, missing))}")
        else:
            targets = datasets_to_draft()
        failures = []
        for n, target in enumerate(targets, 1):
            try:
                with transaction.atomic():
                    change = draft_from_observed_schema(target, dialect=dialect, dry_run=dry_run)
            except CannotDraft as exc:
                failures.append(" ".join(exc.messages))
                self.stderr.write(self.style.ERROR(f"[{n}/{len(targets)}] {failures[-1]}"))
                continue
            self.stdout.write(f"[{n}/{len(targets)}] {'would: ' if dry_run else ''}{change}")
            if tree is not None and not dry_run:
                line = write_into_tree(change, tree)
                if line:
                    self.stdout.write(f"        tree {line}")
        if not targets:
            self.stdout.write("Nothing to draft: every owned dataset with an observed schema has a contract.")
        if failures:
            raise CommandError(f"{len(failures)} of {len(targets)} dataset(s) could not be drafted (above)")
