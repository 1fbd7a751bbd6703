"""Change-request workflows that span several models or do I/O.

- `open_change_request` / `propose_breaking_version`: the publish gate's "breaking"
  branch (contracts_app announces it; change_requests.receivers listens).
- `submit_version`: publishing from the web or the API, through the gate.
- `run_clock`: the beat task's pass (reminders, escalations, lost deliveries).

The owner publishes an approved request with `ChangeRequest.publish`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from change_requests import notifications
from change_requests.impact import Impact, TeamImpact, assess, column_effects
from change_requests.models import (
    ChangeRequest,
    ChangeRequestAction,
    ChangeRequestError,
    ChangeRequestState,
    ReviewPolicy,
    ReviewStatus,
    TeamAssessment,
    TeamReview,
    UnfinishedRequestExists,
)
from contracts_app.models import Contract, ContractVersion
from contracts_app.publishing import publish_document, publish_refusal
from registry.models import (
    AuditEvent,
    Dataset,
    Team,
    actor_label,
    acts_for,
    is_governance_admin,
    person_of,
)

CLOCK_BATCH = 200
# Open requests a clock pass assesses again (each a full impact assessment, tenths of a
# second): the ones looked at longest ago, so that every open request is seen in turn
# however many there are (with 1,000 open, each every 20 minutes at one pass a minute).
REASSESS_BATCH = 50


def owner_team_of(contract: Contract) -> Team | None:
    """The contract's owner team, else the team that owns the datasets bound to it."""
    if contract.owner_team_id:
        return contract.owner_team
    dataset = Dataset.objects.filter(contract_binding__contract=contract, owner_team__isnull=False).select_related("owner_team").first()
    return dataset.owner_team if dataset else None


def required_teams(contract: Contract, owner_team: Team | None) -> list[Team]:
    """The consumer teams of every dataset bound to the contract, except the owner team itself
    (it is the one proposing; asking it to acknowledge its own change would be noise)."""
    teams = Team.objects.filter(consumptions__dataset__contract_binding__contract=contract).distinct().order_by("name")
    if owner_team is not None:
        teams = teams.exclude(pk=owner_team.pk)
    return list(teams)


def review_period(contract: Contract) -> timedelta:
    """The longest review period among the bound datasets' own policies, else the global default.

    The longest, because each consumer team was promised its dataset's period."""
    periods = list(ReviewPolicy.objects.filter(dataset__contract_binding__contract=contract).values_list("review_period", flat=True))
    return max(periods) if periods else settings.CHANGE_REQUEST_DEADLINE


def reminder_time(opened_at: datetime, deadline_at: datetime) -> datetime:
    """CHANGE_REQUEST_REMINDER_BEFORE the deadline, but never in the first half of the period
    (a one-day period with a one-day reminder would otherwise remind at once)."""
    return max(deadline_at - settings.CHANGE_REQUEST_REMINDER_BEFORE, opened_at + (deadline_at - opened_at) / 2)


