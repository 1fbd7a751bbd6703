"""What lanes put in a team's inbox (registry.hooks.inbox_items): each deprecated lane
the team still reads, due at its sunset (the 30/7/1-day reminders point here too)."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from lanes.evidence import lane_usage
from lanes.models import Lane
from registry.hooks import InboxItem, inbox_items


@inbox_items(order=60)
def deprecated_lanes_still_read(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    """A bounded number of queries: the deprecated lanes, then lane_usage for their contracts."""
    if not team_ids:
        return []
    today = timezone.localdate()
    lanes = list(Lane.objects.deprecated(today).select_related("contract"))
    if not lanes:
        return []
    usage = lane_usage({lane.contract for lane in lanes})
    wanted = set(team_ids)
    items = []
    for lane in lanes:
        if lane.is_past_sunset(today):
            continue  # it no longer resolves: the readers' own errors say so
        found = next((u for u in usage.get(lane.contract_id, []) if u.major == lane.major), None)
        if found is None:
            continue
        for team_id in sorted(found.team_ids & wanted):
            sunset = lane.sunset_in_force
            team = next(r.team for r in found.readers if r.team_id == team_id)
            items.append(InboxItem(
                kind="lane_sunset" if sunset else "lane_deprecated",
                title=(f"{team} must move off {lane.contract.name} {lane.label}"
                       + (f" before its sunset on {sunset}" if sunset else " (deprecated)")),
                url=reverse("lane-page", args=[lane.contract.name]),
                key=f"lane:{lane.pk}:team:{team_id}:{sunset or ''}",
                team_id=team_id, due=sunset,
                detail=f"Deprecated since {lane.deprecation_date}; {found.summary}.",
            ))
    return items[:limit]
