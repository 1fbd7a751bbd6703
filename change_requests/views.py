"""Change-request pages: the list and the review page, with its actions."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

import yaml
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, OuterRef, Prefetch, Subquery
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from registry_client.compat.budget import BUDGET_KINDS
from registry_client.compat.columns import describe_changes

from change_requests.impact import PreviewError, preview
from change_requests.models import (
    ChangeRequest,
    ChangeRequestState,
    ReviewStatus,
    TeamAssessment,
    TeamReview,
)
from change_requests.workflows import submit_version, verify_change_request
from contracts_app.models import Contract
from contracts_app.publishing import BREAKING, PUBLISHED, REFUSED, UNCHANGED
from contracts_app.yamlio import ContractYamlError, dump_plain_yaml, load_yaml
from registry.hooks import Badge, count_badge, dataset_list_badge, dataset_page_section
from registry.models import AuditEvent, Dataset, Team, audit_type
from registry.pagination import segmented_page_of
from registry.views import act_and_redirect


@login_required
def change_request_list(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state", "")
    requests = ChangeRequest.objects.for_listing()
    if state == "unfinished":
        requests = requests.unfinished()
    elif state in ChangeRequestState.values:
        requests = requests.filter(state=state)
    ctx = {"page": segmented_page_of(request, requests.in_listing_order()), "state": state,
           "states": ChangeRequestState.choices}
    return render(request, "change_requests/list.html", ctx)


@dataclass
class DiffRow:
    kind: str  # equal | replace | delete | insert
    left_no: int | None
    left: str
    right_no: int | None
    right: str


SECTION_ORDER = ("schema", "meta", "config", "columns", "payload", "request", "response", "callbacks")
SCHEMA_ORDER = ("name", "domain", "subdomains", "entity", "version", "owner", "schema_type", "description")


def _in_order(mapping: dict, order: tuple[str, ...]) -> dict:
    known = {key: mapping[key] for key in order if key in mapping}
    return {**known, **{key: value for key, value in mapping.items() if key not in known}}


def _yaml_lines(document: dict | None) -> list[str]:
    """The document as YAML in the contract format's section order (the database's JSON
    keeps no key order, so both sides are put in the same one before they are compared)."""
    if document is None:
        return []
    ordered = _in_order(document, SECTION_ORDER)
    if isinstance(ordered.get("schema"), dict):
        ordered["schema"] = _in_order(ordered["schema"], SCHEMA_ORDER)
    return yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=120).splitlines()


def side_by_side(old: dict | None, new: dict) -> list[DiffRow]:
    """The two documents as YAML, aligned line by line."""
    left, right = _yaml_lines(old), _yaml_lines(new)
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes():
        span = max(i2 - i1, j2 - j1)
        for k in range(span):
            li, rj = i1 + k, j1 + k
            has_left, has_right = li < i2, rj < j2
            rows.append(DiffRow(
                kind=tag if tag == "equal" else ("replace" if has_left and has_right else "delete" if has_left else "insert"),
                left_no=li + 1 if has_left else None, left=left[li] if has_left else "",
                right_no=rj + 1 if has_right else None, right=right[rj] if has_right else "",
            ))
    return rows


CONTEXT_LINES = 3
SHORTEST_FOLD = 4  # folding fewer unchanged lines than this would save hardly any room


@dataclass
class DiffBlock:
    """A run of diff rows: a hunk (changed lines and their context), or unchanged
    lines folded away behind a "show" control."""

    rows: list[DiffRow]
    folded: bool = False

    @property
    def first_line(self) -> int | None:
        return self.rows[0].left_no

    @property
    def last_line(self) -> int | None:
        return self.rows[-1].left_no


def in_hunks(rows: list[DiffRow], context: int | None = CONTEXT_LINES) -> list[DiffBlock]:
    """The rows cut into hunks: each changed line with `context` unchanged lines either
    side; longer unchanged runs between them are folded. `context=None` folds nothing."""
    if context is None:
        return [DiffBlock(rows)] if rows else []
    changed = [i for i, row in enumerate(rows) if row.kind != "equal"]
    shown = set()
    for i in changed:
        shown.update(range(max(0, i - context), min(len(rows), i + context + 1)))
    blocks: list[DiffBlock] = []
    for i, row in enumerate(rows):
        folded = i not in shown
        if blocks and blocks[-1].folded == folded:
            blocks[-1].rows.append(row)
        else:
            blocks.append(DiffBlock([row], folded=folded))
    # A short unchanged run is shown as it is, joined to the hunks around it.
    merged: list[DiffBlock] = []
    for block in blocks:
        if block.folded and len(block.rows) < SHORTEST_FOLD:
            block.folded = False
        if merged and not merged[-1].folded and not block.folded:
            merged[-1].rows.extend(block.rows)
        else:
            merged.append(block)
    return merged


def _direction(change: dict) -> str:
    backward, forward = change.get("breaks_backward"), change.get("breaks_forward")
    if backward and forward:
        return "both"
    return "backward" if backward else "forward" if forward else "neither"


class ReviewForm(forms.Form):
    team = forms.TypedChoiceField(coerce=int)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}), max_length=5000)
    migrating_by = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}),
                                   help_text="Migrating: the date your team will have moved to the new lane.")

    def __init__(self, *args, teams: list[Team], **kwargs):
        super().__init__(*args, **kwargs)
        self.teams = {t.pk: t for t in teams}
        self.fields["team"].choices = [(t.pk, t.name) for t in teams]

    def clean_team(self) -> Team:
        return self.teams[self.cleaned_data["team"]]


def _load(pk: int) -> ChangeRequest:
    try:
        return (
            ChangeRequest.objects.select_related("contract", "owner_team", "base_version", "opened_by")
            .prefetch_related(Prefetch("reviews", queryset=TeamReview.objects.select_related("team", "responded_by")),
                              Prefetch("assessments", queryset=TeamAssessment.objects.select_related("team")))
            .get(pk=pk)
        )
    except ChangeRequest.DoesNotExist:
        raise Http404(f"No change request #{pk}.") from None


def _witness_json(change: dict) -> str | None:
    if change.get("proof") != "proven":
        return None
    return json.dumps(change.get("witness"), indent=2, sort_keys=True)[:4000]


@login_required
def change_request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The review page, in a constant number of queries (see test_pages)."""
    cr = _load(pk)
    reviews = list(cr.reviews.all())
    assessments = list(cr.assessments.all())
    # Teams judged when the request opened (or since) are not "late", even when not required.
    required_ids = {r.team_id for r in reviews} | {a.team_id for a in assessments}
    my_team_ids = set(Team.objects.of_user(request.user).values_list("pk", flat=True))
    datasets = list(Dataset.objects.filter(contract_binding__contract_id=cr.contract_id).select_related("owner_team"))
    late_teams = list(
        Team.objects.filter(consumptions__dataset__contract_binding__contract_id=cr.contract_id)
        .exclude(pk__in=required_ids).exclude(pk=cr.owner_team_id or 0).distinct().order_by("name")
    )
    history = list(AuditEvent.objects.filter(object_type=audit_type(ChangeRequest), object_id=str(cr.pk)).order_by("at", "id")[:200])
    can = cr.permitted_actions(request.user, my_team_ids)
    my_reviews = [r for r in reviews if r.team_id in my_team_ids]
    review_form = ReviewForm(teams=[r.team for r in my_reviews]) if can["review"] else None
    changes = [{**c, "direction": _direction(c), "witness_json": _witness_json(c),
                # reports stored before the flag existed say it by their kind
                "decided_by_budget": c.get("kind") in BUDGET_KINDS} for c in cr.report.get("changes", [])]
    frames = cr.contract.schema_type == "dataframe"
    if frames and any(not c.get("summary") for c in changes):
        # a report stored before the checker spoke of columns: said in the frame's words here
        described = describe_changes(cr.base_version.document if cr.base_version else {}, cr.proposed_document, changes)
        changes = [{**c, **{k: v for k, v in d.items() if not c.get(k)}} for c, d in zip(changes, described, strict=True)]
    breaking = [c for c in changes if c.get("breaking")]
    proof_counts = {"proven": sum(c.get("proof") == "proven" and not c["decided_by_budget"] for c in breaking),
                    "budget": sum(c["decided_by_budget"] for c in breaking),
                    "assumed": sum(c.get("proof") == "assumed" and not c["decided_by_budget"] for c in breaking)}
    whole_file = request.GET.get("context") == "all"
    ctx = {
        "cr": cr,
        "proof_counts": proof_counts,
        "reviews": reviews,
        "acknowledged": sum(r.status == ReviewStatus.ACKNOWLEDGED for r in reviews),
        "objections": [r for r in reviews if r.status == ReviewStatus.OBJECTED],
        "migrating": [r for r in reviews if r.status == ReviewStatus.MIGRATING],
        "late_teams": late_teams,
        "assessments": assessments,
        "datasets": datasets,
        "diff": in_hunks(side_by_side(cr.base_version.document if cr.base_version else None, cr.proposed_document),
                         context=None if whole_file else CONTEXT_LINES),
        "whole_file": whole_file, "context_lines": CONTEXT_LINES,
        # Only an open request waits for answers; once approved (or closed) its deadline no longer runs.
        "waiting": cr.state == ChangeRequestState.OPEN,
        "changes": changes,
        "frames": frames,
        "can": can,
        "review_form": review_form,
        "my_reviews": my_reviews,
        "history": history,
    }
    return render(request, "change_requests/detail.html", ctx)


