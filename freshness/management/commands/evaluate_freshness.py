from __future__ import annotations

from django.core.management.base import BaseCommand

from freshness.constants import TransitionSource
from freshness.runner import run_forever
from freshness.scheduling import sweep


class Command(BaseCommand):
    help = ("Evaluate the freshness of every due dataset once (what the beat sweep does), "
            "or with --loop keep doing it at each deadline: the evaluator of a set-up without a broker.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--loop", action="store_true", help="Keep evaluating until interrupted.")

    def handle(self, *args, loop: bool = False, **options) -> None:
        if loop:
            self.stdout.write("Evaluating freshness at each deadline; Ctrl-C to stop.")
            try:
                run_forever(echo=self.stdout.write)
            except KeyboardInterrupt:
                self.stdout.write("Stopped.")
            return
        result = sweep(source=TransitionSource.EVALUATOR)
        changed = ", ".join(f"{n} {status}" for status, n in sorted(result.changed.items())) or "none"
        self.stdout.write(self.style.SUCCESS(
            f"Evaluated {result.evaluated} due dataset(s): {result.transitions} transition(s) ({changed})."
        ))
