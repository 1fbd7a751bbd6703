"""Catalogue pages: browse by domain → subdomains → entity → version."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from registry_client.resolution import latest_release, semantic_sort

from contracts_app.diff import structural_diff
from contracts_app.models import Contract, ContractVersion
from contracts_app.publishing import check_in_required_modes
from registry.hooks import dataset_page_section


def _versions_by_semver(contract: Contract) -> list[ContractVersion]:
    by_version = {v.version: v for v in contract.versions.all()}
    return [by_version[v] for v in semantic_sort(by_version)]


@login_required
def catalogue(request: HttpRequest, path: str = "") -> HttpResponse:
    """Contracts under a path prefix (domain, then subdomains), grouped by the next path part."""
    parts = [p for p in path.strip("/").split("/") if p]
    contracts = Contract.objects.select_related("owner_team").prefetch_related(
        Prefetch("versions", queryset=ContractVersion.objects.only("id", "contract_id", "version", "published_at"))
    ).order_by("name")
    if parts:
        contracts = contracts.filter(domain=parts[0])
    tier = request.GET.get("tier", "")
    if tier:
        contracts = contracts.filter(meta__tier=tier)
    under = [c for c in contracts if c.path_parts[: len(parts)] == parts and len(c.path_parts) > len(parts)]
    if parts and not under:
        raise Http404(f"No contracts under {'/'.join(parts)}.")
    groups: dict[str, list[dict]] = {}
    for contract in under:
        versions = semantic_sort(v.version for v in contract.versions.all())
        child = contract.path_parts[len(parts)]
        leaf = len(contract.path_parts) == len(parts) + 1
        groups.setdefault(child, []).append({
            "contract": contract, "latest": latest_release(versions) or (versions[-1] if versions else None),
            "versions": versions, "leaf": leaf,
        })
    crumbs = [{"label": part, "path": "/".join(parts[: i + 1])} for i, part in enumerate(parts)]
    ctx = {
        "groups": [{"child": child, "child_path": "/".join([*parts, child]), "entries": entries}
                   for child, entries in sorted(groups.items())],
        "parts": parts, "crumbs": crumbs, "path": "/".join(parts), "tier": tier,
        "count": len(under),
    }
    return render(request, "contracts_app/catalogue.html", ctx)


def client_snippet(contract: Contract, version: str | None) -> str:
    pinned = f'"{version}"' if version else '"latest"'
    if contract.schema_type == "dataframe":
        return (
            "from registry_client import REGISTRY  # configured by $REGISTRY_URL\n\n"
            f'Model = REGISTRY.get_pandera_model("{contract.name}", version={pinned})\n'
            "validated = Model.validate(df)\n"
        )
    return (
        "from registry_client import REGISTRY  # configured by $REGISTRY_URL\n\n"
        f'document = REGISTRY.get_schema("{contract.name}", version={pinned})\n'
    )


@login_required
def contract_detail(request: HttpRequest, name: str) -> HttpResponse:
    contract = get_object_or_404(
        Contract.objects.select_related("owner_team").prefetch_related(
            Prefetch("versions", queryset=ContractVersion.objects.select_related("published_by"))
        ),
        name=name,
    )
    versions = _versions_by_semver(contract)
    wanted = request.GET.get("version") or latest_release([v.version for v in versions]) or (versions[-1].version if versions else None)
    current = next((v for v in versions if v.version == wanted), None)
    if versions and current is None:
        raise Http404(f"{name} has no version {wanted}.")
    document = current.document if current else {}
    ctx = {
        "contract": contract, "versions": list(reversed(versions)), "current": current, "document": document,
        "columns": document.get("columns") or [], "config": document.get("config") or {},
        "meta": {k: v for k, v in (contract.meta or {}).items() if v not in (None, "", [])},
        "snippet": client_snippet(contract, request.GET.get("version")),
        "sections": {k: document[k] for k in ("payload", "request", "response", "callbacks") if k in document},
        "crumbs": [{"label": part, "path": "/".join(contract.path_parts[: i + 1])} for i, part in enumerate(contract.path_parts[:-1])],
    }
    return render(request, "contracts_app/contract_detail.html", ctx)


@login_required
def contract_diff(request: HttpRequest, name: str) -> HttpResponse:
    contract = get_object_or_404(Contract.objects.prefetch_related("versions"), name=name)
    versions = _versions_by_semver(contract)
    by_version = {v.version: v for v in versions}
    old = request.GET.get("from") or (versions[-2].version if len(versions) > 1 else None)
    new = request.GET.get("to") or (versions[-1].version if versions else None)
    if old not in by_version or new not in by_version:
        raise Http404(f"{name}: choose two published versions to compare.")
    before, after = by_version[old], by_version[new]
    report = check_in_required_modes(contract, [before.document], after.document)
    ctx = {
        "contract": contract, "versions": versions, "old": old, "new": new,
        "changes": structural_diff(before.document, after.document), "report": report,
    }
    return render(request, "contracts_app/contract_diff.html", ctx)


@dataset_page_section(order=30)
def bound_contract_section(request: HttpRequest, dataset) -> str:
    binding = getattr(dataset, "contract_binding", None) if hasattr(dataset, "contract_binding") else None
    if binding is None:
        return ""
    return render_to_string("contracts_app/_dataset_section.html", {"contract": binding.contract}, request=request)
