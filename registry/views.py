from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from datetime import datetime
from types import SimpleNamespace
from urllib.parse import urlencode

from csp.decorators import csp_replace
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_POST
from django_prometheus.exports import ExportToDjangoView

from registry import teamsync
from registry.demo import demo_logins
from registry.forms import ClaimForm, ConsumeForm, TeamsFileForm
from registry.health import statuses_of
from registry.hooks import (
    InboxItem,
    annotate_dataset_list,
    count_badge,
    dataset_list_badge,
    dataset_page_sections,
    nav_items,
    render_dataset_list_table,
)
from registry.inbox import due_moment, inbox_of_person, inbox_of_team
from registry.jobs import OwnershipRules
from registry.models import Consumer, Dataset, Team, is_governance_admin
from registry.ownership import UNOWNED_JOBS_KEY, unowned_job_rows, unowned_jobs
from registry.pagination import keyset_page_of
from registry.readings import confirm_readings, datasets_to_confirm, readings_of_datasets
from registry.usage import readers_of

log = logging.getLogger(__name__)

# The API docs pages (Swagger UI, Redoc: third-party templates) style themselves inline,
# Redoc starts from an inline script and runs a worker from a blob: the site-wide
# Content-Security-Policy is relaxed for those two pages only.
docs_csp = csp_replace({
    "script-src": ["'self'", "'unsafe-inline'"], "style-src": ["'self'", "'unsafe-inline'"],
    "worker-src": ["'self'", "blob:"], "img-src": ["'self'", "data:", "https:"],
})


def site_context(request: HttpRequest) -> dict:
    # base.html names the product `product_name`: Django's auth views put their own
    # `site_name` (the request's host name) in the context, over this processor's.
    return {"product_name": settings.SITE_NAME, "site_name": settings.SITE_NAME, "nav_items": nav_items()}


class LoginView(auth_views.LoginView):
    """The login page; in the embedded demo (DEBUG on) it names the demo's users and
    their password, which `load_demo` prints, so that nobody has to find the terminal."""

    template_name = "registry/login.html"

    def get_context_data(self, **kwargs) -> dict:
        ctx = super().get_context_data(**kwargs)
        ctx["site_name"] = settings.SITE_NAME  # not the host name Django's view puts here
        ctx["demo"] = demo_logins() if settings.DEBUG else None
        return ctx


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page links: the site's icon is an SVG."""
    return redirect(static("favicon.svg"), permanent=True)


def _annotate_unregistered_readers(datasets):
    return datasets.with_unregistered_readers()


_unregistered_readers_badge = count_badge(
    "unregistered_readers", "unregistered reader", "warn",
    "Jobs read this dataset whose team is not a registered consumer: a breaking change would not ask them",
    anchor="readers")


dataset_list_badge(_annotate_unregistered_readers, _unregistered_readers_badge)


@login_required
def dataset_list(request: HttpRequest) -> HttpResponse:
    datasets = annotate_dataset_list(Dataset.objects.for_listing())
    query = request.GET.get("q", "").strip()
    if query:
        datasets = datasets.matching(query)
    team = request.GET.get("team", "")
    if team == "unowned":
        datasets = datasets.unowned()
    elif team:
        datasets = datasets.filter(owner_team__slug=team)
    list_table = render_dataset_list_table(request, datasets)  # pages itself (registry.pagination)
    ctx = {"q": query, "team": team, "teams": Team.objects.all(), "list_table": list_table,
           "page": None if list_table else keyset_page_of(request, datasets, key=("namespace", "name"))}
    return render(request, "registry/dataset_list.html", ctx)


@login_required
def dataset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = Dataset.objects.select_related("owner_team", "owner").prefetch_related(
        Prefetch("consumers", queryset=Consumer.objects.select_related("team").order_by("team__name"))
    ).filter(pk=pk).first()
    if dataset is None:
        raise Http404(f"No dataset #{pk}.")
    my_teams = list(Team.objects.of_user(request.user))
    consumers = list(dataset.consumers.all())
    consuming = {c.team_id for c in consumers}
    readers = readers_of(dataset, consumers)
    # The owner team never consumes its own dataset: it is offered neither button.
    can_consume = [t for t in my_teams if t.pk != dataset.owner_team_id]
    can_consume_ids = {t.pk for t in can_consume}
    ctx = {
        "dataset": dataset,
        "readers": readers,
        "usage_window_days": settings.COLUMN_USAGE_WINDOW.days,
        # One click registers a team whose jobs read the data, for the members of that team.
        "registrable": {r.team_id: r for r in readers if r.unregistered and r.team_id in can_consume_ids},
        "claim_form": ClaimForm(user=request.user) if not dataset.is_owned and my_teams else None,
        "consume_form": ConsumeForm(user=request.user, dataset=dataset) if dataset.is_owned and can_consume else None,
        "owns_it": dataset.is_owned and any(t.pk == dataset.owner_team_id for t in my_teams),
        "my_consuming_teams": [t for t in my_teams if t.pk in consuming],
        "sections": dataset_page_sections(request, dataset),
        # Freshness, drift, failing checks and open requests side by side, above the fold.
        "statuses": statuses_of([dataset.pk])[dataset.pk],
    }
    return render(request, "registry/dataset_detail.html", ctx)


