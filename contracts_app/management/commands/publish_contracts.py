"""Publish every contract (and integration spec) in the authoring tree.

    python manage.py publish_contracts [--root DIR] [--specs DIR] [--dry-run] [--user NAME]

Exit status, for CI:
    0  everything published or unchanged
    1  something was refused (a gate, changed content under a published version,
       a bad path) or could not be uploaded (re-run to retry the upload)
    2  a breaking change was not published (nothing else failed): it opened a change request
       that waits for the consumer teams, or waits behind an unfinished one
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from packaging.version import InvalidVersion, Version

from contracts_app.gates import check_location, discover_contract_documents
from contracts_app.models import ContentChanged
from contracts_app.publishing import (
    BREAKING,
    PUBLISHED,
    REFUSED,
    UNCHANGED,
    PublishOutcome,
    publish_document,
)
from contracts_app.specs import InvalidSpec, record_spec, spec_errors
from contracts_app.store import store_from_settings
from contracts_app.yamlio import ContractYamlError, load_yaml

EXIT_REFUSED, EXIT_BREAKING = 1, 2


def discover_contracts(root: Path) -> list[tuple[Path, dict | None, str, list[str]]]:
    """(path, document, YAML text, problems with its file or path) for every
    schema.yaml under root/domains, in publishing order: by name, then
    semantic version, so 1.0 is published before 2.0 is checked against it."""
    found = []
    for item in discover_contract_documents(root):
        problems = [f"{p.where}: {p.message}" for p in item.problems]
        if item.document is not None:
            problems += [f"{p.where}: {p.message}" for p in check_location(item.document, item.path, root)]
        found.append((item.path, item.document, item.path.read_text(), problems))

    def order(entry):
        document = entry[1]
        schema = document.get("schema") if isinstance(document, dict) else None
        schema = schema if isinstance(schema, dict) else {}
        try:
            version = Version(str(schema.get("version")))
        except InvalidVersion:
            version = Version("0")
        return (str(schema.get("name")), version, str(entry[0]))

    return sorted(found, key=order)


class Command(BaseCommand):
    help = "Gate, check and publish the contracts under --root, then their integration specs."

    def add_arguments(self, parser):
        parser.add_argument("--root", type=Path, default=None, help="Contracts root holding domains/ (default: CONTRACTS_ROOT).")
        parser.add_argument("--specs", type=Path, default=None,
                            help="Integration specs root (default: <root>/../integrations/source_specs).")
        parser.add_argument("--dry-run", action="store_true", help="Run the gates and the checker; record and upload nothing.")
        parser.add_argument("--user", default=None, help="Username recorded as the publisher (default: system).")

    def handle(self, *args, root: Path | None, specs: Path | None, dry_run: bool, user: str | None, **options):
        root = (root or Path(settings.CONTRACTS_ROOT)).resolve()
        if not (root / "domains").is_dir():
            raise CommandError(f"{root} has no domains/ folder: pass --root pointing at the contracts tree")
        specs_root = (specs or root.parent / "integrations" / "source_specs").resolve()
        by = None
        if user:
            by = get_user_model().objects.filter(username=user).first()
            if by is None:
                raise CommandError(f"no user named {user!r}")
        store = store_from_settings()
        verb = "Checking" if dry_run else "Publishing"
        documents = discover_contracts(root)
        self.stdout.write(f"{verb} {len(documents)} contract document(s) from {root} to {store.describe()}")
        outcomes: list[PublishOutcome] = []
        for index, (path, document, text, problems) in enumerate(documents, 1):
            rel = path.relative_to(root)
            if problems:
                schema = document.get("schema", {}) if isinstance(document, dict) else {}
                outcome = PublishOutcome(str(schema.get("name", rel)), str(schema.get("version", "?")), REFUSED,
                                         f"{rel}: the path does not match the document", errors=problems)
            else:
                outcome = publish_document(document, by=by, yaml_text=text, dry_run=dry_run, store=store)
            outcomes.append(outcome)
            self._report(index, len(documents), outcome)
        spec_counts = self._publish_specs(specs_root, by=by, dry_run=dry_run, store=store)
        self._summary(outcomes, spec_counts, dry_run)
        failed = any(o.status == REFUSED or o.upload_error for o in outcomes) or spec_counts["refused"]
        if failed:
            sys.exit(EXIT_REFUSED)
        if any(o.status == BREAKING for o in outcomes):
            sys.exit(EXIT_BREAKING)

    def _report(self, index: int, total: int, outcome: PublishOutcome) -> None:
        style = {PUBLISHED: self.style.SUCCESS, UNCHANGED: str, REFUSED: self.style.ERROR, BREAKING: self.style.WARNING}[outcome.status]
        label = "would publish" if outcome.dry_run and outcome.status == PUBLISHED else outcome.status
        self.stdout.write(f"[{index}/{total}] " + style(f"{label:<13}") + f" {outcome.name} {outcome.version}")
        for error in outcome.errors:
            self.stdout.write(f"    - {error}")
        if outcome.status in (REFUSED, BREAKING):
            self.stdout.write(f"    {outcome.message}")
        if outcome.report and outcome.status == BREAKING:
            for change in outcome.report.changes:
                ways = "/".join(w for w, on in (("backward", change.breaks_backward), ("forward", change.breaks_forward)) if on)
                what = change.summary or f"{change.path or '/'} {change.kind}"  # a dataframe's: said of its columns
                self.stdout.write(f"    * {what} (breaks {ways or 'nothing'})" + ("" if change.summary else f": {change.reason}"))
        if outcome.upload_error:
            self.stdout.write(self.style.ERROR(f"    upload failed (recorded; re-run to retry): {outcome.upload_error}"))

    def _publish_specs(self, specs_root: Path, *, by, dry_run: bool, store) -> dict[str, int]:
        counts = {"published": 0, "unchanged": 0, "refused": 0}
        if not specs_root.is_dir():
            return counts
        paths = sorted(specs_root.rglob("spec.yaml"))
        self.stdout.write(f"{'Checking' if dry_run else 'Publishing'} {len(paths)} integration spec(s) from {specs_root}")
        for path in paths:
            rel = path.relative_to(specs_root)
            text = path.read_text()
            try:
                document = load_yaml(text)
                if dry_run:
                    errors = spec_errors(document)
                    if errors:
                        raise InvalidSpec(str(rel), errors)
                    self.stdout.write(f"  spec ok        {rel}")
                    continue
                spec, created = record_spec(document, by=by, yaml_text=text, store=store)
            except (ContractYamlError, InvalidSpec, ContentChanged) as exc:
                counts["refused"] += 1
                message = " ".join(getattr(exc, "messages", [str(exc)]))
                self.stdout.write(self.style.ERROR("  spec refused   ") + f"{rel}: {message}")
                continue
            spec.refresh_from_db(fields=["uploaded_at"])
            if spec.uploaded_at is None:
                counts["refused"] += 1
                self.stdout.write(self.style.ERROR("  spec upload failed ") + f"{rel} (recorded; re-run to retry)")
                continue
            counts["published" if created else "unchanged"] += 1
            self.stdout.write(f"  spec {'published' if created else 'unchanged':<9} {rel}")
        return counts

    def _summary(self, outcomes: list[PublishOutcome], specs: dict[str, int], dry_run: bool) -> None:
        tally = {status: sum(o.status == status for o in outcomes) for status in (PUBLISHED, UNCHANGED, REFUSED, BREAKING)}
        uploads_failed = sum(bool(o.upload_error) for o in outcomes)
        head = "Dry run: would publish" if dry_run else "Published"
        self.stdout.write(
            f"{head} {tally[PUBLISHED]}, unchanged {tally[UNCHANGED]}, refused {tally[REFUSED]}, "
            f"breaking {tally[BREAKING]}, upload failed {uploads_failed}; "
            f"specs published {specs['published']}, unchanged {specs['unchanged']}, refused {specs['refused']}."
        )
