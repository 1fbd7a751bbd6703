"""``manage.py import_dbt --manifest target/manifest.json [--catalog target/catalog.json]``:
datasets, owner teams, declared consumers and draft contracts from a dbt project's artefacts."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from registry_client.warehouse_types import DIALECTS

from contracts_app.dbt import DbtArtefactError, import_project, load_json, read_project
from registry.models import RegistryError


class Command(BaseCommand):
    help = (
        "Import a dbt project: a dataset for every model, seed, snapshot and source (named as dbt-ol names "
        "them), its owner team (meta.owner, else its group's owner), the teams whose models read it across "
        "teams as consumers, and a draft contract from the catalog's columns, dbt tests and enforced model "
        "contracts, in the owner team's review queue. Re-running shows what changed and leaves alone what "
        "a person changed since."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--manifest", type=Path, required=True, help="dbt's target/manifest.json")
        parser.add_argument("--catalog", type=Path, default=None,
                            help="dbt's target/catalog.json (`dbt docs generate`): the columns' types")
        parser.add_argument("--namespace", default=None,
                            help="the datasets' OpenLineage namespace as dbt-ol names it, e.g. postgres://host:5432 "
                                 "(default: the one lineage already has the project's datasets in)")
        parser.add_argument("--dialect", choices=DIALECTS, default=None,
                            help="the warehouse's type dialect (default: from the manifest's adapter_type)")
        parser.add_argument("--dry-run", action="store_true", help="print what would change; change nothing")
        parser.add_argument("--write-tree", nargs="?", const="", default=None, metavar="DIR",
                            help="also write each pending draft into the contracts tree (schema.py and schema.yaml "
                                 "under domains/…/vX_Y/), default settings.CONTRACTS_ROOT")

    def handle(self, *args, manifest: Path, catalog: Path | None, namespace: str | None, dialect: str | None,
               dry_run: bool, write_tree: str | None, **options) -> None:
        tree = None if write_tree is None else Path(write_tree or settings.CONTRACTS_ROOT)
        try:
            project = read_project(load_json(manifest, "manifest"), load_json(catalog, "catalog") if catalog else None)
            self.stdout.write(f"{manifest}: dbt project {project.name or '?'} ({project.adapter_type}), "
                              f"{len(project.nodes)} models, seeds, snapshots and sources")
            report = import_project(project, namespace=namespace, dialect=dialect, dry_run=dry_run,
                                    write_tree=tree, progress=lambda line: self.stderr.write(f"  {line}"))
        except (DbtArtefactError, RegistryError) as exc:
            raise CommandError(" ".join(exc.messages)) from None
        verbose = options.get("verbosity", 1) > 1
        prefix = "would: " if dry_run else ""
        for line in report.lines:
            self.stdout.write(prefix + line)
        for line in report.notices:
            if verbose or not line.startswith("unchanged"):
                self.stdout.write(self.style.WARNING(line))
        summary = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in sorted(report.counts.items())) or "nothing changed"
        self.stdout.write(self.style.SUCCESS(f"{'dry run, nothing stored: ' if dry_run else ''}{summary} "
                                             f"(namespace {report.namespace})"))
        for error in report.errors:
            self.stderr.write(self.style.ERROR(error))
        if report.errors:
            raise CommandError(f"{len(report.errors)} node(s) could not be drafted (above); the rest was "
                               f"{'checked' if dry_run else 'imported'}")