def open_change_request(
    contract: Contract,
    document: dict,
    *,
    by,
    report: dict,
    summary: str = "",
    deadline: timedelta | None = None,
) -> ChangeRequest:
    """Open a request for a breaking version and tell every consumer team how it is touched.

    1. Only a member of the owner team (or a governance admin) may propose.
    2. Route by column (change_requests.impact): the consumer teams whose jobs read a
       touched column, or whose usage is unknown, are required; the others are not.
    3. In one transaction: refuse when an unfinished request exists (naming it); insert
       the request under a savepoint, so that if a concurrent proposal won the partial
       unique index we still answer with the winner's name; record every team's
       assessment and freeze the required teams; audit; queue the notifications
       ("opened" to the required teams, "not affected" to the others, unregistered
       readers to the owner), sent after commit.
    4. A request that waits for nobody is approved at once, and its record says why.
    """
    owner_team = owner_team_of(contract)
    system = by is None  # the publish command run by an operator, not a person on the web
    if not (system or (owner_team is not None and acts_for(by, owner_team)) or is_governance_admin(by)):
        team = owner_team.slug if owner_team else "(none: the contract has no owner team)"
        raise PermissionDenied(f"Only a member of the owner team {team} can propose a change to {contract.name}.")
    version = str(document.get("schema", {}).get("version", "")).strip()
    if not version:
        raise ChangeRequestError("The proposed document has no schema.version; set it to the new version, e.g. \"2.0\".")
    if ContractVersion.objects.filter(contract=contract, version=version).exists():
        raise ChangeRequestError(
            f"Version {version} of {contract.name} is already published; published versions are immutable. "
            f"Propose the change under a new version."
        )
    now = timezone.now()
    deadline_at = now + (deadline if deadline is not None else review_period(contract))
    effects = column_effects(report, contract.schema_type)
    touched = None if effects is None else sorted(effects)
    base = contract.latest_version()
    impact = assess(contract, touched, effects=effects,
                    owner_team_id=owner_team.pk if owner_team else None,
                    proposed=document, base=base.document if base else None)
    teams_by_id = {t.pk: t for t in Team.objects.filter(pk__in=[t.team_id for t in impact.teams])}
    teams = [teams_by_id[t.team_id] for t in impact.affected]
    unaffected = [teams_by_id[t.team_id] for t in impact.not_affected]
    with transaction.atomic():
        existing = ChangeRequest.objects.unfinished().for_contract(contract).select_related("contract").first()
        if existing is not None:
            raise UnfinishedRequestExists(existing)
        try:
            with transaction.atomic():
                request = ChangeRequest.objects.create(
                    contract=contract, owner_team=owner_team, base_version=base, proposed_version=version,
                    proposed_document=document, report=report, summary=summary,
                    touched_columns=touched, unregistered_readers=impact.unregistered_readers,
                    routing_note=routing_note(impact),
                    opened_by=person_of(by), opened_by_label=actor_label(by), opened_at=now,
                    deadline_at=deadline_at, remind_at=reminder_time(now, deadline_at),
                )
        except IntegrityError:
            winner = ChangeRequest.objects.unfinished().for_contract(contract).select_related("contract").first()
            if winner is None:
                raise
            raise UnfinishedRequestExists(winner) from None
        TeamReview.objects.bulk_create([TeamReview(change_request=request, team=team) for team in teams])
        TeamAssessment.objects.bulk_create([_assessment(request, t, now) for t in impact.teams])
        AuditEvent.record(by, ChangeRequestAction.OPENED, request, before=None, after={
            "state": request.state, "proposed_version": version,
            "base_version": base.version if base else None,
            "required_teams": [t.slug for t in teams], "deadline_at": deadline_at.isoformat(),
            "not_affected_teams": [t.slug for t in unaffected], "touched_columns": touched,
        })
        notifications.queue_opened(request, teams)
        notifications.queue_not_affected(request, unaffected, {t.team_id: t.why for t in impact.not_affected})
        notifications.queue_unregistered_readers(request, impact.unregistered_readers)
    if not teams:
        request.approve_without_acknowledgement(because=request.routing_note or "no consumer team to wait for")
    return request


def routing_note(impact: Impact) -> str:
    """Why the request waits for whom it waits for, in a sentence for the record."""
    columns = "every column" if impact.touched is None else (", ".join(impact.touched) or "no column")
    if not impact.teams:
        return f"No consumer team is registered on the contract's datasets; the change touches {columns}."
    if not impact.affected:
        return (f"No consumer team reads what the change touches ({columns}): "
                + "; ".join(f"{t.team}: {t.why}" for t in impact.not_affected) + ".")
    waits = "; ".join(f"{t.team}: {t.why}" for t in impact.affected)
    told = (" Told, not asked: " + "; ".join(f"{t.team}: {t.why}" for t in impact.not_affected) + ".") \
        if impact.not_affected else ""
    return f"The change touches {columns}. Waits for {waits}.{told}"


