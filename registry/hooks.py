"""Small named hooks owned by the core, so that apps built on it can add to its
pages and react to its events without the core importing them.

    from registry.hooks import dataset_page_section

    @dataset_page_section(order=20)
    def lineage_section(request, dataset):
        return render_to_string("lineage/_section.html", {...}, request=request)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

_sections: list[tuple[int, Callable]] = []


def dataset_page_section(order: int = 50) -> Callable:
    def register(fn: Callable) -> Callable:
        _sections.append((order, fn))
        _sections.sort(key=lambda item: item[0])
        return fn
    return register


def dataset_page_sections(request, dataset) -> list[SafeString]:
    """HTML fragments that other apps contribute to the dataset page, in order."""
    rendered = (fn(request, dataset) for _, fn in _sections)
    return [mark_safe(html) for html in rendered if html]  # noqa: S308 - app templates, autoescaped


_list_tables: list[Callable] = []


def dataset_list_table(fn: Callable) -> Callable:
    """Register a renderer for the dataset list's table, e.g. with freshness columns.

    `fn(request, datasets)` gets the filtered listing queryset and returns HTML,
    or None to leave the plain table. The last one registered wins.
    """
    _list_tables.append(fn)
    return fn


def render_dataset_list_table(request, datasets) -> SafeString | None:
    for fn in reversed(_list_tables):
        html = fn(request, datasets)
        if html:
            return mark_safe(html)  # noqa: S308 - app templates, autoescaped
    return None


_list_annotations: list[Callable] = []
_list_badges: list[Callable] = []


@dataclass(frozen=True)
class Badge:
    """A badge beside a dataset's name in the dataset list. `anchor`: the id of the
    dataset page's section that explains it, so the badge links there."""

    text: str
    css: str
    title: str
    anchor: str = ""


def count_badge(attribute: str, noun: str, css: str, title: str, anchor: str = "") -> Callable:
    """The badge of a count the listing annotates as `attribute` ("3 failed checks"); none at zero."""
    def badge(dataset) -> Badge | None:
        n = getattr(dataset, attribute, None)
        if not n:
            return None
        return Badge(f"{n} {noun}{'s' if n != 1 else ''}", css, title, anchor=anchor)
    return badge


def dataset_list_badge(annotate: Callable, badge: Callable) -> None:
    """Add a badge beside each dataset's name in the dataset list.

    `annotate(queryset)` adds what the badge needs to the listing queryset as
    annotations (subqueries: the list stays one query whatever the rows);
    `badge(dataset)` returns a Badge (or a (text, css class, title) tuple) or None."""
    if annotate not in _list_annotations:
        _list_annotations.append(annotate)
        _list_badges.append(badge)


def annotate_dataset_list(datasets):
    for annotate in _list_annotations:
        datasets = annotate(datasets)
    return datasets


def dataset_badges(dataset) -> list[Badge]:
    found = (badge(dataset) for badge in _list_badges)
    return [b if isinstance(b, Badge) else Badge(*b) for b in found if b]


_nav: list[tuple[int, str, str]] = []


def nav_item(label: str, url_name: str, order: int = 50) -> None:
    """Add a link to the top navigation (called from an app's AppConfig.ready)."""
    if (order, label, url_name) not in _nav:
        _nav.append((order, label, url_name))
        _nav.sort()


def nav_items() -> list[dict[str, str]]:
    from django.urls import reverse

    return [{"label": label, "url": reverse(url_name)} for _, label, url_name in _nav]


_demo_steps: list[tuple[int, str, Callable]] = []


def demo_step(label: str, order: int = 50) -> Callable:
    """Register a step of `manage.py load_demo` (apps add their demo data after the core's)."""
    def register(fn: Callable) -> Callable:
        if all(existing is not fn for _, _, existing in _demo_steps):
            _demo_steps.append((order, label, fn))
            _demo_steps.sort(key=lambda item: item[0])
        return fn
    return register


def demo_steps() -> list[tuple[str, Callable]]:
    return [(label, fn) for _, label, fn in _demo_steps]


_hot_paths: dict[str, tuple[str, ...]] = {}


def hot_path(url_name: str, methods: tuple[str, ...] = ("POST",)) -> None:
    """Serve the named URL's `methods` through registry.middleware.HotPathMiddleware:
    straight to the view, skipping the rest of the middleware (see there)."""
    _hot_paths[url_name] = tuple(methods)


def hot_paths() -> dict[str, tuple[str, ...]]:
    return dict(_hot_paths)


_column_steps: list[Callable] = []
_absorbing: list[Callable] = []


def column_steps(fn: Callable) -> Callable:
    """Register who knows how a change of a column reaches other columns (lineage's field edges).

    `fn(sources, now)` gets {dataset id: {column: effects}, or None for every column
    with every effect} (effects: registry.usage.Effect values, what a change did to the
    column) and returns, one hop downstream, a list of registry.usage.FlowStep: each
    column reached, the job and use (DIRECT, or an INDIRECT join, group, filter, …)
    that reached it, the SQL fragment that shows it and the effects it carries
    (registry.usage.carries). registry.usage.value_flow walks it; without a provider
    nothing is downstream."""
    if fn not in _column_steps:
        _column_steps.append(fn)
    return fn


