"""Lanes listen to the contracts side: they answer its questions about lane dates, take a
document's lane dates when its version is recorded, and count the thin client's fetches."""

from __future__ import annotations

from datetime import date

from django.db.models import F
from django.db.models.functions import Now
from django.dispatch import receiver
from registry_client.versions import lane_of

from contracts_app.hooks import lane_dates, version_fetched, version_recorded
from lanes.models import Lane, LaneError, LaneRead
from registry.models import Team

DATE_FIELDS = ("deprecation_date", "sunset_date")


@lane_dates
def dates_of_lanes(contract_ids: list[int]) -> dict:
    """{(contract id, major): {"deprecation_date", "sunset_date"}}: the sunset in force (one query)."""
    found = {}
    for lane in Lane.objects.filter(contract_id__in=contract_ids).exclude(deprecation_date=None, sunset_date=None,
                                                                             extended_until=None):
        found[(lane.contract_id, lane.major)] = {"deprecation_date": lane.deprecation_date,
                                                 "sunset_date": lane.sunset_in_force}
    return found


@receiver(version_recorded, dispatch_uid="lanes.on_version_recorded")
def take_dates_from_document(sender, *, contract_version, document, by, **kwargs) -> None:
    """A document's `schema.deprecation_date` / `schema.sunset_date` set its lane's dates
    (audited; the same rules as the page and the API)."""
    schema = document.get("schema") or {}
    given = {key: schema.get(key) for key in DATE_FIELDS if schema.get(key)}
    if not given:
        return
    try:
        parsed = {key: date.fromisoformat(str(value)) for key, value in given.items()}
    except ValueError as exc:
        raise LaneError(f"schema.deprecation_date and schema.sunset_date are dates, YYYY-MM-DD: {exc}",
                        code="bad_lane_date") from None
    lane = Lane.of(contract_version.contract, lane_of(contract_version.version))
    lane.set_dates(deprecation_date=parsed.get("deprecation_date", lane.deprecation_date),
                   sunset_date=parsed.get("sunset_date", lane.sunset_date), by=by, from_document=True)


@receiver(version_fetched, dispatch_uid="lanes.on_version_fetched")
def count_fetch(sender, *, contract_version, request, selector: str, **kwargs) -> None:
    """One upsert per fetch that reported its selector; nothing when the client opted out."""
    if not selector:
        return
    token = getattr(request, "auth", None)
    user = getattr(request, "user", None)
    if token is not None and getattr(token, "pk", None):
        reader, label = f"token:{token.pk}", f"token {token.name}"
        team_id = token.team_id or _only_team(token.user_id)
    elif user is not None and getattr(user, "is_authenticated", False) and getattr(user, "pk", None):
        reader, label, team_id = f"user:{user.pk}", user.get_username(), _only_team(user.pk)
    else:
        return  # anonymous reads are not counted: nobody to tell
    LaneRead.objects.bulk_create(
        [LaneRead(contract_id=contract_version.contract_id, reader=reader, reader_label=label[:200], team_id=team_id, fetches=0,
                  major=lane_of(contract_version.version), version=contract_version.version, selector=selector)],
        update_conflicts=True, unique_fields=["contract", "reader", "major"],
        update_fields=["version", "selector", "team", "last_seen_at", "reader_label"],
    )
    LaneRead.objects.filter(contract_id=contract_version.contract_id, reader=reader,
                            major=lane_of(contract_version.version)).update(fetches=F("fetches") + 1, last_seen_at=Now())


def _only_team(user_id: int | None) -> int | None:
    """A person's reads count for their team when they are in exactly one."""
    if user_id is None:
        return None
    teams = list(Team.objects.filter(members__pk=user_id).values_list("pk", flat=True)[:2])
    return teams[0] if len(teams) == 1 else None