@login_required
@require_POST
def change_request_review(request: HttpRequest, pk: int) -> HttpResponse:
    """Acknowledge or object for one of the viewer's teams (button name `decision`)."""
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract"), pk=pk)
    form = ReviewForm(request.POST, teams=list(Team.objects.of_user(request.user)))
    if not form.is_valid():
        messages.error(request, "Choose one of your teams to answer for.")
        return redirect(cr)
    team, comment = form.cleaned_data["team"], form.cleaned_data["comment"]
    if request.POST.get("decision") == "migrating":
        day = form.cleaned_data["migrating_by"]
        return act_and_redirect(request, cr, lambda: cr.migrate_by(team, by=request.user, date=day, comment=comment),
                                f"{team.name} is migrating by {day}: it stays on the old lane until then.")
    if request.POST.get("decision") == "object":
        return act_and_redirect(request, cr, lambda: cr.object(team, by=request.user, comment=comment),
                    f"{team.name} objected; everyone can see the objection until {team.name} acknowledges.")
    return act_and_redirect(request, cr, lambda: cr.acknowledge(team, by=request.user, comment=comment),
                f"{team.name} acknowledged the change.")


@login_required
@require_POST
def change_request_verify(request: HttpRequest, pk: int) -> HttpResponse:
    """Look for a proof per team (change_requests.verify): EXPLAIN on a scratch schema, outside
    this request's transaction; each team's verdict shows what was proven."""
    cr = _load(pk)
    my_team_ids = set(Team.objects.of_user(request.user).values_list("pk", flat=True))
    if not cr.permitted_actions(request.user, my_team_ids)["verify"]:
        raise PermissionDenied("Only the owner team, a team this request waits for or a governance admin can verify it, "
                               "and only while it is unfinished.")
    summary = verify_change_request(cr)
    if not summary.get("available", True):
        messages.warning(request, f"Not verified: {summary['reason']}.")
    else:
        messages.success(request, f"Verified: {summary['consumers']} consumer job(s) EXPLAINed on a scratch schema "
                                  "holding the proposed shape; each team's verdict below says what was proven.")
    return redirect(f"{cr.get_absolute_url()}#routing")


