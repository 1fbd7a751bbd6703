from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from freshness.constants import STATUS_CSS, STATUS_ORDER, FreshnessStatus
from freshness.evaluation import set_slo, slo_summary
from freshness.forms import SLOForm
from freshness.models import EvaluatorState, FreshnessTransition
from freshness.querysets import (
    STATUS_VIEW_DEFAULT_SORT,
    STATUS_VIEW_SORTS,
    needing_attention,
    status_counts,
)
from registry.hooks import annotate_dataset_list
from registry.models import Dataset, Team
from registry.pagination import segmented_page_of

# The status view's status filter: what it lists under each choice (the first is the default).
STATUS_FILTERS = {
    "": ("Stale or warning", (FreshnessStatus.STALE, FreshnessStatus.WARNING)),
    "stale": ("Stale", (FreshnessStatus.STALE,)),
    "warning": ("Warning", (FreshnessStatus.WARNING,)),
    "unknown": ("Never written", (FreshnessStatus.UNKNOWN,)),
}
SORT_LABELS = {"dataset": "Dataset", "team": "Owner team", "since": "Since", "last_write": "Last write",
               "deadline": "Next deadline"}


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
    """The status view: what is stale (or about to be) now, whose it is, since when, its last
    write and next deadline, with its drift and failing checks; sortable, filterable by owner
    team. Below it, the counts by status, the evaluator's last sweep and the latest transitions."""
    counts = status_counts()
    teams = list(Team.objects.order_by("name"))
    team = next((t for t in teams if t.slug == request.GET.get("team")), None)
    status = request.GET.get("status", "")
    if status not in STATUS_FILTERS:
        status = ""
    sort = request.GET.get("sort", STATUS_VIEW_DEFAULT_SORT)
    if sort.removeprefix("-") not in STATUS_VIEW_SORTS:
        sort = STATUS_VIEW_DEFAULT_SORT
    rows = needing_attention(annotate_dataset_list(Dataset.objects.all()), STATUS_FILTERS[status][1],
                             team_id=team.pk if team else None, sort=sort)
    page = segmented_page_of(request, rows)
    now = timezone.now()
    for dataset in page.object_list:
        dataset.fresh_css = STATUS_CSS.get(dataset.freshness.status, "")
        dataset.fresh_for = now - dataset.freshness.status_since
    ctx = {
        "counts": [{"status": s, "label": FreshnessStatus(s).label, "css": STATUS_CSS.get(s, ""),
                    # "1,000+" past the cap
                    "n": f"{counts[s][0]:,}{'+' if counts[s][1] else ''}"} for s in STATUS_ORDER],
        "state": EvaluatorState.objects.filter(pk=1).first(),
        "transitions": FreshnessTransition.objects.select_related("dataset")[:50],
        "page": page, "teams": teams, "team": team, "status": status, "sort": sort,
        "status_filters": [(value, label) for value, (label, _) in STATUS_FILTERS.items()],
        "columns": [_sort_column(key, label, request, sort) for key, label in SORT_LABELS.items()],
    }
    return render(request, "freshness/overview.html", ctx)


def _sort_column(key: str, label: str, request: HttpRequest, sort: str) -> dict:
    """A sortable header: its link flips the order when the table is already sorted by it,
    and it says how it is sorted (aria-sort) for screen readers."""
    query = request.GET.copy()
    for param in ("page", "after", "before"):  # a new order starts from its first page
        query.pop(param, None)
    current = sort.removeprefix("-") == key
    query["sort"] = ("" if sort.startswith("-") else "-") + key if current else key
    return {"key": key, "label": label, "url": "?" + query.urlencode(),
            "aria_sort": ("descending" if sort.startswith("-") else "ascending") if current else None}