def steps_from(sources: dict, now=None) -> list:
    return [step for fn in _column_steps for step in fn(sources, now)]


def column_absorbers(fn: Callable) -> Callable:
    """Register who knows which jobs' SQL absorbs a change of a column they read.

    `fn(touched, now)` gets {dataset id: {column: effects}} and returns {(dataset id,
    column, job namespace, job name): fragment} for each job whose every use of the
    column provably absorbs every one of those effects (a `cast(… as text)` of a
    retyped column, a `coalesce(…, 0)` of one that may now hold NULLs), with the SQL
    that shows it: such a job reads the column but the change does not reach it."""
    if fn not in _absorbing:
        _absorbing.append(fn)
    return fn


def absorbing_readers(touched: dict, now=None) -> dict:
    found: dict = {}
    for fn in _absorbing:
        found.update(fn(touched, now))
    return found


_passing: list[Callable] = []


def column_passers(fn: Callable) -> Callable:
    """Register who knows which jobs only carry a column's changed values on.

    `fn(touched, now)` gets {dataset id: {column: effects}} and returns {(dataset id,
    column, job namespace, job name): how the values go on} for each job that passes
    a value change (NULLs allowed, values narrowed, precision lost) into its outputs
    with nothing of its own that would notice it: no check of the column, no
    expression that fails or names a value. Its team is told, not asked; the change
    goes on to its outputs and their readers."""
    if fn not in _passing:
        _passing.append(fn)
    return fn


def passing_readers(touched: dict, now=None) -> dict:
    found: dict = {}
    for fn in _passing:
        found.update(fn(touched, now))
    return found


_service_levels: list[Callable] = []


def dataset_service_levels(fn: Callable) -> Callable:
    """Register who knows the datasets' service levels (freshness owns the SLOs).

    `fn(dataset_ids)` returns {dataset id: {"max_age": timedelta, "warn_after":
    timedelta | None, "empty_write_counts": bool}} for the datasets that have an SLO;
    `service_levels_of` merges every provider's answer (exports read it)."""
    if fn not in _service_levels:
        _service_levels.append(fn)
    return fn


def service_levels_of(dataset_ids) -> dict:
    levels: dict = {}
    for fn in _service_levels:
        for dataset_id, level in fn(list(dataset_ids)).items():
            levels.setdefault(dataset_id, {}).update(level)
    return levels


@dataclass(frozen=True)
class TeamChannels:
    """Where teams hear about things besides their members' own e-mail (change
    requests own the channels and their transports). A teams file or the teams API
    carries each team's channels as {"kind": ..., **settings}; registry.teamsync
    plans and audits the changes and calls these to read and write them.

    - `kinds`: the channel kinds known;
    - `problems(kind, settings)`: what is wrong with one channel's settings (sentences);
    - `recipient(kind, settings)`: where it sends: with the kind, what identifies a channel;
    - `current(team_ids)`: {team id: [(channel id, kind, settings)]};
    - `save(team, kind, settings, channel_id)`: add one (channel_id None) or change its settings;
    - `remove(channel_id)`: remove one."""

    kinds: tuple[str, ...]
    problems: Callable
    recipient: Callable
    current: Callable
    save: Callable
    remove: Callable


_team_channels: list[TeamChannels] = []


def team_channels(provider: TeamChannels) -> None:
    """Register the keeper of the teams' channels (one; a second replaces the first)."""
    _team_channels[:] = [provider]


def team_channels_provider() -> TeamChannels | None:
    return _team_channels[0] if _team_channels else None
_observed_schemas: list[Callable] = []


def dataset_observed_schemas(fn: Callable) -> Callable:
    """Register who knows the datasets' observed schemas (lineage keeps each dataset's
    latest schema facet).

    `fn(dataset_ids)` returns {dataset id: {"columns": [{"name", "type", "description"}],
    "complete": bool (every column typed), "seen_at": datetime | None}} for the datasets
    it has a schema of; `observed_schemas_of` merges the answers (drafting reads it)."""
    if fn not in _observed_schemas:
        _observed_schemas.append(fn)
    return fn


def observed_schemas_of(dataset_ids) -> dict:
    found: dict = {}
    for fn in _observed_schemas:
        for dataset_id, schema in fn(list(dataset_ids)).items():
            found.setdefault(dataset_id, schema)
    return found


