from django.core.management.base import BaseCommand

from registry.demo import load_core_demo
from registry.hooks import demo_steps


class Command(BaseCommand):
    help = "Load the demo: a fictional retailer and a lab domain (idempotent). Prints the demo users."

    def handle(self, *args, **options):
        self.stdout.write("Loading demo teams, users and datasets…")
        summary = load_core_demo()
        for label, step in demo_steps():
            self.stdout.write(f"Loading demo {label}…")
            step(stdout=self.stdout)
        self.stdout.write(self.style.SUCCESS("\nDemo loaded. Log in as any of these users:"))
        for username, teams in summary["users"]:
            self.stdout.write(f"  {username:<8} password: {summary['password']:<16} ({teams})")
