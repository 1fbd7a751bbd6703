"""The draft review pages: the owner team's queue, and a draft's page with the publish
gate's verdict, the impact preview and Approve (members of the owner team only)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from change_requests.api.drafts import review_of
from contracts_app.drafting import approve_draft
from contracts_app.models import Draft, DraftState
from contracts_app.yamlio import dump_plain_yaml
from registry.models import Team, is_governance_admin
from registry.pagination import keyset_page_of
from registry.views import act_and_redirect


@login_required
def draft_queue(request: HttpRequest) -> HttpResponse:
    """Pending drafts, per owner team: the user's teams (all teams for a governance admin),
    or `?team=<slug>`. One query for a page of drafts (a keyset page: an import of a
    thousand models is many pages, each costing one), one for the teams."""
    teams = Team.objects.all() if is_governance_admin(request.user) else Team.objects.of_user(request.user)
    slug = request.GET.get("team", "")
    if slug:
        teams = Team.objects.filter(slug=slug)
    drafts = Draft.objects.pending().filter(owner_team__in=teams).select_related("owner_team", "dataset", "edited_by")
    page = keyset_page_of(request, drafts, key=("owner_team__name", "created_at", "pk"))
    queues: dict[Team, list[Draft]] = {}
    for draft in page.object_list:
        queues.setdefault(draft.owner_team, []).append(draft)
    return render(request, "change_requests/draft_queue.html",
                  {"queues": queues, "page": page, "team": slug, "my_teams": list(Team.objects.of_user(request.user))})


@login_required
def draft_detail(request: HttpRequest, pk: int) -> HttpResponse:
    draft = get_object_or_404(Draft.objects.select_related("owner_team", "dataset", "edited_by", "reviewed_by"), pk=pk)
    return render(request, "change_requests/draft_detail.html",
                  {"draft": draft, "yaml": dump_plain_yaml(draft.document), **review_of(draft, request.user)})


@login_required
@require_POST
def draft_approve(request: HttpRequest, pk: int) -> HttpResponse:
    draft = get_object_or_404(Draft.objects.select_related("owner_team"), pk=pk)
    try:
        outcome = approve_draft(draft, by=request.user)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", None) or [str(exc)]))
        return redirect(draft)
    draft.refresh_from_db()
    if draft.state == DraftState.CHANGE_REQUESTED and outcome.change_request is not None:
        messages.warning(request, outcome.message)
        return redirect(outcome.change_request)
    messages.success(request, f"Approved: {outcome.message}.")
    return redirect("contract-detail", draft.contract_name)


@login_required
@require_POST
def draft_discard(request: HttpRequest, pk: int) -> HttpResponse:
    draft = get_object_or_404(Draft.objects.select_related("owner_team"), pk=pk)
    return act_and_redirect(request, draft, lambda: draft.discard(by=request.user), f"Discarded {draft}.")