@login_required
@require_POST
def change_request_override_block(request: HttpRequest, pk: int) -> HttpResponse:
    """A governance admin overrides one team's block, with a reason (audited, shown to the team)."""
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract"), pk=pk)
    team = get_object_or_404(Team, slug=request.POST.get("team", ""))
    return act_and_redirect(request, cr, lambda: cr.override_block(team, by=request.user,
                                                                   reason=request.POST.get("reason", "")),
                            f"{team.name}'s block is overridden.")


@login_required
@require_POST
def change_request_publish(request: HttpRequest, pk: int) -> HttpResponse:
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract"), pk=pk)
    return act_and_redirect(request, cr, lambda: cr.publish(by=request.user),
                f"Published {cr.contract.name} {cr.proposed_version}.")


@login_required
@require_POST
def change_request_withdraw(request: HttpRequest, pk: int) -> HttpResponse:
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract", "owner_team"), pk=pk)
    return act_and_redirect(request, cr, lambda: cr.withdraw(by=request.user, comment=request.POST.get("comment", "")),
                "The request was withdrawn.")


@login_required
@require_POST
def change_request_reject(request: HttpRequest, pk: int) -> HttpResponse:
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract"), pk=pk)
    return act_and_redirect(request, cr, lambda: cr.reject(by=request.user, comment=request.POST.get("comment", "")),
                "The request was rejected.")


