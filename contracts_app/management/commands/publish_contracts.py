"""Publish every contract (and integration spec) in the authoring tree, or one.

    python manage.py publish_contracts [--root DIR] [--specs DIR] [--dry-run] [--user NAME]
                                       [--contract NAME[@VERSION]]

With --user, what that person may not publish (another team's contract) is
reported as `skipped (owned by <team>)`, not refused: a CI job run by one team
does not fail on the others' work. The first line says what happened: what was
published, which change requests were opened (with their links), what was skipped.

Exit status, for CI:
    0  done: everything the user may publish is published or unchanged (the rest skipped)
    1  refused: something the user may publish was refused (a gate, changed content
       under a published version, a bad path) or could not be uploaded (re-run to retry)
    2  waiting on a request: a breaking change was not published (nothing else failed); it
       opened a change request that waits for the consumer teams, or waits behind an
       unfinished one
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from packaging.version import InvalidVersion, Version

from contracts_app.gates import check_location, discover_contract_documents
from contracts_app.models import ContentChanged, Contract
from contracts_app.publishing import (
    BREAKING,
    FORBIDDEN,
    PUBLISHED,
    REFUSED,
    UNCHANGED,
    PublishOutcome,
    publish_document,
)
from contracts_app.specs import InvalidSpec, record_spec, spec_errors
from contracts_app.store import store_from_settings
from contracts_app.yamlio import ContractYamlError, load_yaml

EXIT_DONE, EXIT_REFUSED, EXIT_BREAKING = 0, 1, 2
SKIPPED = "skipped"  # another team's contract, for a --user who may not publish it


def parse_contract_option(value: str) -> tuple[str, str | None]:
    """`NAME` or `NAME@VERSION` of --contract."""
    name, _, version = value.strip().partition("@")
    if not name or (version == "" and "@" in value):
        raise CommandError(f"--contract {value!r}: name a contract, optionally with @VERSION (e.g. retail.sales.orders@2.0)")
    return name, version or None


def _identity_of(document) -> tuple[str, str]:
    schema = document.get("schema") if isinstance(document, dict) else None
    schema = schema if isinstance(schema, dict) else {}
    return str(schema.get("name", "")), str(schema.get("version", ""))


def owner_slug_of(name: str, document) -> str:
    """The team whose contract it is: the recorded contract's owner team, else the one its document names."""
    contract = Contract.objects.filter(name=name).select_related("owner_team").first()
    if contract is not None and contract.owner_team_id:
        return contract.owner_team.slug
    schema = document.get("schema") if isinstance(document, dict) else None
    return str((schema or {}).get("owner") or "no team")


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
        parser.add_argument("--user", default=None, help="Username recorded as the publisher (default: system); "
                                                         "other teams' contracts are skipped.")
        parser.add_argument("--contract", default=None, metavar="NAME[@VERSION]",
                            help="Publish only this contract (every version in the tree, or the one named).")

    def handle(self, *args, root: Path | None, specs: Path | None, dry_run: bool, user: str | None,
               contract: str | None = None, **options):
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
        if contract:
            wanted, wanted_version = parse_contract_option(contract)
            documents = [d for d in documents if _identity_of(d[1])[0] == wanted
                         and (wanted_version is None or _identity_of(d[1])[1] == wanted_version)]
            if not documents:
                raise CommandError(f"no contract document {contract} under {root / 'domains'}")
        outcomes: list[PublishOutcome] = []
        skipped_from: dict[int, str] = {}
        for path, document, text, problems in documents:
            rel = path.relative_to(root)
            if problems:
                schema = document.get("schema", {}) if isinstance(document, dict) else {}
                outcome = PublishOutcome(str(schema.get("name", rel)), str(schema.get("version", "?")), REFUSED,
                                         f"{rel}: the path does not match the document", errors=problems)
            else:
                outcome = publish_document(document, by=by, yaml_text=text, dry_run=dry_run, store=store)
                if by is not None and outcome.status == REFUSED and outcome.code == FORBIDDEN:
                    # Another team's contract: not this user's to publish, and not a failure of theirs.
                    skipped_from[len(outcomes)] = owner_slug_of(outcome.name, document)
            outcomes.append(outcome)
        # What happened first; then each document; the specs; the tally.
        self.stdout.write(self._headline(outcomes, skipped_from, dry_run))
        self.stdout.write(f"{verb} {len(documents)} contract document(s) from {root} to {store.describe()}")
        for index, outcome in enumerate(outcomes):
            self._report(index + 1, len(outcomes), outcome, skipped_from.get(index))
        spec_counts = self._publish_specs(specs_root, by=by, dry_run=dry_run, store=store) if not contract else \
            {"published": 0, "unchanged": 0, "refused": 0}
        self._summary(outcomes, spec_counts, dry_run, skipped=len(skipped_from))
        mine = [o for i, o in enumerate(outcomes) if i not in skipped_from]
        failed = any(o.status == REFUSED or o.upload_error for o in mine) or spec_counts["refused"]
        if failed:
            sys.exit(EXIT_REFUSED)
        if any(o.status == BREAKING for o in mine):
            sys.exit(EXIT_BREAKING)

    def _headline(self, outcomes: list[PublishOutcome], skipped_from: dict[int, str], dry_run: bool) -> str:
        """One sentence: what was published, which requests were opened (with links), what was skipped."""
        mine = [o for i, o in enumerate(outcomes) if i not in skipped_from]
        published = [f"{o.name} {o.version}" for o in mine if o.status == PUBLISHED]
        parts = []
        if published:
            parts.append(("Would publish " if dry_run else "Published ") + ", ".join(published))
        for o in mine:
            if o.status != BREAKING:
                continue
            request = o.change_request
            if request is None:
                parts.append(f"{o.name} {o.version} is breaking: publishing it would open a change request"
                             if dry_run else f"{o.name} {o.version} is breaking and waits")
            else:
                link = settings.SITE_URL.rstrip("/") + request.get_absolute_url()
                verb = "already waits in change request" if "already waits" in o.message else "opened change request"
                parts.append(f"{o.name} {o.version} {verb} #{request.pk}: {link}")
        refused = [f"{o.name} {o.version}" for o in mine if o.status == REFUSED]
        if refused:
            parts.append(f"refused {', '.join(refused)}")
        uploads = [f"{o.name} {o.version}" for o in mine if o.upload_error]
        if uploads:
            parts.append(f"upload failed for {', '.join(uploads)} (re-run to retry)")
        unchanged = sum(o.status == UNCHANGED for o in mine)
        if unchanged:
            parts.append(f"{unchanged} unchanged")
        if skipped_from:
            teams = sorted(set(skipped_from.values()))
            parts.append(f"skipped {len(skipped_from)} owned by other teams ({', '.join(teams)})")
        if not parts:
            return "Nothing to publish."
        sentence = "; ".join(parts)
        return sentence[0].upper() + sentence[1:] + "."

    def _report(self, index: int, total: int, outcome: PublishOutcome, skipped_owner: str | None = None) -> None:
        if skipped_owner is not None:
            self.stdout.write(f"[{index}/{total}] {'skipped':<13} {outcome.name} {outcome.version} "
                              f"(owned by {skipped_owner})")
            return
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

    def _summary(self, outcomes: list[PublishOutcome], specs: dict[str, int], dry_run: bool, skipped: int = 0) -> None:
        tally = {status: sum(o.status == status for o in outcomes) for status in (PUBLISHED, UNCHANGED, REFUSED, BREAKING)}
        uploads_failed = sum(bool(o.upload_error) for o in outcomes)
        head = "Dry run: would publish" if dry_run else "Published"
        self.stdout.write(
            f"{head} {tally[PUBLISHED]}, unchanged {tally[UNCHANGED]}, refused {tally[REFUSED] - skipped}, "
            f"breaking {tally[BREAKING]}, upload failed {uploads_failed}"
            + (f", skipped {skipped} (other teams')" if skipped else "") + "; "
            f"specs published {specs['published']}, unchanged {specs['unchanged']}, refused {specs['refused']}."
        )
