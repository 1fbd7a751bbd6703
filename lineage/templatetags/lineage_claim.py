"""The job page's "this job is ours" form, for a team member on a job no rule attributes."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from registry.jobs import DecidedBy
from registry.models import Team

register = template.Library()


@register.simple_tag(takes_context=True)
def job_claim_form(context, job) -> SafeString:
    """Offered when only the posting token's team, or nobody, owns the job (one query: the viewer's teams)."""
    owner = getattr(job, "owner", None)
    if owner is None or owner.rule not in (DecidedBy.TOKEN, DecidedBy.NOBODY):
        return mark_safe("")
    request = context.get("request")
    teams = list(Team.objects.of_user(request.user)) if request is not None else []
    if not teams:
        return mark_safe("")
    return mark_safe(render_to_string("lineage/_job_claim.html", {"job": job, "teams": teams,  # noqa: S308 - autoescaped
                                                                   "token_team": owner.team}, request=request))
