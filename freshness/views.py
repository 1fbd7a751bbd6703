from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from freshness.constants import STATUS_CSS, STATUS_ORDER, FreshnessStatus
from freshness.evaluation import set_slo, slo_summary
from freshness.forms import SLOForm
from freshness.models import DatasetFreshness, EvaluatorState, FreshnessTransition
from registry.models import Dataset


@login_required
@require_POST
def slo_edit(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
    form = SLOForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{form.fields[name].label}: {' '.join(errs)}" for name, errs in form.errors.items())
        messages.error(request, f"The SLO was not saved. {errors}")
        return redirect(dataset.get_absolute_url() + "#freshness")
    try:
        row = set_slo(dataset, by=request.user, **form.cleaned_data)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
    else:
        messages.success(request, f"Freshness SLO of {dataset}: {slo_summary(row)}.")
    return redirect(dataset.get_absolute_url() + "#freshness")


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    """Counts by status, the evaluator's last sweep and the latest transitions everywhere."""
    counts = dict(DatasetFreshness.objects.values_list("status").annotate(n=Count("pk")).order_by())
    with_row = sum(counts.values())
    counts[FreshnessStatus.NO_SLO] = counts.get(FreshnessStatus.NO_SLO, 0) + Dataset.objects.count() - with_row
    ctx = {
        "counts": [{"status": s, "label": FreshnessStatus(s).label, "css": STATUS_CSS.get(s, ""), "n": counts.get(s, 0)}
                   for s in STATUS_ORDER],
        "state": EvaluatorState.objects.filter(pk=1).first(),
        "transitions": FreshnessTransition.objects.select_related("dataset")[:50],
    }
    return render(request, "freshness/overview.html", ctx)
