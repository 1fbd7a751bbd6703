"""Delete raw RunEvents older than a cutoff, keeping the lineage; and column
usage (column reads, field edges, input schemas) older than COLUMN_USAGE_WINDOW.

A RunEvent's age is its event time, the time its table is partitioned by on
PostgreSQL (lineage.partitions): every month wholly before the cutoff is
dropped whole, a catalog change; only the month the cutoff cuts, and the
default partition, are deleted row by row. The run makes the months ahead
too, so a deployment that runs retention from cron and no beat still has them.
DatasetEvents and JobEvents as received (StaticEvent) go by received time.

Jobs, runs, datasets and edges are separate rows derived from the events, so
they stay: the graph, run states and drift checks survive the raw payloads.
Column reads, field edges and input schemas last seen before the usage window no longer
count anywhere (registry.usage, the column-lineage API), so they go too.
Each batch is its own short transaction, so ingest never waits long on it.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from lineage import partitions
from lineage.models import FieldEdge, RunEvent, StaticEvent
from registry.env import parse_duration
from registry.models import AuditEvent
from registry.usage import ColumnRead, InputSchema


class Command(BaseCommand):
    help = ("Delete raw lineage events older than --older-than (e.g. 30d), in batches; jobs, runs, datasets and edges "
            "stay. Column reads and field edges older than COLUMN_USAGE_WINDOW go too.")

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, help="Age such as 30d, 12h or 2w (a RunEvent's event time; other events' received time).")
        parser.add_argument("--batch-size", type=int, default=5000, help="Events deleted per transaction (default 5000).")
        parser.add_argument("--dry-run", action="store_true", help="Only count what would be deleted.")

    def handle(self, *args, older_than: str, batch_size: int, dry_run: bool, **options):
        try:
            age = parse_duration(older_than)
        except ValueError as exc:
            raise CommandError(f"--older-than: {exc}") from None
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        now = timezone.now()
        cutoff = now - age
        old = RunEvent.objects.from_before(cutoff)
        # DatasetEvents and JobEvents as received: raw events too; what they set stays.
        old_static = StaticEvent.objects.filter(received_at__lt=cutoff)
        stale = [("column reads", ColumnRead.objects.expired(now)), ("field edges", FieldEdge.objects.expired(now)),
                 ("input schemas", InputSchema.objects.expired(now))]
        if dry_run:
            total = old.count() + old_static.count()
            self.stdout.write(f"{total} events from before {cutoff:%Y-%m-%d %H:%M:%S} UTC would be deleted.")
            for label, rows in stale:
                self.stdout.write(f"{rows.count()} {label} not seen within COLUMN_USAGE_WINDOW would be deleted.")
            return
        made = partitions.create_ahead(now)
        # A month wholly past the window goes whole; its rows are not scanned to be counted.
        doomed = {p.name: partitions.rows_in(p) for p in partitions.wholly_before(cutoff)}
        dropped = partitions.drop_before(cutoff)
        deleted, exact = 0, True
        for name in dropped:
            rows, counted = doomed.get(name, (0, False))
            deleted, exact = deleted + rows, exact and counted
            self.stdout.write(f"  dropped partition {name} ({'' if counted else 'about '}{rows} events)")
        remaining, static_total = old.count(), old_static.count()
        self.stdout.write(f"Deleting {remaining + static_total} events from before {cutoff:%Y-%m-%d %H:%M:%S} UTC "
                          f"row by row, {batch_size} per batch.")
        deleted += self._in_batches(RunEvent, old, remaining, batch_size)
        deleted += self._in_batches(StaticEvent, old_static, static_total, batch_size, label="static events")
        usage = {label: self._in_batches(rows.model, rows, rows.count(), batch_size, label=label) for label, rows in stale}
        if deleted or dropped or made or any(usage.values()):
            AuditEvent.objects.create(
                actor_label="prune_lineage_events", action="lineage.events_pruned",
                object_type=RunEvent._meta.label_lower, object_id="*", object_repr=f"events from before {cutoff.isoformat()}",
                after={"deleted": deleted, "deleted_exact": exact, "older_than": older_than, "cutoff": cutoff.isoformat(),
                       "partitions_dropped": dropped, "partitions_made": made,
                       "column_reads_deleted": usage["column reads"], "field_edges_deleted": usage["field edges"],
                       "input_schemas_deleted": usage["input schemas"]},
            )
        self.stdout.write(self.style.SUCCESS(
            f"Deleted {'' if exact else 'about '}{deleted} raw events, {usage['column reads']} column reads, {usage['field edges']} field edges "
            f"and {usage['input schemas']} input schemas; "
            "jobs, runs, datasets and edges kept."))

    def _in_batches(self, model, rows, total: int, batch_size: int, *, label: str = "") -> int:
        """Delete `rows` (a queryset of `model`), one short transaction per batch."""
        if label and total:
            self.stdout.write(f"Deleting {total} {label} not seen within COLUMN_USAGE_WINDOW.")
        deleted, started = 0, time.monotonic()
        while True:
            ids = list(rows.order_by("id").values_list("id", flat=True)[:batch_size])
            if not ids:
                break
            with transaction.atomic():
                # Through `rows`, so the delete keeps its bounds (a time bound reads only its partitions).
                count, _ = rows.filter(id__in=ids).delete()
            deleted += count
            self.stdout.write(f"  {deleted}/{total} {label or 'deleted'} ({time.monotonic() - started:.1f}s)")
        return deleted
