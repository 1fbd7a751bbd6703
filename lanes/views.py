"""The lane page: a contract's lanes, their dates, and who still reads each; the owner
team sets dates, a governance admin extends a sunset."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from contracts_app.hooks import contract_page_section
from contracts_app.models import Contract
from lanes.answers import migrating_off
from lanes.evidence import lane_usage
from lanes.models import Lane, LaneError
from registry.models import AuditEvent, acts_for, is_governance_admin


class DatesForm(forms.Form):
    deprecation_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sunset_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    override_reason = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 40}),
                                      help_text="Governance admins: why the sunset may come before a team's migration date.")


class ExtendForm(forms.Form):
    until = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    reason = forms.CharField(widget=forms.TextInput(attrs={"size": 40}))


def _contract(name: str) -> Contract:
    return get_object_or_404(Contract.objects.select_related("owner_team"), name=name)


@login_required
def lane_page(request: HttpRequest, name: str) -> HttpResponse:
    contract = _contract(name)
    today = timezone.localdate()
    usage = lane_usage([contract])[contract.pk]
    may_set = is_governance_admin(request.user) or bool(contract.owner_team_id and acts_for(request.user, contract.owner_team))
    rows = []
    for u in reversed(usage):
        lane = u.lane
        rows.append({
            "usage": u, "lane": lane,
            "deprecated": lane is not None and lane.is_deprecated(today),
            "sunset": lane is not None and lane.is_past_sunset(today),
            "migrating": migrating_off(contract.pk, u.major),
            "dates_form": DatesForm(initial={"deprecation_date": lane.deprecation_date if lane else None,
                                             "sunset_date": lane.sunset_date if lane else None}) if may_set else None,
        })
    history = list(AuditEvent.objects.filter(object_type="lanes.lane", object_id__in=[
        str(u.lane.pk) for u in usage if u.lane]).order_by("-at", "-id")[:50])
    return render(request, "lanes/lane_page.html", {
        "contract": contract, "rows": rows, "today": today, "history": history,
        "extend_form": ExtendForm() if is_governance_admin(request.user) else None,
    })


def _act(request: HttpRequest, contract: Contract, action, done: str) -> HttpResponse:
    try:
        action()
    except PermissionDenied as exc:
        messages.error(request, str(exc))
    except LaneError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done)
    return redirect(reverse("lane-page", args=[contract.name]))


@login_required
@require_POST
def lane_set_dates(request: HttpRequest, name: str, major: int) -> HttpResponse:
    contract = _contract(name)
    form = DatesForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Dates are YYYY-MM-DD.")
        return redirect(reverse("lane-page", args=[contract.name]))
    data = form.cleaned_data
    lane = Lane.of(contract, major)
    return _act(request, contract, lambda: lane.set_dates(
        deprecation_date=data["deprecation_date"], sunset_date=data["sunset_date"], by=request.user,
        override_reason=data["override_reason"]), f"Lane {lane.label}'s dates are set.")


@login_required
@require_POST
def lane_extend(request: HttpRequest, name: str, major: int) -> HttpResponse:
    contract = _contract(name)
    form = ExtendForm(request.POST)
    if not form.is_valid():
        messages.error(request, "An extension needs a date (YYYY-MM-DD) and a reason.")
        return redirect(reverse("lane-page", args=[contract.name]))
    lane = Lane.of(contract, major)
    return _act(request, contract, lambda: lane.extend(until=form.cleaned_data["until"], by=request.user,
                                                       reason=form.cleaned_data["reason"]),
                f"Lane {lane.label}'s sunset is extended to {form.cleaned_data['until']}.")


@contract_page_section
def lanes_section(request, contract, bindings) -> str | None:
    """On the contract page: its lanes in one line each, linking to the lane page."""
    # The page's versions and bindings are reused: only lanes and their readers are asked.
    usage = lane_usage([contract], bound={b.dataset_id: b.contract_id for b in bindings})[contract.pk]
    if not usage:
        return None
    today = timezone.localdate()
    return render_to_string("lanes/_contract_section.html", {
        "contract": contract, "today": today,
        "lanes": [{"usage": u, "deprecated": u.lane is not None and u.lane.is_deprecated(today),
                   "sunset": u.lane is not None and u.lane.is_past_sunset(today)} for u in reversed(usage)],
    }, request=request)
