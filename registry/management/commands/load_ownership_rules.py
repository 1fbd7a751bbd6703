from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry.models import RegistryError
from registry.ownership import save_ownership_rules


class Command(BaseCommand):
    help = ("Make a job ownership rules file (CODEOWNERS syntax: `models/finance/** @finance`, "
            "`ns:dbt_shop job:*.finance_* @finance`) the rules in force: a new version, audited, and every stored "
            "job's team decided again without a re-ingest. Prints the jobs whose team changes.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="The rules file; - reads standard input.")
        parser.add_argument("--dry-run", action="store_true", help="Only print which jobs would change team.")
        parser.add_argument("--note", default="", help="Why the rules change (kept with the version and audited).")

    def handle(self, *args, file, dry_run, note, **options):
        try:
            text = self.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"{file} is not UTF-8 text.") from None
        try:
            # The operator running this command acts as the governance admin.
            saved = save_ownership_rules(text, by=None, note=note or f"loaded from {file}", dry_run=dry_run)
        except RegistryError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for change in saved.reattributed:
            self.stdout.write(f"{change.job}: {change.before or 'nobody'} -> {change.after or 'nobody'}"
                              + (f" ({change.detail})" if change.detail else ""))
        n = len(saved.reattributed)
        jobs = f"{n} job{'' if n == 1 else 's'}"
        if dry_run:
            self.stdout.write(f"Dry run: {jobs} would change team; nothing stored.")
        elif saved.created:
            self.stdout.write(self.style.SUCCESS(f"Ownership rules version {saved.version} in force; {jobs} changed team."))
        else:
            self.stdout.write(f"Unchanged: the file is version {saved.version}, already in force.")
