"""Drafts waiting for their owner team's review, shown on the catalogue and the
contract page as versions waiting (contracts_app.hooks.versions_waiting; change
requests add theirs the same way). One subquery per listed contract: its pending
drafts as one JSON list."""

from __future__ import annotations

from django.db import connection
from django.db.models import JSONField, OuterRef, Subquery
from django.db.models.functions import JSONObject
from django.urls import reverse

from contracts_app.hooks import WaitingVersion, versions_waiting
from contracts_app.models import Draft

ANNOTATION = "pending_drafts"


def annotate_pending_drafts(contracts):
    if connection.vendor != "postgresql":
        return contracts  # no JSONB aggregate on SQLite (the demo): pending_drafts asks per contract
    # django.contrib.postgres loads psycopg: import it when a list is built, not at start-up.
    from django.contrib.postgres.aggregates import JSONBAgg

    drafts = (Draft.objects.pending().filter(contract_name=OuterRef("name")).order_by()
              .values("contract_name")
              .annotate(found=JSONBAgg(JSONObject(id="pk", version="version", team="owner_team__name"),
                                       order_by="pk"))
              .values("found"))
    return contracts.annotate(**{ANNOTATION: Subquery(drafts[:1], output_field=JSONField())})


def pending_drafts(contract) -> list[WaitingVersion]:
    return [WaitingVersion(version=found["version"], state="awaiting_review",
                           status=f"drafted; waiting for {found['team']} to review it",
                           link_text=f"draft {found['version']}", url=reverse("draft-detail", args=[found["id"]]))
            for found in (getattr(contract, ANNOTATION) if hasattr(contract, ANNOTATION) else _drafts_of(contract)) or []]


def _drafts_of(contract) -> list[dict]:
    """What the annotation holds, read for one contract (SQLite's small demo lists)."""
    return [{"id": d.pk, "version": d.version, "team": d.owner_team.name if d.owner_team_id else None}
            for d in Draft.objects.pending().filter(contract_name=contract.name).select_related("owner_team")
            .order_by("pk")]


versions_waiting(annotate_pending_drafts, pending_drafts)
