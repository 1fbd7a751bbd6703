"""What contracts ask of their owner teams, for the core's inbox (registry.hooks.inbox_items):
drafts waiting for the team's review, and the team's datasets whose latest run drifted
from their contract. Two queries, whatever the number of drafts or datasets."""

from __future__ import annotations

from contracts_app.models import Draft, SchemaDriftCheck
from registry.hooks import InboxItem, inbox_items


@inbox_items(order=20)
def contract_items(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    if not team_ids:
        return []
    items = []
    for draft in Draft.objects.pending().filter(owner_team_id__in=team_ids).select_related("owner_team") \
            .order_by("created_at", "pk")[:limit]:
        items.append(InboxItem(
            kind="review_draft", key=f"review_draft:{draft.pk}", team_id=draft.owner_team_id,
            title=f"{draft.owner_team.name} should review the draft of {draft.contract_name} {draft.version}",
            detail=f"Drafted from {draft.source or draft.get_origin_display()}; approve it to publish, or discard it.",
            url=draft.get_absolute_url()))
    drifted = (SchemaDriftCheck.objects.filter(dataset__owner_team_id__in=team_ids).latest_per_dataset().drifted()
               .select_related("dataset", "dataset__owner_team").order_by("dataset__namespace", "dataset__name"))[:limit]
    for check in drifted:
        dataset = check.dataset
        n = check.drift_count
        items.append(InboxItem(
            kind="drift", key=f"drift:{dataset.pk}", team_id=dataset.owner_team_id,
            title=f"{dataset.name} drifted from {check.contract_name} {check.version}: "
                  f"{n} finding{'s' if n != 1 else ''} in its latest run",
            detail=f"Job {check.job_namespace}/{check.job_name} wrote it at {check.event_time:%Y-%m-%d %H:%M} UTC; "
                   "fix the job or publish a contract version that matches.",
            url=f"{dataset.get_absolute_url()}#schema-drift"))
    return items