def act_and_redirect(request: HttpRequest, to, action: Callable[[], object], success: str) -> HttpResponse:
    """Run one domain action for a page's button: a refusal becomes an error message
    that says why, success a confirmation; either way, back to `to`."""
    try:
        action()
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", None) or [str(exc)]))
    else:
        messages.success(request, success)
    return redirect(to)


@login_required
@require_POST
def dataset_claim(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset, pk=pk)
    form = ClaimForm(request.POST, user=request.user)
    if not form.is_valid():
        said = " ".join(form.errors.get("owner", []))
        messages.error(request, f"Choose one of your teams and an owner from it. {said}".strip())
        return redirect(dataset)
    team, owner = form.cleaned_data["team"], form.cleaned_data["owner"]
    return act_and_redirect(request, dataset, lambda: dataset.claim(team, owner=owner, by=request.user),
                  f"{team} now owns {dataset}.")


@login_required
@require_POST
def dataset_consume(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset, pk=pk)
    form = ConsumeForm(request.POST, user=request.user, dataset=dataset)
    if not form.is_valid():
        messages.error(request, "Choose one of your teams other than the owner team.")
        return redirect(dataset)
    team, columns = form.cleaned_data["team"], form.cleaned_data["columns"]
    said = f" reading {', '.join(columns)}" if columns else ""
    return act_and_redirect(request, dataset,
                            lambda: dataset.register_consumer(team, by=request.user, columns=columns),
                            f"{team} is now a consumer of {dataset}{said}.")


@login_required
@require_POST
def dataset_unconsume(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset, pk=pk)
    team = get_object_or_404(Team, pk=request.POST.get("team"))
    return act_and_redirect(request, dataset, lambda: dataset.unregister_consumer(team, by=request.user),
                  f"{team} no longer consumes {dataset}.")


@login_required
def teams_sync_page(request: HttpRequest) -> HttpResponse:
    """A governance admin uploads a teams file: a dry run lists what would change, a real
    run makes it so in one transaction, every change audited (as `manage.py sync_teams`)."""
    if not is_governance_admin(request.user):
        raise PermissionDenied("Managing teams and their members is for governance admins.")
    plan, error, dry_run = None, "", True
    if request.method == "POST":
        form = TeamsFileForm(request.POST, request.FILES)
        if form.is_valid():
            dry_run = form.cleaned_data["dry_run"]
            try:
                plan = teamsync.sync_document(teamsync.load_yaml(form.cleaned_data["text"]), by=request.user,
                                              prune=form.cleaned_data["prune"], dry_run=dry_run)
            except ValidationError as exc:
                error = " ".join(exc.messages)
    else:
        form = TeamsFileForm()
    return render(request, "registry/teams_sync.html",
                  {"form": form, "plan": plan, "dry_run": dry_run, "error": error})


@login_required
def readings(request: HttpRequest) -> HttpResponse:
    """For each of the user's teams, the datasets its jobs read without the team
    consuming them, a page at a time, and one button confirming them all.

    Each team's list pages by keyset (namespace, name); its Next link names the team
    (`?team=<slug>&after=…`), and a page of one team shows that team alone. The
    confirm button's number is counted up to READINGS_COUNT_CAP ("1,000+")."""
    chosen = request.GET.get("team")
    teams = list(Team.objects.of_user(request.user))
    if any(team.slug == chosen for team in teams):
        teams = [team for team in teams if team.slug == chosen]
    sections = []
    for team in teams:
        # The pager's links carry the team; only the chosen team's page reads ?after=/?before=.
        scoped = request if team.slug == chosen else SimpleNamespace(GET=QueryDict(urlencode({"team": team.slug})))
        datasets = datasets_to_confirm(team)
        page = keyset_page_of(scoped, datasets, key=("namespace", "name"))
        confirmable = datasets.filter(owner_team__isnull=False)[: READINGS_COUNT_CAP + 1].count()
        sections.append({"team": team, "page": page, "found": readings_of_datasets(team, page.object_list),
                         "n": confirmable, "n_label": f"{READINGS_COUNT_CAP:,}+" if confirmable > READINGS_COUNT_CAP
                         else str(confirmable)})
    return render(request, "registry/readings.html", {"sections": sections, "one_team": bool(chosen) and len(teams) == 1})


