from django.core.management.base import BaseCommand

from registry.ownership import attribute_jobs


class Command(BaseCommand):
    help = ("Decide every stored job's team again from the facts kept on it (ownership facet, dbt node) and the "
            "rules in force, e.g. after an upgrade that added job ownership. Prints the jobs whose team changes.")

    def handle(self, *args, **options):
        changes = attribute_jobs()
        for change in changes:
            self.stdout.write(f"{change.job}: {change.before or 'nobody'} -> {change.after or 'nobody'} ({change.detail})")
        self.stdout.write(f"{len(changes)} job{'' if len(changes) == 1 else 's'} changed team.")
