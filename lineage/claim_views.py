"""A team member says "this job is ours" on a job no rule attributes (registry.ownership.claim_job)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from lineage.models import Job
from registry.models import Team
from registry.ownership import claim_job


@login_required
@require_POST
def job_claim(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=pk)
    team = Team.objects.filter(pk=request.POST.get("team") or 0).first()
    if team is None:
        messages.error(request, "Choose one of your teams.")
        return redirect(job)
    try:
        saved = claim_job(job.namespace, job.name, team, by=request.user)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", None) or [str(exc)]))
    else:
        messages.success(request, f"{job} is now {team}'s job (ownership rules version {saved.version}); "
                                  "its readings count for the team.")
    return redirect(job)
