"""Delete raw RunEvents older than a cutoff, in batches, keeping the lineage.

Jobs, runs, datasets and edges are separate rows derived from the events, so
they stay: the graph, run states and drift checks survive the raw payloads.
Each batch is its own short transaction, so ingest never waits long on it.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from lineage.models import RunEvent
from registry.env import parse_duration
from registry.models import AuditEvent


class Command(BaseCommand):
    help = "Delete raw lineage events older than --older-than (e.g. 30d), in batches; jobs, runs, datasets and edges stay."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, help="Age such as 30d, 12h or 2w (received time).")
        parser.add_argument("--batch-size", type=int, default=5000, help="Events deleted per transaction (default 5000).")
        parser.add_argument("--dry-run", action="store_true", help="Only count what would be deleted.")

    def handle(self, *args, older_than: str, batch_size: int, dry_run: bool, **options):
        try:
            age = parse_duration(older_than)
        except ValueError as exc:
            raise CommandError(f"--older-than: {exc}") from None
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        cutoff = timezone.now() - age
        old = RunEvent.objects.received_before(cutoff)
        total = old.count()
        if dry_run:
            self.stdout.write(f"{total} events received before {cutoff:%Y-%m-%d %H:%M:%S} UTC would be deleted.")
            return
        self.stdout.write(f"Deleting {total} events received before {cutoff:%Y-%m-%d %H:%M:%S} UTC, {batch_size} per batch.")
        deleted, started = 0, time.monotonic()
        while True:
            ids = list(old.order_by("id").values_list("id", flat=True)[:batch_size])
            if not ids:
                break
            with transaction.atomic():
                count, _ = RunEvent.objects.filter(id__in=ids).delete()
            deleted += count
            self.stdout.write(f"  {deleted}/{total} deleted ({time.monotonic() - started:.1f}s)")
        if deleted:
            AuditEvent.objects.create(
                actor_label="prune_lineage_events", action="lineage.events_pruned",
                object_type=RunEvent._meta.label_lower, object_id="*", object_repr=f"events received before {cutoff.isoformat()}",
                after={"deleted": deleted, "older_than": older_than, "cutoff": cutoff.isoformat()},
            )
        self.stdout.write(self.style.SUCCESS(f"Deleted {deleted} raw events; jobs, runs, datasets and edges kept."))