@login_required
@require_POST
def change_request_approve(request: HttpRequest, pk: int) -> HttpResponse:
    cr = get_object_or_404(ChangeRequest.objects.select_related("contract"), pk=pk)
    return act_and_redirect(request, cr, lambda: cr.approve_over_silence(by=request.user, comment=request.POST.get("comment", "")),
                "Approved over the teams that did not answer.")


def yaml_problem(exc: ContractYamlError) -> dict:
    """A YAML error as the editor shows it: the message once, and the line and column it
    points at (None when the loader named none), so the editor marks that line."""
    message = str(exc)
    if exc.line is not None:
        message = message.removeprefix(f"line {exc.line}, column {exc.column}: ")
    message = message.removeprefix("not valid YAML: ")
    return {"message": message, "line": exc.line, "column": exc.column}


def parse_document(text: str) -> dict:
    """The contract document typed on the propose page, or ValidationError saying why not
    (a YAML error's `params` carry its line and column)."""
    try:
        document = load_yaml(text)
    except ContractYamlError as exc:
        problem = yaml_problem(exc)
        where = f"line {problem['line']}, column {problem['column']}: " if problem["line"] else ""
        raise ValidationError(f"This is not valid YAML: {where}{problem['message']}", code="yaml",
                              params=problem) from None
    if not isinstance(document, dict):
        raise ValidationError("The document must be a YAML mapping with schema:, meta: and the sections of its schema_type.")
    return document


class ProposeForm(forms.Form):
    contract = forms.ModelChoiceField(
        queryset=Contract.objects.none(), required=False, empty_label="— a new contract —",
        help_text="Picking one starts the document from its latest version.")
    document = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "spellcheck": "false", "wrap": "off",
                                     "aria-describedby": "editor-error"}),
        help_text="The whole contract document, in YAML, with the new schema.version.",
    )
    summary = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3}),
                              help_text="Why the change is needed (shown to the consumer teams if it is breaking).")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.yaml_error: dict | None = None
        # The contracts the user may publish: its teams' contracts, or all for a governance admin.
        self.fields["contract"].queryset = Contract.objects.manageable_by(user).order_by("name")

    def clean_document(self) -> dict:
        try:
            return parse_document(self.cleaned_data["document"])
        except ValidationError as exc:
            # the editor marks the line; the page shows the message there, and only there
            self.yaml_error = exc.params if exc.code == "yaml" else None
            raise

    def clean(self) -> dict:
        cleaned = super().clean()
        contract, document = cleaned.get("contract"), cleaned.get("document")
        if contract is not None and isinstance(document, dict):
            named = (document.get("schema") or {}).get("name") if isinstance(document.get("schema"), dict) else None
            if named != contract.name:
                self.add_error("document", f"The document's schema.name is {named!r}, not {contract.name} (the contract "
                                           f"picked): pick {named} or start again from {contract.name}.")
        return cleaned


def contract_named(value: str) -> Contract | None:
    """`?contract=` on the propose page: a contract's id or its dotted name."""
    value = value.strip()
    if not value:
        return None
    contracts = Contract.objects.select_related("owner_team")  # the page says who may publish it
    if value.isdigit():
        return contracts.filter(pk=int(value)).first()
    return contracts.filter(name=value).first()


def latest_document_text(contract: Contract) -> tuple[str | None, str]:
    """(its latest version, that version's document as YAML); (None, "") before any version."""
    latest = contract.latest_version()
    if latest is None:
        return None, ""
    return latest.version, latest.yaml_text or dump_plain_yaml(latest.document)


