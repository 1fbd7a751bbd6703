"""What incidents add to the core's pages and inbox: the dataset page's section
(status, reasons, checks, incidents with their timeline and the owner's
buttons), the contract page's status of each bound dataset, a badge in the
dataset list, and the inbox items of open incidents upstream of a team's jobs."""

from __future__ import annotations

from django.db import connection
from django.db.models import Exists, OuterRef, Q, Subquery
from django.template.loader import render_to_string
from django.urls import reverse

from contracts_app.hooks import contract_page_section
from incidents.models import STATE_CSS, ContractState, ContractStatus, Incident, IncidentTeam
from incidents.quality_slo import can_edit, human
from registry.hooks import Badge, InboxItem, dataset_list_badge, dataset_page_section, inbox_items
from registry.models import acts_for, is_governance_admin

SHOWN_INCIDENTS = 20


def can_handle(user, dataset) -> bool:
    """The owner team (or a governance admin) acknowledges and resolves."""
    return is_governance_admin(user) or (dataset.owner_team_id is not None and acts_for(user, dataset.owner_team))


@dataset_page_section(order=25)
def incidents_section(request, dataset) -> str:
    status = ContractStatus.objects.filter(dataset=dataset).select_related("contract").first()
    incidents = list(Incident.objects.filter(dataset=dataset).prefetch_related("events", "teams__team")
                     .order_by("-opened_at", "-id")[:SHOWN_INCIDENTS])
    slo = getattr(dataset, "quality_slo", None) if hasattr(dataset, "quality_slo") else None
    if status is None and not incidents and slo is None:
        return ""
    return render_to_string("incidents/_section.html", {
        "dataset": dataset, "status": status, "incidents": incidents, "can_handle": can_handle(request.user, dataset),
        "slo": slo, "slo_within": human(slo.within) if slo else "", "can_edit_slo": can_edit(request.user, dataset),
    }, request=request)


@contract_page_section
def contract_status_section(request, contract, bindings) -> str:
    statuses = list(ContractStatus.objects.filter(contract=contract).select_related("dataset")
                    .order_by("dataset__namespace", "dataset__name"))
    if not statuses:
        return ""
    return render_to_string("incidents/_contract_section.html", {"statuses": statuses}, request=request)


def _declares_checks() -> Q:
    """The status lists a check the contract declares."""
    if connection.vendor == "postgresql":
        return Q(checks__contains=[{"declared": True}])  # jsonb containment
    # SQLite (the embedded demo) has no JSON containment: its text, as Django writes it, says as much.
    return Q(checks__icontains='"declared": true')


def _annotate(datasets):
    # A list badge flags trouble: a failing contract, or one whose declared checks have
    # not all reported. "Unverified" for want of declared checks (or of a published
    # version) is no trouble of the data's and would be noise on every bound dataset.
    troubled = ContractStatus.objects.filter(
        Q(status=ContractState.FAILING) | Q(status=ContractState.UNVERIFIED) & _declares_checks())
    return datasets.annotate(
        contract_state=Subquery(troubled.filter(dataset=OuterRef("pk")).values("status")[:1]),
        has_open_incident=Exists(Incident.objects.unresolved().filter(dataset=OuterRef("pk"))))


def _badge(dataset) -> Badge | None:
    state = getattr(dataset, "contract_state", None)
    if state is None:
        return None
    text = {ContractState.FAILING: "contract failing", ContractState.UNVERIFIED: "contract unverified"}[state]
    if getattr(dataset, "has_open_incident", False):
        text += " · incident"
    return Badge(text, STATE_CSS.get(state, ""), "The contract's status from the latest final check results, "
                 "freshness and drift", anchor="contract-status")


dataset_list_badge(_annotate, _badge)


@inbox_items(order=30)
def open_incidents(user, team_ids: list[int], limit: int | None = None) -> list[InboxItem]:
    """Open incidents on datasets the teams own, or upstream of their jobs (two queries)."""
    if not team_ids:
        return []
    rows = (IncidentTeam.objects.filter(team_id__in=team_ids, incident__state__in=["open", "acknowledged"])
            .select_related("incident__dataset", "team").order_by("incident__opened_at", "incident_id"))[:limit]
    items = []
    for row in rows:
        incident = row.incident
        dataset = incident.dataset
        label = f"{dataset.namespace}/{dataset.name}"
        if row.owner:
            title = (f"{row.team.name} must handle incident #{incident.pk} on {label}: {incident.summary}"
                     if incident.state == "open" else
                     f"{row.team.name} acknowledged incident #{incident.pk} on {label}; resolve it when it is fixed")
            kind = "incident_owned"
        else:
            title = f"Upstream incident #{incident.pk} on {label} reaches {row.team.name}'s jobs: {incident.summary}"
            kind = "incident_upstream"
        detail = " · ".join(" → ".join(path) for path in row.paths[:3])
        items.append(InboxItem(kind=kind, title=title, key=f"incident:{incident.pk}:{row.team_id}", team_id=row.team_id,
                               url=reverse("dataset-detail", args=[dataset.pk]) + f"#incident-{incident.pk}",
                               due=incident.opened_at, detail=detail))
    return items
