"""What the change requests' answers say about a lane: the teams migrating off it by a date."""

from __future__ import annotations

from datetime import date

from change_requests.models import ChangeRequestState, ReviewStatus, TeamReview

# A request still on its way counts too: its migrating teams were promised their date.
LIVE = (ChangeRequestState.OPEN, ChangeRequestState.APPROVED, ChangeRequestState.PUBLISHED)


def migrating_off(contract_id: int, major: int) -> list[tuple[date, str]]:
    """(date, team slug) of every team that answered "migrating by DATE" to a request that
    moves the contract from lane `major` to a newer one, latest date first (one query)."""
    rows = (TeamReview.objects.filter(change_request__contract_id=contract_id, status=ReviewStatus.MIGRATING,
                                      migrating_by__isnull=False, change_request__state__in=LIVE)
            .values_list("migrating_by", "team__slug", "change_request__proposed_version"))
    found = [(day, slug) for day, slug, proposed in rows if _major(proposed) > major]
    return sorted(found, reverse=True)


def latest_migrating_by(contract_id: int, major: int) -> tuple[date, str] | None:
    found = migrating_off(contract_id, major)
    return found[0] if found else None


def _major(version: str) -> int:
    try:
        return int(str(version).split(".", 1)[0])
    except ValueError:
        return -1
