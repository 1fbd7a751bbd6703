"""python manage.py check_compat OLD NEW [--mode MODE] [--format text|json|markdown] [--budget STEPS]
    [--witness-budget STEPS] [--time-guard SECONDS]

Exit 0 when compatible under the mode, 1 when breaking, 2 when an input is invalid, 3 when the
checker could not decide (it failed or cannot read a schema; the message names the files and path).
The same code runs without Django as `python -m registry_client.compat`.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from registry_client.compat import MODES
from registry_client.compat.cli import add_budget_arguments, run


class Command(BaseCommand):
    help = ("Compare two contract versions (JSON Schema or contract documents, JSON or YAML) and report what "
            "breaks whom. Exit 0: compatible under the mode; 1: breaking; 2: an input is invalid; "
            "3: the checker could not decide.")

    def add_arguments(self, parser):
        parser.add_argument("old", help="the published version (.json, .yaml)")
        parser.add_argument("new", help="the proposed version")
        parser.add_argument("--mode", default="BACKWARD", type=str.upper, choices=MODES,
                            help="compatibility mode (default BACKWARD)")
        parser.add_argument("--format", dest="fmt", choices=("text", "json", "markdown"), default="text")
        add_budget_arguments(parser)

    def handle(self, *args, old, new, mode, fmt, budget=None, witness_budget=None, time_guard=None, **options):
        code = run(old, new, mode, fmt, stdout=self.stdout, stderr=self.stderr, budget=budget,
                   witness_budget=witness_budget, time_guard=time_guard)
        if code:
            sys.exit(code)
