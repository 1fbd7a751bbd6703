"""What change requests ask of people, for the core's inbox (registry.hooks.inbox_items):
the requests a team must answer, with their deadline, and the approved ones its
owner team may now publish. Two queries, whatever the number of requests."""

from __future__ import annotations

from change_requests.models import ChangeRequest, ChangeRequestState, ReviewStatus, TeamReview
from registry.hooks import InboxItem, inbox_items


@inbox_items(order=10)
def change_request_items(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    if not team_ids:
        return []
    order = ("change_request__deadline_at", "change_request_id", "team__name")
    # The page's reviews are picked first (reviews and requests only), then read with their
    # contracts: joined before the LIMIT, PostgreSQL hashed every contract to sort every
    # waiting review (a team consuming a large estate's contracts: hundreds of them).
    first = (TeamReview.objects.filter(team_id__in=team_ids, status=ReviewStatus.PENDING,
                                       change_request__state=ChangeRequestState.OPEN)
             .order_by(*order).values("pk")[:limit])
    waiting = (TeamReview.objects.filter(pk__in=first)
               .select_related("team", "change_request__contract", "change_request__owner_team").order_by(*order))
    items = []
    for review in waiting:
        request = review.change_request
        by = request.owner_team.name if request.owner_team_id else "The owner team"
        items.append(InboxItem(
            kind="acknowledge", key=f"acknowledge:{request.pk}:{review.team_id}", team_id=review.team_id,
            title=f"{review.team.name} must answer change request #{request.pk}: "
                  f"{request.contract.name} {request.proposed_version}",
            detail=f"{by} proposes a breaking change; acknowledge it or object before the deadline"
                   + (" (escalated: past its deadline)." if request.escalated_at else "."),
            url=request.get_absolute_url(), due=request.deadline_at))
    approved = (ChangeRequest.objects.filter(state=ChangeRequestState.APPROVED, owner_team_id__in=team_ids)
                .select_related("contract", "owner_team").order_by("approved_at", "pk"))[:limit]
    for request in approved:
        items.append(InboxItem(
            kind="publish", key=f"publish:{request.pk}", team_id=request.owner_team_id,
            title=f"{request.owner_team.name} may publish {request.contract.name} {request.proposed_version}: "
                  f"change request #{request.pk} is approved",
            detail="Every team it waited for has answered; publish it (or withdraw it) on the request's page.",
            url=request.get_absolute_url()))
    return items