@login_required
def change_request_propose(request: HttpRequest) -> HttpResponse:
    """Publish a new version through the gate: compatible -> published, breaking -> a request opens.

    The page previews the impact as the document is typed (change_request_preview,
    called by static/js/propose.js); submitting runs the gate for real."""
    errors: list[str] = []
    start = None
    if request.method == "POST":
        form = ProposeForm(request.POST, user=request.user)
        if form.is_valid():
            try:
                outcome = submit_version(form.cleaned_data["document"], by=request.user, summary=form.cleaned_data["summary"])
            except PermissionDenied as exc:
                errors = [str(exc)]
            else:
                if outcome.status == BREAKING and outcome.change_request is not None:
                    messages.warning(request, outcome.message)
                    return redirect(outcome.change_request)
                if outcome.status in (PUBLISHED, UNCHANGED):
                    messages.success(request, outcome.message)
                    contract = Contract.objects.filter(name=outcome.name).first()
                    return redirect(contract) if contract else redirect("change-request-list")
                errors = [outcome.message, *outcome.errors] if outcome.status == REFUSED else [outcome.message]
    else:
        initial = {}
        start = contract_named(request.GET.get("contract", ""))
        if start is not None:
            _version, initial["document"] = latest_document_text(start)
            initial["contract"] = start.pk
        form = ProposeForm(initial=initial, user=request.user)
    can_publish = start is None or start.can_be_managed_by(request.user)
    return render(request, "change_requests/propose.html",
                  {"form": form, "errors": errors, "start": start, "can_publish": can_publish})


@login_required
@require_GET
def change_request_start(request: HttpRequest) -> JsonResponse:
    """The latest version's document of `?contract=` (id or name), for the propose page's editor."""
    contract = contract_named(request.GET.get("contract", ""))
    if contract is None:
        return JsonResponse({"detail": f"No contract {request.GET.get('contract', '')!r}.", "code": "not_found"},
                            status=404)
    version, text = latest_document_text(contract)
    return JsonResponse({"contract": contract.name, "id": contract.pk, "version": version, "document": text})


@login_required
@require_POST
def change_request_preview(request: HttpRequest) -> JsonResponse:
    """What submitting the propose page's `document` (YAML) would do, opening nothing:
    change_requests.impact.preview's answer, or 400 saying why it cannot be previewed yet."""
    try:
        document = parse_document(request.POST.get("document", ""))
    except ValidationError as exc:
        where = exc.params if exc.code == "yaml" else {"message": " ".join(exc.messages), "line": None, "column": None}
        return JsonResponse({"detail": " ".join(exc.messages), "code": "bad_document", "errors": [], **where},
                            status=400)
    try:
        answer = preview(document, by=request.user)
    except PreviewError as exc:
        return JsonResponse({"detail": f"The document fails the publish gates: {'; '.join(exc.errors)}",
                             "code": "gate_refused", "errors": exc.errors}, status=400)
    except ValueError as exc:  # a half-typed version number and the like, while the owner types
        return JsonResponse({"detail": str(exc), "code": "bad_document", "errors": []}, status=400)
    return JsonResponse(answer)


@dataset_page_section(order=35)
def change_requests_section(request: HttpRequest, dataset) -> str:
    """Unfinished change requests to the contract this dataset is bound to (one query)."""
    unfinished = list(
        ChangeRequest.objects.for_listing().unfinished().filter(contract__bindings__dataset=dataset)
    )
    if not unfinished:
        return ""
    return render_to_string("change_requests/_dataset_section.html",
                            {"change_requests": unfinished}, request=request)


def _count_requests_to_contract_of(state: str) -> Subquery:
    """How many change requests in `state` the contract each listed dataset is bound to has (a subquery)."""
    found = (ChangeRequest.objects.filter(state=state, contract__bindings__dataset=OuterRef("pk")).order_by()
             .values("contract__bindings__dataset").annotate(n=Count("pk", distinct=True)).values("n"))
    return Subquery(found[:1])


def _annotate_open_change_requests(datasets):
    """The listing's open change requests (still waiting for consumer teams) to each dataset's contract.
    An approved one waits for nobody but its owner team: it has its own badge."""
    return datasets.annotate(open_change_requests=_count_requests_to_contract_of(ChangeRequestState.OPEN))


def _annotate_approved_change_requests(datasets):
    return datasets.annotate(approved_change_requests=_count_requests_to_contract_of(ChangeRequestState.APPROVED))


def _approved_change_requests_badge(dataset):
    if not getattr(dataset, "approved_change_requests", None):
        return None
    return Badge("approved: ready to publish", "good",
                 "A breaking version of its contract is approved by every team it waited for; "
                 "its owner team publishes it", anchor="dataset-change-requests")


_open_change_requests_badge = count_badge(
    "open_change_requests", "open change request", "warn",
    "A breaking version of its contract waits for consumer teams' acknowledgements", anchor="dataset-change-requests")


dataset_list_badge(_annotate_open_change_requests, _open_change_requests_badge)
dataset_list_badge(_annotate_approved_change_requests, _approved_change_requests_badge)