def _assessment(request: ChangeRequest, impact: TeamImpact, now: datetime, *, added: bool = False) -> TeamAssessment:
    data = impact.to_dict()
    return TeamAssessment(change_request=request, team_id=impact.team_id, affected=impact.affected, why=impact.why,
                          jobs=data["jobs"], declared=impact.declared, assessed_at=now, added_after_opening=added,
                          verdict=data["verdict"])


def reassess(request: ChangeRequest, *, now: datetime | None = None) -> list[str]:
    """Look again at an open request with today's evidence: a team that is now affected is
    added (required, audited, told); nobody is ever removed. Returns the slugs added.

    1. Outside the transaction: assess with the request's touched columns.
    2. In one transaction, with the request locked: add reviews and assessments for the
       newly affected teams (a team already required stays as it is), record teams newly
       seen as not affected, audit, and queue their notifications."""
    now = now or timezone.now()
    impact = assess(request.contract, request.touched_columns, now=now, owner_team_id=request.owner_team_id,
                    effects=column_effects(request.report or {}, request.contract.schema_type),
                    proposed=request.proposed_document, base=_base_document(request))
    with transaction.atomic():
        locked = ChangeRequest.objects.select_for_update(of=("self",)).select_related("contract", "owner_team").get(pk=request.pk)
        if locked.state != ChangeRequestState.OPEN:
            return []
        required = set(TeamReview.objects.filter(change_request=locked).values_list("team_id", flat=True))
        assessed = {a.team_id: a for a in TeamAssessment.objects.filter(change_request=locked)}
        added = [t for t in impact.affected if t.team_id not in required]
        newly_clear = [t for t in impact.not_affected if t.team_id not in assessed]
        if not added and not newly_clear:
            return []
        teams = {t.pk: t for t in Team.objects.filter(pk__in=[t.team_id for t in added + newly_clear])}
        TeamReview.objects.bulk_create([TeamReview(change_request=locked, team_id=t.team_id) for t in added])
        TeamAssessment.objects.filter(change_request=locked, team_id__in=[t.team_id for t in added]).delete()
        TeamAssessment.objects.bulk_create([_assessment(locked, t, now, added=True) for t in added]
                                           + [_assessment(locked, t, now, added=True) for t in newly_clear])
        for impact_of in added:
            AuditEvent.record(None, ChangeRequestAction.TEAM_ADDED, locked, before=None,
                              after={"team": impact_of.team, "why": impact_of.why})
        notifications.queue_opened(locked, [teams[t.team_id] for t in added])
        notifications.queue_not_affected(locked, [teams[t.team_id] for t in newly_clear],
                                         {t.team_id: t.why for t in newly_clear})
    return [t.team for t in added]


def _base_document(request: ChangeRequest) -> dict | None:
    return request.base_version.document if request.base_version_id else None


def verify_change_request(request: ChangeRequest) -> dict:
    """Look for a proof per team of an unfinished request: its affected teams' SQL EXPLAINed on a
    scratch schema holding the proposed shape (change_requests.verify). Nobody is added or
    removed: each assessment's verdict shows what was proven.

    1. Outside any transaction: assess with the request's touched columns and verify
       (the scratch schema lives and dies on a connection of its own).
    2. One short transaction: store each assessed team's verdict and the request's
       verification summary (when it ran, what it did)."""
    now = timezone.now()
    impact = assess(request.contract, request.touched_columns, owner_team_id=request.owner_team_id,
                    effects=column_effects(request.report or {}, request.contract.schema_type),
                    proposed=request.proposed_document, base=_base_document(request), verify=True, settle=False)
    summary = {**(impact.verification or {"available": True, "ran": False, "consumers": 0,
                                          "reason": "no team's use of the change is left to prove"}),
               "at": now.isoformat()}
    verdicts = {t.team_id: t.to_dict()["verdict"] for t in impact.teams}
    with transaction.atomic():
        assessments = list(TeamAssessment.objects.select_for_update().filter(change_request=request,
                                                                             team_id__in=verdicts))
        for assessment in assessments:
            assessment.verdict = verdicts[assessment.team_id]
        TeamAssessment.objects.bulk_update(assessments, ["verdict"])
        ChangeRequest.objects.filter(pk=request.pk).update(verification=summary)
    request.verification = summary
    return summary