@dataclass(frozen=True)
class InboxItem:
    """One thing a person or team must act on, contributed by the app that knows it.

    - `kind`: a stable slug ("acknowledge", "publish", "review_draft", "stale", ...);
    - `title`: one sentence that says who must do what ("Analytics must answer change request #10");
    - `url`: the one page where it is resolved; the item disappears once it is;
    - `team_id`: the team that must act (None: the person themself);
    - `due`: the deadline, when there is one (the inbox sorts by it);
    - `key`: identifies the item across runs (digests say what is new)."""

    kind: str
    title: str
    url: str
    key: str
    team_id: int | None = None
    due: object = None
    detail: str = ""


_inbox_providers: list[tuple[int, Callable]] = []


def inbox_items(order: int = 50) -> Callable:
    """Register a provider of inbox items: `fn(user, team_ids, limit=None)` returns the
    InboxItems for that person and the teams given (a bounded number of queries, whatever the
    world's size); with a `limit`, at most that many of each kind it gives, the first in its
    order (deadlines soonest first), each read with a LIMIT, so a team with ten thousand
    waiting items costs what one with a few does. The core's inbox page, API and digest
    merge every provider's."""
    def register(fn: Callable) -> Callable:
        if all(existing is not fn for _, existing in _inbox_providers):
            _inbox_providers.append((order, fn))
            _inbox_providers.sort(key=lambda item: item[0])
        return fn
    return register


def inbox_for(user, team_ids, limit: int | None = None) -> list[InboxItem]:
    items: list[InboxItem] = []
    for _, fn in _inbox_providers:
        items.extend(fn(user, list(team_ids), limit=limit))
    return items


@dataclass(frozen=True)
class InputTable:
    """A dataset a job reads, as the lineage knows it: its name and its current columns
    ((name, type) in the schema facet's order; None when no schema was seen; a type is
    "" where the facet gave none)."""

    dataset_id: int
    namespace: str
    name: str
    columns: tuple[tuple[str, str], ...] | None


@dataclass(frozen=True)
class JobQuery:
    """A job's compiled SQL (its latest `sql` job facet), the sqlglot dialect it is
    written in (None: unknown, read as generic SQL) and the datasets it reads."""

    job: str  # "namespace/name", as registry.usage.JobReading.job
    query: str
    dialect: str | None
    inputs: tuple[InputTable, ...]


_job_queries: list[Callable] = []


def job_queries(fn: Callable) -> Callable:
    """Register who knows the jobs' compiled SQL and the schemas of what they read
    (lineage keeps each job's latest `sql` facet and each dataset's schema).

    `fn(jobs)` gets job labels ("namespace/name") and returns {label: JobQuery} for
    the jobs whose SQL it knows, in a fixed number of queries; `queries_of` merges
    the answers (change requests read it to type-check and verify consumers' SQL)."""
    if fn not in _job_queries:
        _job_queries.append(fn)
    return fn


def queries_of(jobs) -> dict[str, JobQuery]:
    jobs = list(dict.fromkeys(jobs))
    found: dict[str, JobQuery] = {}
    for fn in _job_queries:
        for label, query in fn(jobs).items():
            found.setdefault(label, query)
    return found


@dataclass(frozen=True)
class DatasetStatus:
    """One fact about a dataset's health now, said the same wherever it is shown (the
    dataset page's status line, the lineage graph's nodes).

    - `kind`: a stable slug ("freshness", "drift", "checks", "request");
    - `text`: a few words ("Stale", "schema drift", "2 failed checks");
    - `css`: the tag colour ("good", "warn", "bad" or "");
    - `anchor`: the id of the dataset page's section that explains it;
    - `title`: one sentence that says more."""

    kind: str
    text: str
    css: str
    anchor: str = ""
    title: str = ""


_status_providers: list[Callable] = []


def dataset_statuses(fn: Callable) -> Callable:
    """Register who knows part of the datasets' health (freshness knows whether each is
    stale). `fn(dataset_ids)` returns {dataset id: [DatasetStatus]} in a fixed number of
    queries. `registry.health.statuses_of` merges every provider's answer with the list badges (drift,
    failed checks, open change requests: registry.hooks.dataset_list_badge)."""
    if fn not in _status_providers:
        _status_providers.append(fn)
    return fn


def status_providers() -> list[Callable]:
    return list(_status_providers)


def list_annotations() -> list[Callable]:
    return list(_list_annotations)


_channel_senders: list[Callable] = []


def channel_sender(fn: Callable) -> Callable:
    """Register the sender of messages on the teams' channels (the keeper of the
    channels' transports; one, a second replaces the first).

    `fn(kind, settings, message)` sends one message through the transport of
    `kind` with a channel's `settings`; `message` has `pk`, `recipient`,
    `subject`, `body` and `payload` (a webhook's JSON body). It raises on any
    failure, so that the caller's outbox retries."""
    _channel_senders[:] = [fn]
    return fn


def send_on_channel(kind: str, settings: dict, message) -> None:
    if not _channel_senders:
        raise LookupError("No app sends on the teams' channels (none registered registry.hooks.channel_sender).")
    _channel_senders[0](kind, settings, message)
