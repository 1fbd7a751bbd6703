"""Catalogue pages: browse by domain → subdomains → entity → version; a contract's
mode and bindings, set by its owner team on its page and on the dataset page."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from registry_client.resolution import latest_release, semantic_sort
from registry_client.versions import lane_of, latest_in_lane

from contracts_app.dbt import DbtArtefactError, import_project, read_project
from contracts_app.diff import column_changes, structural_diff
from contracts_app.drafting import CannotDraft, draft_from_observed_schema
from contracts_app.forms import BindByNameForm, BindToContractForm, DbtImportForm, ModeForm
from contracts_app.hooks import (
    contract_page_sections,
    lane_dates_of,
    waiting_versions,
    with_waiting_versions,
)
from contracts_app.models import (
    Contract,
    ContractVersion,
    DatasetBinding,
    Draft,
    SchemaType,
    field_names,
    is_weaker,
)
from contracts_app.publishing import check_in_required_modes
from contracts_app.schema_table import contract_tables
from contracts_app.yamlio import ContractYamlError, load_yaml
from registry.hooks import dataset_list_badge, dataset_page_section, observed_schemas_of
from registry.models import Dataset, Team, acts_for, is_governance_admin
from registry.pagination import keyset_page_of
from registry.views import act_and_redirect


def _versions_by_semver(contract: Contract) -> list[ContractVersion]:
    by_version = {v.version: v for v in contract.versions.all()}
    return [by_version[v] for v in semantic_sort(by_version)]


@login_required
def catalogue(request: HttpRequest, path: str = "") -> HttpResponse:
    """Contracts under a path prefix (domain, then subdomains), grouped by the next path
    part; searched (name, description, field names) and filtered (tier, kind, owner team).
    Each shows the versions waiting on someone (annotated: no query of their own).

    A page at a time, by name (keyset: registry.pagination), through the (domain, name)
    index under a domain and the names' unique index above it; the total is counted up to
    CATALOGUE_COUNT_CAP ("1,000+"). A filter or a search reads the index from the page's
    first row until it has a page of contracts that pass, so one that few pass reads
    further."""
    parts = [p for p in path.strip("/").split("/") if p]
    wanted = CatalogueFilters.of(request)
    # A name is its path parts joined by dots (registry_client.identity): a contract under
    # a.b is one named "a.b.<more>".
    contracts = wanted.apply(Contract.objects.order_by("name"))
    if parts:
        contracts = contracts.filter(domain=parts[0])
    if len(parts) > 1:
        contracts = contracts.filter(name__startswith=".".join(parts) + ".")
    if wanted.q:
        contracts = wanted.candidates(contracts)
    page = keyset_page_of(request, with_waiting_versions(contracts.select_related("owner_team")).prefetch_related(
        Prefetch("versions", queryset=ContractVersion.objects.only("id", "contract_id", "version", "published_at"))),
        key=("name",))
    under = [c for c in page.object_list if len(c.path_parts) > len(parts)]
    if parts and not under and not wanted and page.first:
        raise Http404(f"No contracts under {'/'.join(parts)}.")
    entries = []
    dates = lane_dates_of([c.pk for c in under])
    today = timezone.localdate()
    for contract in under:
        ids = {v.version: v.pk for v in contract.versions.all()}
        versions = semantic_sort(ids)
        latest = latest_release(versions) or (versions[-1] if versions else None)
        entries.append({"contract": contract, "latest": latest, "latest_id": ids.get(latest), "versions": versions,
                        "leaf": len(contract.path_parts) == len(parts) + 1, "waiting": waiting_versions(contract),
                        "older_lanes": older_lanes(contract.pk, versions, latest, dates, today)})
    if wanted.q:
        entries = wanted.search(entries)
        # The search keeps what the page's candidates match: the total of this page alone.
        found = len(entries)
        count = f"{found} contract{pluralize(found)}" + (" on this page" if page.has_other_pages() else "")
    else:
        found = contracts[: CATALOGUE_COUNT_CAP + 1].count()
        count = (f"{CATALOGUE_COUNT_CAP:,}+ contracts" if found > CATALOGUE_COUNT_CAP
                 else f"{found} contract{pluralize(found)}")
    groups: dict[str, list[dict]] = {}
    for entry in entries:
        groups.setdefault(entry["contract"].path_parts[len(parts)], []).append(entry)
    crumbs = [{"label": part, "path": "/".join(parts[: i + 1])} for i, part in enumerate(parts)]
    ctx = {
        "groups": [{"child": child, "child_path": "/".join([*parts, child]), "entries": entries}
                   for child, entries in sorted(groups.items())],
        "parts": parts, "crumbs": crumbs, "path": "/".join(parts), "filters": wanted,
        "tier": wanted.tier, "count": count, "page": page,
        "kinds": SchemaType.choices, "tiers": CATALOGUE_TIERS,
        # The teams that own a contract: the owner filter's choices (a probe of the
        # contracts' owner index per team, not a read of every contract).
        "owner_teams": Team.objects.filter(Exists(Contract.objects.filter(owner_team=OuterRef("pk")))).order_by("name"),
    }
    return render(request, "contracts_app/catalogue.html", ctx)


# The catalogue's total counts this many contracts at most; past it, it says "1,000+".
CATALOGUE_COUNT_CAP = 1000
CATALOGUE_TIERS = ("bronze", "silver", "gold")


@dataclass
class CatalogueFilters:
    """What the catalogue's form asks for; empty strings ask for nothing."""

    q: str = ""
    tier: str = ""
    kind: str = ""
    owner: str = ""

    @classmethod
    def of(cls, request: HttpRequest) -> CatalogueFilters:
        return cls(**{name: request.GET.get(name, "").strip() for name in ("q", "tier", "kind", "owner")})

    def __bool__(self) -> bool:
        return any((self.q, self.tier, self.kind, self.owner))

    def apply(self, contracts):
        if self.tier:
            contracts = contracts.filter(meta__tier=self.tier)
        if self.kind:
            contracts = contracts.filter(schema_type=self.kind)
        if self.owner:
            contracts = contracts.filter(owner_team__slug=self.owner)
        return contracts

    def candidates(self, contracts):
        """The contracts the search may keep (`search` then decides on the page's): the
        words in the name or the description, or in the document of one of its versions."""
        return contracts.filter(Q(name__icontains=self.q) | Q(description__icontains=self.q)
                                | Exists(ContractVersion.objects.filter(contract=OuterRef("pk"),
                                                                        document__icontains=self.q)))

    def search(self, entries: list[dict]) -> list[dict]:
        """The entries whose name or description holds the words, or whose latest version
        has a field whose name holds them (one query, for the documents that mention the
        text at all). Each keeps the fields that matched, for the page to show."""
        needle = self.q.casefold()
        by_text = {e["contract"].pk for e in entries
                   if needle in e["contract"].name.casefold() or needle in e["contract"].description.casefold()}
        latest_ids = [e["latest_id"] for e in entries if e["latest_id"] and e["contract"].pk not in by_text]
        matched_fields = {}
        if latest_ids:
            for contract_id, document in (ContractVersion.objects.filter(pk__in=latest_ids, document__icontains=self.q)
                                          .values_list("contract_id", "document")):
                found = [name for name in field_names(document) if needle in name.casefold()]
                if found:
                    matched_fields[contract_id] = found
        kept = []
        for entry in entries:
            pk = entry["contract"].pk
            if pk in by_text or pk in matched_fields:
                kept.append({**entry, "matched_fields": matched_fields.get(pk, [])})
        return kept


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


