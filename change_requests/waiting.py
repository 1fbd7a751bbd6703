"""Which version of a contract waits in a change request, for the contracts pages
(contracts_app.hooks.versions_waiting): an open request waits for the consumer teams
still to acknowledge, an approved one for its owner team to publish.

A contract has at most one unfinished request (a partial unique index holds it), so
one subquery per listed contract says everything the pages show: the request, its
proposed version and deadline, and which teams it still waits for. The catalogue and
the contract page ask for nothing more.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.db.models import Count, JSONField, OuterRef, Subquery
from django.db.models.functions import JSONObject
from django.urls import reverse

from change_requests.models import (
    UNFINISHED,
    ChangeRequest,
    ChangeRequestState,
    ReviewStatus,
    TeamReview,
)
from contracts_app.hooks import WaitingVersion, versions_waiting

ANNOTATION = "unfinished_change_request"


def _teams_with(status: str) -> Subquery:
    """The names of the request's teams whose review is in `status`, alphabetical."""
    # django.contrib.postgres loads psycopg: import it when a list is built, not at start-up.
    from django.contrib.postgres.aggregates import ArrayAgg

    names = (TeamReview.objects.filter(change_request=OuterRef("pk"), status=status).order_by()
             .values("change_request").annotate(names=ArrayAgg("team__name", order_by="team__name"))
             .values("names"))
    return Subquery(names[:1])


def _reviews_counted(status: str | None = None) -> Subquery:
    """How many of the request's teams have a review (in `status`, when given)."""
    reviews = TeamReview.objects.filter(change_request=OuterRef("pk"))
    if status is not None:
        reviews = reviews.filter(status=status)
    return Subquery(reviews.order_by().values("change_request").annotate(n=Count("pk")).values("n")[:1])


def annotate_unfinished_request(contracts):
    """Each contract's unfinished change request as one JSON value (or null)."""
    if connection.vendor != "postgresql":
        return contracts  # no array aggregates on SQLite (the demo): waiting_in_request asks per contract
    unfinished = (ChangeRequest.objects.filter(contract=OuterRef("pk"), state__in=UNFINISHED).order_by("-opened_at")
                  .values(waiting=JSONObject(
                      id="pk", state="state", version="proposed_version", deadline="deadline_at",
                      owner_team="owner_team__name",
                      required=_reviews_counted(), acknowledged=_reviews_counted(ReviewStatus.ACKNOWLEDGED),
                      waiting_for=_teams_with(ReviewStatus.PENDING), objected=_teams_with(ReviewStatus.OBJECTED),
                  )))
    return contracts.annotate(**{ANNOTATION: Subquery(unfinished[:1], output_field=JSONField())})


def _names(teams: list[str] | None) -> str:
    teams = teams or []
    return teams[0] if len(teams) == 1 else f"{', '.join(teams[:-1])} and {teams[-1]}"


def _open_status(found: dict) -> str:
    required, acknowledged = found.get("required") or 0, found.get("acknowledged") or 0
    progress = f"{acknowledged} of {required} team{'s' if required != 1 else ''} acknowledged"
    if found.get("objected"):
        return f"{_names(found['objected'])} objected; {progress}"
    if found.get("waiting_for"):
        return f"waiting for {_names(found['waiting_for'])} to acknowledge ({progress})"
    return f"waiting for the consumer teams ({progress})"


def _unfinished_of(contract) -> dict | None:
    """What the annotation holds, read for one contract (SQLite's small demo lists)."""
    request = (ChangeRequest.objects.filter(contract=contract, state__in=UNFINISHED).select_related("owner_team")
               .order_by("-opened_at").first())
    if request is None:
        return None
    reviews = list(TeamReview.objects.filter(change_request=request).select_related("team").order_by("team__name"))

    def named(status: str) -> list[str]:
        return [r.team.name for r in reviews if r.status == status]

    return {"id": request.pk, "state": request.state, "version": request.proposed_version,
            "deadline": request.deadline_at.isoformat() if request.deadline_at else None,
            "owner_team": request.owner_team.name if request.owner_team_id else None,
            "required": len(reviews), "acknowledged": len(named(ReviewStatus.ACKNOWLEDGED)),
            "waiting_for": named(ReviewStatus.PENDING), "objected": named(ReviewStatus.OBJECTED)}


def waiting_in_request(contract) -> list[WaitingVersion]:
    found = getattr(contract, ANNOTATION) if hasattr(contract, ANNOTATION) else _unfinished_of(contract)
    if not found:
        return []
    url = reverse("change-request-detail", args=[found["id"]])
    link_text = f"change request #{found['id']}"
    if found["state"] == ChangeRequestState.APPROVED:
        owner = found.get("owner_team") or "its owner team"
        return [WaitingVersion(version=found["version"], state="awaiting_publication",
                               status=f"approved; waiting for {owner} to publish", link_text=link_text, url=url)]
    return [WaitingVersion(version=found["version"], state="awaiting_acknowledgement", status=_open_status(found),
                           link_text=link_text, url=url,
                           due=datetime.fromisoformat(found["deadline"]) if found.get("deadline") else None)]


versions_waiting(annotate_unfinished_request, waiting_in_request)