def propose_breaking_version(contract: Contract, document: dict, report, *, by) -> tuple[ChangeRequest | None, str]:
    """The publish gate's "breaking" branch: open a request, or say why none was opened.

    Returns (request, a sentence for the publisher). Re-publishing the very document an
    unfinished request already proposes points at that request instead of failing."""
    try:
        request = open_change_request(contract, document, by=by, report=report.to_dict())
    except UnfinishedRequestExists as exc:
        existing = exc.existing
        if existing.proposed_document == document:
            return existing, f"It already waits in change request #{existing.pk} ({existing.state}): {notifications.review_url(existing)}"
        return None, str(exc.messages[0])
    except (PermissionDenied, ChangeRequestError) as exc:
        return None, f"No change request was opened: {' '.join(getattr(exc, 'messages', None) or [str(exc)])}"
    request.just_opened = True
    waiting = ", ".join(r.team.slug for r in request.reviews.select_related("team"))
    if not waiting:
        return request, (f"Change request #{request.pk} was approved at once (no consumer team to wait for); "
                         f"the owner team publishes it at {notifications.review_url(request)}")
    return request, (f"Change request #{request.pk} is open and waits for {waiting} until "
                     f"{request.deadline_at:%Y-%m-%d %H:%M} UTC: {notifications.review_url(request)}")


@dataclass
class ClockResult:
    reminded: list[int]
    escalated: list[int]
    sent: int
    failed: int
    added: dict[int, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"reminded": self.reminded, "escalated": self.escalated, "sent": self.sent, "failed": self.failed,
                "added": self.added}


def run_clock(now: datetime | None = None) -> ClockResult:
    """One pass of the change-request clock (Celery beat runs it every minute).

    1. Reminders: open requests whose reminder time passed are claimed with
       SELECT … FOR UPDATE SKIP LOCKED and stamped `reminded_at` in one UPDATE, so
       two overlapping passes never pick the same request; the still-waiting teams
       are queued a reminder.
    2. Escalations: the same for requests past their deadline: `escalated_at`, an
       audit row, and notifications to the governance admins and the owner.
    3. New evidence: open requests are assessed again (`reassess`), so a team that lineage
       or a declaration or a registration now shows affected is added and told; REASSESS_BATCH
       of them per pass, those looked at longest ago first (`reassessed_at`), claimed as above.
    4. Lost deliveries: notifications never tried 30 s after they were queued (the broker
       was down), or still unsent LOST_AFTER after (their task gave up retrying early),
       are sent (NotificationQuerySet.lost).
    Running the pass twice changes nothing the second time.
    """
    now = now or timezone.now()
    reminded = _claim_and(ChangeRequest.objects.due_for_reminder(now), "reminded_at", now, _remind)
    escalated = _claim_and(ChangeRequest.objects.past_deadline(now), "escalated_at", now, _escalate)
    added = {}
    for request in _claim_for_reassessment(now):
        slugs = reassess(request, now=now)
        if slugs:
            added[request.pk] = slugs
    # Fresh rows belong to their own task (with its backoff); the clock only rescues lost ones.
    sent, failed = notifications.deliver_pending(only_lost=True)
    return ClockResult(reminded=reminded, escalated=escalated, sent=sent, failed=failed, added=added)


def _claim_for_reassessment(now: datetime) -> list[ChangeRequest]:
    """The REASSESS_BATCH open requests looked at longest ago, stamped `reassessed_at` in one short
    transaction (SKIP LOCKED: two overlapping passes take different ones); assessed after it."""
    with transaction.atomic():
        ids = list(ChangeRequest.objects.longest_unassessed().select_for_update(skip_locked=True)
                   .values_list("pk", flat=True)[:REASSESS_BATCH])
        ChangeRequest.objects.filter(pk__in=ids).update(reassessed_at=now)
    return list(ChangeRequest.objects.filter(pk__in=ids).select_related("contract").order_by("opened_at", "pk"))


