"""``manage.py verify_audit_log``: list the audit rows the app did not write.

Every row the app writes carries its seal (registry.auditseal); a row whose seal
does not match, or that has none although sealing had begun, was written by hand
with the serving role (or changed by the table's owner): it is listed with its
id, time, claimed actor and action. Exit 0 when every row is
the app's, 1 when some are not. Rows from before sealing began are counted apart.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from registry.models import AuditEvent

PROGRESS_EVERY = 50_000


class Command(BaseCommand):
    help = ("Check every audit row's seal: list the rows the app did not write (forged or altered). "
            "Exit 0 when all are the app's, 1 otherwise.")

    def handle(self, *args, **options):
        total = AuditEvent.objects.count()
        self.stdout.write(f"Checking {total} audit rows.")
        # Rows from before sealing began have no seal. A row written by hand later cannot pass
        # for one of them: on PostgreSQL its time is the database's (registry.auditseal).
        sealing_began = AuditEvent.objects.filter(seal__gt="").order_by("at").values_list("at", flat=True).first()
        checked = before_sealing = 0
        bad = []
        rows = AuditEvent.objects.order_by("id").only(
            "id", "at", "seal", "actor_id", "actor_label", "action", "object_type", "object_id", "object_repr",
            "before", "after")
        for row in rows.iterator(chunk_size=2000):
            checked += 1
            if checked % PROGRESS_EVERY == 0:
                self.stdout.write(f"  {checked}/{total}")
            if not row.seal and (sealing_began is None or row.at < sealing_began):
                before_sealing += 1
            elif not row.is_sealed:
                bad.append(row)
        for row in bad:
            why = "no seal" if not row.seal else "seal does not match"
            self.stdout.write(self.style.ERROR("not the app's: ")
                              + f"#{row.id} {row.at:%Y-%m-%d %H:%M:%S} {row.actor_label} {row.action} "
                                f"{row.object_type} {row.object_id} ({why})")
        if before_sealing:
            self.stdout.write(f"{before_sealing} row(s) were written before rows were sealed; they cannot be checked.")
        if bad:
            self.stdout.write(self.style.ERROR(f"{len(bad)} of {checked} audit row(s) were not written by the app."))
            sys.exit(1)
        self.stdout.write(self.style.SUCCESS(f"All {checked - before_sealing} sealed audit row(s) are the app's."))
