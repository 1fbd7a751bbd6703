"""What freshness asks of owner teams, for the core's inbox (registry.hooks.inbox_items):
the team's datasets that are stale now, since when. One query, whatever their number."""

from __future__ import annotations

from freshness.constants import FreshnessStatus
from freshness.models import DatasetFreshness
from registry.hooks import InboxItem, inbox_items


@inbox_items(order=30)
def stale_items(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    if not team_ids:
        return []
    rows = (DatasetFreshness.objects.filter(status=FreshnessStatus.STALE, dataset__owner_team_id__in=team_ids)
            .select_related("dataset").order_by("status_since", "dataset_id"))[:limit]
    items = []
    for row in rows:
        dataset = row.dataset
        last = f"last write {row.last_write_at:%Y-%m-%d %H:%M} UTC" if row.last_write_at else "never written"
        items.append(InboxItem(
            kind="stale", key=f"stale:{dataset.pk}:{row.status_since:%Y%m%d%H%M%S}", team_id=dataset.owner_team_id,
            title=f"{dataset.name} is stale since {row.status_since:%Y-%m-%d %H:%M} UTC",
            detail=f"{last}; its SLO allows {row.max_age} between writes. Run the job that writes it.",
            url=f"{dataset.get_absolute_url()}#freshness"))
    return items