def _as_authored(version: ContractVersion) -> dict:
    """The version's document with its properties in the order they were written: the
    database's JSON keeps no key order, the YAML published with it does."""
    if version.yaml_text:
        try:
            authored = load_yaml(version.yaml_text, stored=True)
        except ContractYamlError:
            authored = None
        if authored == version.document:
            return authored
    return version.document


def older_lanes(contract_id: int, versions: list[str], latest: str | None, dates: dict, today) -> list[dict]:
    """The lanes below the newest one that still have a release ("2.x: 2.4, deprecated"), newest first."""
    if latest is None:
        return []
    newest = lane_of(latest)
    found = []
    for major in sorted({lane_of(v) for v in versions if lane_of(v) < newest}, reverse=True):
        release = latest_in_lane(versions, major)
        if release is None:
            continue
        lane = dates.get((contract_id, major)) or {}
        sunset, deprecated = lane.get("sunset_date"), lane.get("deprecation_date")
        found.append({"label": f"{major}.x", "latest": release, "sunset": sunset,
                      "state": "past its sunset" if sunset and today >= sunset
                      else "deprecated" if deprecated and today >= deprecated else ""})
    return found


@login_required
def contract_detail(request: HttpRequest, name: str) -> HttpResponse:
    contract = get_object_or_404(
        with_waiting_versions(Contract.objects.select_related("owner_team")).prefetch_related(
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
    bindings = list(contract.bindings.select_related("dataset").annotate(consumer_count=Count("dataset__consumers"))
                    .order_by("dataset__namespace", "dataset__name"))
    can_manage = contract.can_be_managed_by(request.user)
    ctx = {
        "contract": contract, "versions": list(reversed(versions)), "current": current, "document": document,
        # Versions not live yet because someone must act (a change request, a draft), each linking there.
        "waiting": waiting_versions(contract),
        "columns": document.get("columns") or [], "config": document.get("config") or {},
        "meta": {k: v for k, v in (contract.meta or {}).items() if v not in (None, "", [])},
        "snippet": client_snippet(contract, request.GET.get("version")),
        # An event or api contract's schemas as property tables (a dataframe's are its columns).
        "schema_tables": contract_tables(_as_authored(current)) if current and contract.schema_type != "dataframe" else [],
        "crumbs": [{"label": part, "path": "/".join(contract.path_parts[: i + 1])} for i, part in enumerate(contract.path_parts[:-1])],
        "bindings": bindings,
        # Only the datasets' modes that ask for more than the contract's own are worth a mention.
        "dataset_modes": sorted({b.dataset.compatibility_mode for b in bindings
                                 if is_weaker(contract.compatibility_mode, b.dataset.compatibility_mode)}),
        "weakenings": list(contract.weakenings()[:10]),
        "can_manage": can_manage,
        "mode_form": ModeForm(initial={"compatibility_mode": contract.compatibility_mode}) if can_manage else None,
        "bind_form": BindByNameForm() if can_manage else None,
    }
    ctx["sections"] = contract_page_sections(request, contract, bindings)
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
        "contract": contract, "versions": versions, "old": old, "new": new, "report": report,
        # A dataframe contract is read column by column; the checker's JSON-Schema findings
        # about its row schema are folded into those lines.
        "column_changes": column_changes(before.document, after.document, [c.to_dict() for c in report.changes])
        if contract.schema_type == "dataframe" else None,
        "changes": structural_diff(before.document, after.document),
    }
    return render(request, "contracts_app/contract_diff.html", ctx)


def _back(request: HttpRequest, contract: Contract):
    """Where a form came from (the contract page or a dataset page), if it is ours."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return contract


@login_required
@require_POST
def contract_set_mode(request: HttpRequest, name: str) -> HttpResponse:
    contract = get_object_or_404(Contract.objects.select_related("owner_team"), name=name)
    form = ModeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose one of the compatibility modes.")
        return redirect(_back(request, contract))
    mode = form.cleaned_data["compatibility_mode"]
    return act_and_redirect(request, _back(request, contract), lambda: contract.set_mode(mode, by=request.user),
                            f"{contract.name} is now checked under {mode}.")


@login_required
@require_POST
def contract_bind(request: HttpRequest, name: str) -> HttpResponse:
    contract = get_object_or_404(Contract.objects.select_related("owner_team"), name=name)
    form = BindByNameForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect(_back(request, contract))
    dataset = form.cleaned_data["dataset"]
    return act_and_redirect(request, _back(request, contract), lambda: contract.bind(dataset, by=request.user),
                            f"{dataset} is now bound to {contract.name}.")


@login_required
@require_POST
def contract_unbind(request: HttpRequest, name: str, dataset: int) -> HttpResponse:
    contract = get_object_or_404(Contract.objects.select_related("owner_team"), name=name)
    bound = get_object_or_404(Dataset, pk=dataset)
    return act_and_redirect(request, _back(request, contract), lambda: contract.unbind(bound, by=request.user),
                            f"{bound} is no longer bound to {contract.name}.")


@login_required
@require_POST
def dataset_bind(request: HttpRequest, pk: int) -> HttpResponse:
    """The dataset page's form: bind this dataset to one of the contracts the person manages."""
    dataset = get_object_or_404(Dataset, pk=pk)
    form = BindToContractForm(request.POST, user=request.user)
    if not form.is_valid():
        messages.error(request, "Choose one of the contracts your teams own.")
        return redirect(dataset)
    contract = form.cleaned_data["contract"]
    return act_and_redirect(request, dataset, lambda: contract.bind(dataset, by=request.user),
                            f"{dataset} is now bound to {contract.name}.")


@dataset_page_section(order=30)
def bound_contract_section(request: HttpRequest, dataset) -> str:
    """The contract describing this dataset, its mode and, for its owner team, the forms to
    change them; for an unbound dataset, a form to bind it to one of the person's contracts."""
    binding = DatasetBinding.objects.select_related("contract__owner_team").filter(dataset=dataset).first()
    ctx: dict = {"dataset": dataset, "binding": binding}
    if binding is not None:
        contract = binding.contract
        can_manage = contract.can_be_managed_by(request.user)
        ctx.update(contract=contract, can_manage=can_manage,
                   dataset_adds=is_weaker(contract.compatibility_mode, dataset.compatibility_mode),
                   mode_form=ModeForm(initial={"compatibility_mode": contract.compatibility_mode}) if can_manage else None)
    else:
        # Listed once here; the select is written from this list, so rendering queries nothing more.
        # A governance admin may manage every contract: past BINDABLE_SHOWN, a name is typed
        # (the first ones suggested) rather than every contract of the registry listed.
        bindable = list(Contract.objects.manageable_by(request.user).order_by("name").only("name")[: BINDABLE_SHOWN + 1])
        ctx["bindable"] = bindable[:BINDABLE_SHOWN]
        ctx["bindable_typed"] = len(bindable) > BINDABLE_SHOWN
        ctx.update(_drafting_context(request, dataset))
        if not bindable and not ctx["can_draft"] and ctx["pending_draft"] is None:
            return ""
    return render_to_string("contracts_app/_dataset_section.html", ctx, request=request)


# The dataset page's bind form lists this many contracts at most; past it, the name is typed.
BINDABLE_SHOWN = 200


def _drafting_context(request: HttpRequest, dataset) -> dict:
    """For an unbound dataset: its pending draft, and whether this person may draft one from
    its observed schema (an owner-team member or an admin, and lineage has seen its columns).
    Nothing to ask for an unowned dataset (it is claimed first); a query or three otherwise."""
    if dataset.owner_team_id is None:
        return {"pending_draft": None, "can_draft": False}
    pending = Draft.objects.pending().filter(dataset=dataset).only("pk", "contract_name", "version").first()
    may = pending is None and (is_governance_admin(request.user) or acts_for(request.user, dataset.owner_team))
    observed = observed_schemas_of([dataset.pk]).get(dataset.pk) if may else None
    return {"pending_draft": pending, "can_draft": bool(observed and observed.get("columns"))}


@login_required
@require_POST
def dataset_draft(request: HttpRequest, pk: int) -> HttpResponse:
    """"Draft a contract" on a dataset page: from its observed schema into the owner team's queue."""
    dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
    if dataset.owner_team_id is None or not (is_governance_admin(request.user)
                                             or acts_for(request.user, dataset.owner_team)):
        raise PermissionDenied("Only a member of the dataset's owner team (or a governance admin) drafts its contract.")
    try:
        change = draft_from_observed_schema(dataset, by=request.user)
    except CannotDraft as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect(dataset)
    messages.success(request, f"{change.action.capitalize()}: draft {change.name} {change.version}"
                              f"{f' ({change.detail})' if change.detail else ''}; it waits for review here.")
    return redirect(change.draft) if change.draft is not None else redirect(dataset)


@login_required
def dbt_import(request: HttpRequest) -> HttpResponse:
    """A governance admin uploads a dbt project's manifest (and catalog): a dry run shows what
    would change, a real run imports it (contracts_app.dbt) and lists what it did."""
    if not is_governance_admin(request.user):
        raise PermissionDenied("Importing dbt artefacts is for governance admins.")
    report, error = None, ""
    if request.method == "POST":
        form = DbtImportForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                project = read_project(data["manifest_json"], data["catalog_json"])
                report = import_project(project, namespace=data["namespace"] or None, by=request.user,
                                        dry_run=data["dry_run"])
            except DbtArtefactError as exc:
                error = " ".join(exc.messages)
    else:
        form = DbtImportForm()
    return render(request, "contracts_app/dbt_import.html", {"form": form, "report": report, "error": error})


def _annotate_contract_mode(datasets):
    """The dataset list's mode column shows the bound contract's mode (a subquery; the
    contract's mode is the mode, docs/compat.md); an unbound dataset keeps its own."""
    mode = DatasetBinding.objects.filter(dataset=OuterRef("pk")).values("contract__compatibility_mode")
    return datasets.annotate(contract_mode=Subquery(mode[:1]))


dataset_list_badge(_annotate_contract_mode, lambda dataset: None)  # an annotation, no badge
