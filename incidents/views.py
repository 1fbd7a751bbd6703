"""The owner's buttons on the dataset page: acknowledge, resolve, the quality SLO."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from incidents.handling import acknowledge, resolve
from incidents.models import Incident
from incidents.quality_slo import set_quality_slo
from registry.models import Dataset, RegistryError


def _back(dataset_id: int, anchor: str):
    return redirect(reverse("dataset-detail", args=[dataset_id]) + f"#{anchor}")


@login_required
@require_POST
def acknowledge_view(request, pk: int):
    incident = get_object_or_404(Incident.objects.select_related("dataset__owner_team"), pk=pk)
    try:
        acknowledge(incident, by=request.user)
        messages.success(request, f"Incident #{incident.pk} acknowledged.")
    except (PermissionDenied, RegistryError) as exc:
        messages.error(request, str(exc))
    return _back(incident.dataset_id, f"incident-{incident.pk}")


@login_required
@require_POST
def resolve_view(request, pk: int):
    incident = get_object_or_404(Incident.objects.select_related("dataset__owner_team"), pk=pk)
    try:
        resolve(incident, by=request.user, note=request.POST.get("note", ""))
        messages.success(request, f"Incident #{incident.pk} resolved.")
    except (PermissionDenied, RegistryError) as exc:
        messages.error(request, str(exc))
    return _back(incident.dataset_id, f"incident-{incident.pk}")


@login_required
@require_POST
def quality_slo_view(request, pk: int):
    dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
    raw = (request.POST.get("within_minutes") or "").strip()
    try:
        within = timedelta(minutes=int(raw)) if raw else None
        set_quality_slo(dataset, within, by=request.user)
        messages.success(request, "Quality SLO saved." if within else "Quality SLO removed.")
    except PermissionDenied as exc:
        messages.error(request, str(exc))
    except ValueError:
        messages.error(request, "The quality SLO is a whole number of minutes, at least 1.")
    return _back(dataset.pk, "contract-status")
