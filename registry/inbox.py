"""The inbox: what a person, or a team, must act on now.

Each app contributes the items it knows through `registry.hooks.inbox_items`
(change requests to acknowledge or publish, drafts to review, stale, drifted or
failing datasets, jobs nobody attributed, …); this module merges them for a
person (their own items and their teams') or for one team, in one order: the
items with a deadline first, soonest first, then the rest as the providers gave
them. The page (`/inbox/`, `/inbox/teams/<slug>/`), the API (`/api/inbox/`) and
the daily digest all read it from here, so they always agree.

The page and the API read at most PER_KIND items of each kind (each provider's query
carries a LIMIT of PER_KIND + 1): a team that consumes ten thousand contracts is shown the
first 25 requests to answer, soonest deadline first, and told there are more
("25+"), at the cost of a team with 25; the next ones show as these are resolved.
The digest reads every item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from registry.hooks import InboxItem, inbox_for
from registry.models import Team

PER_KIND = 25

# What each kind of item asks, for the page's headings and the API's `kind_label`.
# Providers may add kinds this table does not know: they show under their slug.
KIND_LABELS = {
    "acknowledge": "Change requests to answer",
    "publish": "Approved versions to publish",
    "review_draft": "Drafts to review",
    "stale": "Stale datasets",
    "drift": "Schema drift",
    "failing_checks": "Failing data-quality checks",
    "unowned_output": "Unowned datasets your jobs write",
    "unregistered_readers": "Unregistered readers of your datasets",
    "unattributed_job": "Jobs nobody attributed",
}


def due_moment(due: date | datetime | None) -> datetime | None:
    """An item's deadline as a moment: providers give a datetime, or a date for a
    deadline that is a day (a sunset): that day's start in the site's time zone, so
    both sort together and the API answers one format."""
    if due is None or isinstance(due, datetime):
        return due
    return timezone.make_aware(datetime.combine(due, time.min), timezone.get_default_timezone())


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind.replace("_", " ").capitalize())


@dataclass
class Inbox:
    """The items of one inbox, in order, with the teams they are for."""

    teams: list[Team]
    items: list[InboxItem] = field(default_factory=list)
    # The kinds of which there were more than the inbox shows (None: it shows every item).
    more: set[str] = field(default_factory=set)
    per_kind: int | None = None

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def count_label(self) -> str:
        """The count as the page says it: "25+" when some kind holds more than it shows."""
        return f"{self.count}+" if self.more else str(self.count)

    def kind_count_label(self, kind: str, shown: int) -> str:
        return f"{shown}+" if kind in self.more else str(shown)

    def team_of(self, item: InboxItem) -> Team | None:
        return next((t for t in self.teams if t.pk == item.team_id), None)

    def groups(self) -> list[tuple[str, str, list[InboxItem]]]:
        """(kind, label, items) in the order each kind first appears."""
        grouped: dict[str, list[InboxItem]] = {}
        for item in self.items:
            grouped.setdefault(item.kind, []).append(item)
        return [(kind, kind_label(kind), items) for kind, items in grouped.items()]

    def to_dict(self, item: InboxItem) -> dict:
        team = self.team_of(item)
        return {
            "kind": item.kind, "kind_label": kind_label(item.kind), "title": item.title, "detail": item.detail,
            "url": item.url, "key": item.key, "team": team.slug if team else None,
            "due": due_moment(item.due).isoformat() if item.due is not None else None,
        }


def _in_order(items: list[InboxItem]) -> list[InboxItem]:
    """Deadlines first, soonest first; then the rest in the providers' order. One item
    per key (two providers naming the same thing show it once)."""
    seen: set[str] = set()
    unique = []
    for item in items:
        if item.key in seen:
            continue
        seen.add(item.key)
        unique.append(item)
    dated = sorted((i for i in unique if i.due is not None), key=lambda i: due_moment(i.due))
    return dated + [i for i in unique if i.due is None]


def _bounded(teams: list[Team], items: list[InboxItem], per_kind: int | None) -> Inbox:
    """The inbox of `items` (each provider's first `per_kind` + 1 of each kind, or all):
    each kind cut to `per_kind`, the kinds that had more remembered."""
    if per_kind is None:
        return Inbox(teams, _in_order(items))
    kept: list[InboxItem] = []
    seen: dict[str, int] = {}
    more: set[str] = set()
    for item in _in_order(items):
        seen[item.kind] = seen.get(item.kind, 0) + 1
        if seen[item.kind] > per_kind:
            more.add(item.kind)
        else:
            kept.append(item)
    return Inbox(teams, kept, more=more, per_kind=per_kind)


def _asked(per_kind: int | None) -> int | None:
    return None if per_kind is None else per_kind + 1  # one more than shown: is there more?


def inbox_of_person(user, per_kind: int | None = PER_KIND) -> Inbox:
    """A person's inbox: their own items and every team's they belong to (one query
    for the teams, then each provider's bounded few; `per_kind` None: every item)."""
    teams = list(Team.objects.of_user(user))
    return _bounded(teams, inbox_for(user, [t.pk for t in teams], limit=_asked(per_kind)), per_kind)


def inbox_of_team(team: Team, user=None, per_kind: int | None = PER_KIND) -> Inbox:
    """One team's inbox, whoever looks (`user`: the person looking; nobody in particular for
    a team channel's digest, an anonymous user then, so providers may read its attributes)."""
    looking = user if user is not None else AnonymousUser()
    items = [i for i in inbox_for(looking, [team.pk], limit=_asked(per_kind)) if i.team_id == team.pk]
    return _bounded([team], items, per_kind)
