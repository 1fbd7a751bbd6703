"""``manage.py export_contracts [--root DIR] [--check]``: authored Pandera contracts -> schema.yaml.

``manage.py export_contracts --format odcs --out DIR``: every published version as an
Open Data Contract Standard contract (docs/odcs.md)."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from contracts_app.exporting import ExportError, ExportResult, export_tree


class Command(BaseCommand):
    help = (
        "Export every <root>/domains/**/v*/schema.py to the schema.yaml beside it. "
        "With --check, write nothing and fail if any YAML is stale or missing (for CI)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--root", type=Path, default=None,
            help="the contracts root holding 'domains/' (default: settings.CONTRACTS_ROOT)",
        )
        parser.add_argument("--check", action="store_true", help="write nothing; exit non-zero if anything is stale")
        parser.add_argument(
            "--format", choices=["yaml", "odcs"], default="yaml",
            help="yaml (default): the tree's schema.py files to schema.yaml; odcs: every published version "
                 "as an ODCS contract, into --out",
        )
        parser.add_argument("--out", type=Path, default=None, help="with --format odcs: the folder to write into")

    def handle(self, *args, root: Path | None = None, check: bool = False, **options) -> None:
        if options.get("format") == "odcs":
            self.export_odcs(options.get("out"), verbosity=options.get("verbosity", 1))
            return
        if options.get("out"):
            raise CommandError("--out goes with --format odcs (the tree's YAML is written beside each schema.py)")
        root = Path(root or settings.CONTRACTS_ROOT)
        verbosity = options.get("verbosity", 1)
        mode = "checking" if check else "exporting"
        if verbosity:
            self.stdout.write(f"{mode} contracts under {root}")

        def progress(index: int, total: int, result: ExportResult) -> None:
            for warning in result.warnings:
                self.stderr.write(self.style.WARNING(f"warning: {result.relative}: {warning}"))
            if result.status == "error":
                self.stderr.write(self.style.ERROR(f"[{index}/{total}] {result.relative}: {result.error}"))
                return
            if verbosity:
                style = {"written": self.style.SUCCESS, "stale": self.style.ERROR, "missing": self.style.ERROR}.get(
                    result.status, str
                )
                self.stdout.write(
                    f"[{index}/{total}] {result.relative}  {result.name} {result.version}  {style(result.status)}"
                )
            self.stdout.flush()

        try:
            report = export_tree(root, check=check, progress=progress)
        except ExportError as exc:
            raise CommandError(str(exc)) from None

        for orphan in report.orphans:
            self.stderr.write(self.style.WARNING(
                f"orphan: {orphan} was generated but its schema.py is gone; delete it or restore the source"
            ))
        errors = report.with_status("error")
        outdated = report.with_status("stale", "missing")
        if verbosity:
            counts = {s: len(report.with_status(s)) for s in ("written", "unchanged", "stale", "missing", "error")}
            summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            self.stdout.write(f"{len(report.results)} contracts: {summary or 'none found'}")

        failures = []
        if errors:
            failures.append(
                f"{len(errors)} contract(s) could not be exported:\n"
                + "\n".join(f"  {r.relative}: {r.error}" for r in errors)
            )
        if outdated:
            failures.append(
                f"{len(outdated)} schema.yaml file(s) are stale or missing; run `manage.py export_contracts` "
                "and commit the result:\n"
                + "\n".join(f"  {r.status}: {r.target.relative_to(report.root)}" for r in outdated)
            )
        if check and report.orphans:
            failures.append(
                f"{len(report.orphans)} generated schema.yaml file(s) have no schema.py:\n"
                + "\n".join(f"  {o}" for o in report.orphans)
            )
        if failures:
            raise CommandError("\n".join(failures))

    def export_odcs(self, out: Path | None, *, verbosity: int) -> None:
        """One `<name>-<version>.odcs.yaml` per published version; each file written whole or not at all."""
        from contracts_app.models import ContractVersion
        from contracts_app.odcs import odcs_yaml

        if out is None:
            raise CommandError("--format odcs needs --out DIR, the folder to write the contracts into")
        out.mkdir(parents=True, exist_ok=True)
        versions = ContractVersion.objects.select_related("contract").order_by("contract__name", "published_at", "id")
        count = 0
        for version in versions:
            target = out / f"{version.contract.name}-{version.version}.odcs.yaml"
            partial = target.with_name(f".{target.name}.partial")
            partial.write_text(odcs_yaml(version), encoding="utf-8")
            os.replace(partial, target)
            count += 1
            if verbosity:
                self.stdout.write(f"{version.contract.name} {version.version} -> {target}")
        if verbosity:
            self.stdout.write(f"{count} published version(s) exported as ODCS to {out}")
