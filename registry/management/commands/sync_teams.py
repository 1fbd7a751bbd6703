import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry import teamsync
from registry.models import RegistryError


class Command(BaseCommand):
    help = ("Make the registry's teams, members and team channels match a teams file (YAML, docs/teams.md). "
            "Idempotent: a second run changes nothing. Without --prune nothing is removed.")
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("file", help="The teams file, e.g. teams.yaml ('-' reads standard input).")
        parser.add_argument("--dry-run", action="store_true", help="Print the changes and write nothing.")
        parser.add_argument("--prune", action="store_true",
                            help="The file is the whole truth: remove the teams it leaves out, and the members and "
                                 "channels a team's lists leave out.")
        parser.add_argument("--reason", default="",
                            help="Why (kept in the audit log); needed to remove a team that owns or consumes "
                                 "datasets, or a member who is the named owner of datasets.")

    def handle(self, *args, file, dry_run, prune, reason, **options):
        text = (options.get("stdin") or sys.stdin).read() if file == "-" else self._read(file)
        label = f"manage.py sync_teams {Path(file).name if file != '-' else '(stdin)'}"
        try:
            specs = teamsync.parse_document(teamsync.load_yaml(text))
            plan = teamsync.sync(specs, by=label, prune=prune, reason=reason, dry_run=dry_run,
                                 progress=lambda done, total: self.stderr.write(f"applied {done} of {total} changes…"))
        except RegistryError as exc:
            raise CommandError(f"{file}: nothing applied:\n  " + "\n  ".join(exc.messages)) from None
        for line in plan.lines():
            self.stdout.write(line)
        if plan.users_created:
            verb = "would be created" if dry_run else "created"
            self.stdout.write(f"{len(plan.users_created)} user{'s' if len(plan.users_created) != 1 else ''} {verb} "
                              "with an unusable password (they sign in through single sign-on, or an admin sets "
                              "one): " + ", ".join(plan.users_created))
        n = len(plan.changes)
        summary = (f"{len(specs)} team{'s' if len(specs) != 1 else ''} in the file; "
                   + (f"{n} change{'s' if n != 1 else ''}" if n else "no changes: the registry matches the file"))
        if dry_run and n:
            summary += " (dry run: nothing written)"
        elif n:
            summary += " applied, each in the audit log"
        self.stdout.write(summary + ".")

    @staticmethod
    def _read(file: str) -> str:
        try:
            return Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read the teams file {file}: {exc}") from None