# The readings page's confirm button counts this many datasets at most; past it, it says "1,000+".
READINGS_COUNT_CAP = 1000


@login_required
@require_POST
def readings_confirm(request: HttpRequest) -> HttpResponse:
    team = get_object_or_404(Team, pk=request.POST.get("team"))
    try:
        done = confirm_readings(team, by=request.user)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", None) or [str(exc)]))
    else:
        n = len(done.registered)
        messages.success(request, f"{team} is now a consumer of {n} dataset{'' if n == 1 else 's'}, "
                                  "declaring the columns its jobs read.")
    return redirect("readings-to-confirm")


@login_required
def inbox_page(request: HttpRequest) -> HttpResponse:
    """What the signed-in person and their teams must act on now (where they land after logging in)."""
    inbox = inbox_of_person(request.user)
    return render(request, "registry/inbox.html", {"inbox": inbox, "rows": _inbox_rows(inbox), "team": None})


@login_required
def team_inbox_page(request: HttpRequest, slug: str) -> HttpResponse:
    """What one team must act on now; anyone signed in may look (a team's waiting work is no secret)."""
    team = get_object_or_404(Team, slug=slug)
    inbox = inbox_of_team(team, request.user)
    return render(request, "registry/inbox.html", {"inbox": inbox, "rows": _inbox_rows(inbox), "team": team,
                                                   "is_member": any(t.pk == team.pk for t in Team.objects.of_user(request.user))})


def _inbox_rows(inbox) -> list[tuple[str, str, list[tuple[InboxItem, Team | None, datetime | None]]]]:
    """(kind, label, [(item, its team, its deadline as a moment)]): a provider may give a
    day (a lane's sunset) where the others give a moment, and the page shows one format."""
    return [(kind, label, [(item, inbox.team_of(item), due_moment(item.due)) for item in items])
            for kind, label, items in inbox.groups()]


@login_required
def unowned_jobs_page(request: HttpRequest) -> HttpResponse:
    """The jobs no rule owns (only their token's team, or nobody), each with the rules-file line that would claim it."""
    latest = OwnershipRules.objects.order_by("-version").first()
    page = keyset_page_of(request, unowned_job_rows(), key=UNOWNED_JOBS_KEY)
    return render(request, "registry/unowned_jobs.html",
                  {"jobs": unowned_jobs(page.object_list), "page": page, "rules": latest})


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus's /metrics, for the scraper holding METRICS_TOKEN: a scrape reads
    the database, and its series name every team's datasets.

    Without a token, a signed-in governance admin may look at it (the demo's gina);
    nobody else, on any host, unless METRICS_PUBLIC opens it on purpose (the demo is
    also run on shared machines, so DEBUG alone never opens it)."""
    expected = settings.METRICS_TOKEN
    scheme, _, secret = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if expected and scheme.lower() == "bearer" and hmac.compare_digest(secret.strip().encode(), expected.encode()):
        return ExportToDjangoView(request)
    if settings.METRICS_PUBLIC or is_governance_admin(request.user):
        return ExportToDjangoView(request)
    if expected:
        return JsonResponse({"detail": "Send Authorization: Bearer <METRICS_TOKEN> to read /metrics.",
                             "code": "not_authenticated"}, status=401, headers={"WWW-Authenticate": "Bearer"})
    return JsonResponse({"detail": "/metrics is closed until METRICS_TOKEN is set (or METRICS_PUBLIC=1 opens it "
                                   "to anyone); a signed-in governance admin can read it meanwhile.",
                         "code": "metrics_closed"}, status=403)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "not healthy", whatever the driver raises
        # The driver's words name the database host and port: the log has them, the
        # anonymous answer does not.
        log.warning("healthz: the database is unreachable: %s", exc)
        return JsonResponse({"status": "unhealthy", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok", "database": "reachable", "vendor": connection.vendor})