def _claim_and(due, stamp: str, now: datetime, then) -> list[int]:
    """Claim due requests in batches of CLOCK_BATCH, one short transaction per batch."""
    claimed: list[int] = []
    while True:
        with transaction.atomic():
            ids = list(due.order_by("deadline_at").select_for_update(skip_locked=True).values_list("pk", flat=True)[:CLOCK_BATCH])
            if ids:
                ChangeRequest.objects.filter(pk__in=ids).update(**{stamp: now})
                then(list(ChangeRequest.objects.filter(pk__in=ids).select_related("contract", "owner_team", "opened_by")))
        claimed += ids
        if len(ids) < CLOCK_BATCH:
            return claimed


def _waiting_reviews(requests: list[ChangeRequest]) -> dict[int, list[TeamReview]]:
    """The reviews of teams that are not ready yet (neither approved nor migrating by a
    date: a migrating team is never reminded nor escalated), per request, in one query."""
    waiting: dict[int, list[TeamReview]] = {r.pk: [] for r in requests}
    reviews = (TeamReview.objects.filter(change_request__in=requests)
               .exclude(status__in=[ReviewStatus.ACKNOWLEDGED, ReviewStatus.MIGRATING])
               .select_related("team").order_by("team__name"))
    for review in reviews:
        waiting[review.change_request_id].append(review)
    return waiting


def _remind(requests: list[ChangeRequest]) -> None:
    waiting = _waiting_reviews(requests)
    AuditEvent.objects.bulk_create([
        AuditEvent(**AuditEvent.fields_for(None, ChangeRequestAction.REMINDED, r,
                                           after={"waiting_for": [w.team.slug for w in waiting[r.pk]]}))
        for r in requests
    ])
    notifications.queue_reminders({r: [w.team for w in waiting[r.pk]] for r in requests})


def _escalate(requests: list[ChangeRequest]) -> None:
    waiting = _waiting_reviews(requests)
    AuditEvent.objects.bulk_create([
        AuditEvent(**AuditEvent.fields_for(None, ChangeRequestAction.ESCALATED, r, before={"escalated": False}, after={
            "escalated": True, "waiting_for": [w.team.slug for w in waiting[r.pk]],
            "deadline_at": r.deadline_at.isoformat()}))
        for r in requests
    ])
    labels = {r: [f"{w.team.slug} ({w.get_status_display().lower()})" for w in waiting[r.pk]] for r in requests}
    notifications.queue_escalations(labels, _owner_emails(requests))


def _owner_emails(requests: list[ChangeRequest]) -> dict[int, list[str]]:
    """Per request: the named owners of the bound datasets, and whoever opened it (one query)."""
    by_contract: dict[int, set[str]] = {}
    rows = (Dataset.objects.filter(contract_binding__contract_id__in={r.contract_id for r in requests}, owner__isnull=False)
            .exclude(owner__email="").values_list("contract_binding__contract_id", "owner__email"))
    for contract_id, email in rows:
        by_contract.setdefault(contract_id, set()).add(email)
    emails = {}
    for r in requests:
        found = set(by_contract.get(r.contract_id, set()))
        if r.opened_by_id and r.opened_by.email:
            found.add(r.opened_by.email)
        emails[r.pk] = sorted(found)
    return emails



def submit_version(document: dict, *, by, summary: str = ""):
    """Publish a document from the web or the API through the publish gate.

    A compatible version is published at once; a breaking one opens a change request
    (its summary is the publisher's explanation). Returns the gate's PublishOutcome."""
    refusal = publish_refusal(document, by=by)
    if refusal:
        raise PermissionDenied(refusal)
    outcome = publish_document(document, by=by)
    request = outcome.change_request
    if request is not None and summary.strip() and not request.summary and request.opened_by_label == actor_label(by):
        ChangeRequest.objects.filter(pk=request.pk).update(summary=summary.strip())
        request.summary = summary.strip()
    return outcome
