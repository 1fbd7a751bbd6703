"""Teams and people as data: a teams file (docs/teams.md), or the teams API, made true.

1. `load_yaml` reads the file's text: the one place a teams file's YAML is
   parsed, so a stricter loader can replace it here alone.
2. `parse_document` checks the document's shape and returns one TeamSpec per
   team. Every problem is named with its path (`teams[3].members[1].role: ...`),
   all of them at once, and nothing is applied if there is any (TeamsFileInvalid).
3. `plan` compares the specs with the database and lists the changes (a Plan),
   refusing, again with paths, what the rules forbid: a team that owns datasets
   or consumes them is removed only with `prune` and a reason.
4. `Plan.apply(by)` makes the changes, each with its audit row.

`sync` runs 3 and 4 in one transaction; a dry run stops after 3. A key a team
leaves out is left as it is; `members` and `channels` written are the complete
lists only when pruning (without it, a member or channel missing from the list
stays). Users are never deleted; a person named by e-mail who has no account
gets one, with an unusable password (they sign in through single sign-on, or an
admin sets one).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import validate_email, validate_slug
from django.db import IntegrityError, models, transaction
from django.db.models.deletion import Collector, ProtectedError
from django.db.models.functions import Lower
from registry_client.safeyaml import YamlInputError
from registry_client.safeyaml import load_yaml as load_user_yaml

from registry.constants import AuditAction, MembershipRole
from registry.hooks import team_channels_provider
from registry.models import (
    AuditEvent,
    Consumer,
    Dataset,
    Membership,
    RegistryError,
    Team,
    is_governance_admin,
)

DOCUMENT_KEYS = ("version", "teams")
TEAM_KEYS = ("slug", "name", "description", "parent", "channels", "members")
MEMBER_KEYS = ("username", "email", "role")
SUPPORTED_VERSIONS = (1,)
# A channel setting written as `<name>_env: VARIABLE` is read from the environment,
# so that a webhook's secret need not sit in a file kept in git.
ENV_SUFFIX = "_env"
# Shown in place of these settings' values in diffs, API answers and audit rows.
SECRET_SETTINGS = ("secret", "password", "token")
PROGRESS_EVERY = 500


class TeamsFileInvalid(RegistryError):
    """What is wrong with a teams document, one sentence per problem, each with its path."""

    http_status = 400


class _Unset:
    def __repr__(self) -> str:
        return "unset"


UNSET: Any = _Unset()


def load_yaml(text: str) -> Any:
    """The document in a teams file's text, read by the one loader for user YAML
    (anchors and aliases refused: a few bytes of `*ref` could name one list of members
    a million times; size and depth bounded)."""
    try:
        return load_user_yaml(text, max_bytes=settings.YAML_MAX_BYTES, max_depth=settings.YAML_MAX_DEPTH)
    except YamlInputError as exc:
        raise TeamsFileInvalid(f"The teams file, {exc}.") from None


# --- the document's shape ------------------------------------------------------------

@dataclass
class MemberSpec:
    path: str
    username: str | None
    email: str | None
    role: str

    @property
    def key(self) -> str:
        """Who this is, for spotting one person named twice: the username, else the e-mail."""
        return f"user:{self.username}" if self.username else f"email:{self.email.lower()}"


@dataclass
class ChannelSpec:
    path: str
    kind: str
    settings: dict[str, Any]


@dataclass
class TeamSpec:
    path: str
    slug: str
    name: str | None = None  # None: left as it is (required to create the team)
    description: str | None = None
    parent: Any = UNSET  # a slug, None for no parent, or UNSET: left as it is
    channels: list[ChannelSpec] | None = None  # None: the team's channels are left as they are
    members: list[MemberSpec] | None = None  # None: the team's members are left as they are


class _Problems:
    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, path: str, message: str) -> None:
        message = message if message.endswith(".") else message + "."
        self.found.append(f"{path}: {message}" if path else message)

    def raise_any(self) -> None:
        if self.found:
            raise TeamsFileInvalid(self.found)


def _describe(value: Any) -> str:
    kinds = {dict: "a mapping", list: "a list", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "empty"}
    return kinds.get(type(value), type(value).__name__)


def _unknown_keys(entry: dict, known: Iterable[str], path: str, problems: _Problems) -> None:
    for key in entry:
        if key not in known:
            problems.add(f"{path}.{key}" if path else str(key),
                         f"unknown key; the keys here are {', '.join(known)}")


def _text(entry: dict, key: str, path: str, problems: _Problems, *, max_length: int | None = None,
          blank: bool = False) -> str | None:
    value = entry.get(key)
    where = f"{path}.{key}" if path else key
    if not isinstance(value, str):
        problems.add(where, f"must be a string, not {_describe(value)}")
        return None
    value = value.strip()
    if not value and not blank:
        problems.add(where, "must not be blank")
        return None
    if max_length is not None and len(value) > max_length:
        problems.add(where, f"is {len(value)} characters long; at most {max_length}")
        return None
    return value


def parse_document(document: Any) -> list[TeamSpec]:
    """The teams of a teams document (already parsed from YAML or JSON), checked."""
    problems = _Problems()
    if not isinstance(document, dict):
        problems.add("", f"A teams document is a mapping with a `teams` list, not {_describe(document)}.")
        problems.raise_any()
    _unknown_keys(document, DOCUMENT_KEYS, "", problems)
    version = document.get("version", 1)
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        problems.add("version", f"must be one of {', '.join(map(str, SUPPORTED_VERSIONS))}")
    teams = document.get("teams")
    if not isinstance(teams, list):
        problems.add("teams", f"must be a list of teams, not {_describe(teams)}")
        problems.raise_any()
    specs = [spec for i, entry in enumerate(teams)
             if (spec := parse_team(entry, f"teams[{i}]", problems, creating=False)) is not None]
    _no_repeats(specs, lambda s: s.slug, "slug", problems)
    _no_repeats([s for s in specs if s.name], lambda s: s.name.lower(), "name", problems)
    problems.raise_any()
    return specs


def _no_repeats(specs: list, key: Callable, what: str, problems: _Problems) -> None:
    """`what`: the key repeated (`slug`), or "" for the entry as a whole (a person)."""
    first: dict[str, str] = {}
    suffix = f".{what}" if what else ""
    for spec in specs:
        k = key(spec)
        if k in first:
            problems.add(f"{spec.path}{suffix}", f"repeats {first[k]}{suffix}")
        else:
            first[k] = spec.path


def parse_team(entry: Any, path: str, problems: _Problems, *, creating: bool) -> TeamSpec | None:
    """One team's entry; `creating`: the name is required (the API's create)."""
    if not isinstance(entry, dict):
        problems.add(path, f"a team is a mapping with slug, name, …, not {_describe(entry)}")
        return None
    _unknown_keys(entry, TEAM_KEYS, path, problems)
    slug = _text(entry, "slug", path, problems, max_length=100) if "slug" in entry else None
    if "slug" not in entry:
        problems.add(f"{path}.slug" if path else "slug", "is required")
    elif slug is not None:
        try:
            validate_slug(slug)
        except ValidationError:
            problems.add(f"{path}.slug" if path else "slug",
                         f"{slug!r} is not a slug: letters, digits, hyphens and underscores only")
            slug = None
    spec = TeamSpec(path=path, slug=slug or "")
    if "name" in entry:
        spec.name = _text(entry, "name", path, problems, max_length=100)
    elif creating:
        problems.add(f"{path}.name" if path else "name", "is required")
    if "description" in entry:
        spec.description = "" if entry["description"] is None else _text(entry, "description", path, problems, blank=True)
    if "parent" in entry:
        spec.parent = None if entry["parent"] is None else _text(entry, "parent", path, problems, max_length=100)
        if slug and spec.parent == slug:
            problems.add(f"{path}.parent" if path else "parent", "a team cannot be its own parent")
    if "channels" in entry:
        spec.channels = _parse_channels(entry["channels"], f"{path}.channels" if path else "channels", problems)
    if "members" in entry:
        spec.members = _parse_members(entry["members"], f"{path}.members" if path else "members", problems)
    return spec if slug else None


def _parse_members(entries: Any, path: str, problems: _Problems) -> list[MemberSpec]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        problems.add(path, f"must be a list of members, not {_describe(entries)}")
        return []
    members = [m for i, entry in enumerate(entries) if (m := parse_member(entry, f"{path}[{i}]", problems))]
    _no_repeats(members, lambda m: m.key, "", problems)
    return members


def parse_member(entry: Any, path: str, problems: _Problems) -> MemberSpec | None:
    if not isinstance(entry, dict):
        problems.add(path, f"a member is a mapping with username and/or email, and role, not {_describe(entry)}")
        return None
    before = len(problems.found)
    _unknown_keys(entry, MEMBER_KEYS, path, problems)
    username = email = None
    if "username" in entry:
        username = _text(entry, "username", path, problems, max_length=150)
        if username is not None:
            try:
                UnicodeUsernameValidator()(username)
            except ValidationError:
                problems.add(f"{path}.username",
                             f"{username!r} is not a username: letters, digits and @ . + - _ only")
    if "email" in entry:
        email = _text(entry, "email", path, problems, max_length=254)
        if email is not None:
            try:
                validate_email(email)
            except ValidationError:
                problems.add(f"{path}.email", f"{email!r} is not an e-mail address")
    if "username" not in entry and "email" not in entry:
        problems.add(path, "name the person with username, email, or both")
    elif "username" not in entry and email is not None and len(email) > 150:
        # A person named by e-mail alone may be created with it as their username.
        problems.add(f"{path}.email", "is longer than a username may be (150); give the username too")
    role = entry.get("role", MembershipRole.MEMBER)
    if role not in MembershipRole.values:
        problems.add(f"{path}.role", f"must be one of {', '.join(MembershipRole.values)}, not {role!r}")
    if len(problems.found) > before:
        return None
    return MemberSpec(path=path, username=username, email=email, role=role)


def _parse_channels(entries: Any, path: str, problems: _Problems) -> list[ChannelSpec]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        problems.add(path, f"must be a list of channels, not {_describe(entries)}")
        return []
    provider = team_channels_provider()
    if provider is None:
        if entries:
            problems.add(path, "no installed app keeps team channels (change_requests does)")
        return []
    channels: list[ChannelSpec] = []
    seen: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict):
            problems.add(where, f"a channel is a mapping with kind and its settings, not {_describe(entry)}")
            continue
        kind = entry.get("kind")
        if kind not in provider.kinds:
            problems.add(f"{where}.kind", f"must be one of {', '.join(provider.kinds)}, not {kind!r}")
            continue
        settings: dict[str, Any] = {}
        before = len(problems.found)
        for key, value in entry.items():
            if key == "kind":
                continue
            if isinstance(key, str) and key.endswith(ENV_SUFFIX):
                if not isinstance(value, str) or value not in os.environ:
                    problems.add(f"{where}.{key}", f"the environment variable {value!r} is not set")
                    continue
                settings[key[: -len(ENV_SUFFIX)]] = os.environ[value]
            elif isinstance(value, dict | list):
                problems.add(f"{where}.{key}", "a channel setting is a string, a number or true/false")
            else:
                settings[str(key)] = value
        if len(problems.found) > before:
            continue
        found = provider.problems(kind, settings)
        for problem in found:
            problems.add(where, problem)
        if found:
            continue
        identity = (kind, provider.recipient(kind, settings))
        if identity in seen:
            problems.add(where, f"repeats {seen[identity]} ({kind} {identity[1]})")
            continue
        seen[identity] = where
        channels.append(ChannelSpec(path=where, kind=kind, settings=settings))
    return channels


def shown_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A channel's settings with secrets hidden: what diffs, answers and audit rows show."""
    return {k: "(hidden)" if any(w in k.lower() for w in SECRET_SETTINGS) and v else v for k, v in settings.items()}


def channels_of(team: Team) -> list[dict[str, Any]]:
    """A team's channels as the API shows them: kind, where they send, settings with secrets hidden."""
    provider = team_channels_provider()
    if provider is None:
        return []
    return [{"kind": kind, "recipient": provider.recipient(kind, settings), "settings": shown_settings(settings)}
            for _, kind, settings in provider.current([team.pk]).get(team.pk, [])]


# --- the plan -------------------------------------------------------------------------

@dataclass
class Change:
    """One change: a line of the diff, and what applying it does."""

    sign: str  # "+" added, "~" changed, "-" removed
    text: str
    apply: Callable[[_Applying], None]

    def __str__(self) -> str:
        return f"{self.sign} {self.text}"


@dataclass
class _Applying:
    by: Any
    teams: dict[str, Team] = field(default_factory=dict)
    users: dict[str, Any] = field(default_factory=dict)  # MemberSpec.key -> user


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    users_created: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def lines(self) -> list[str]:
        return [str(c) for c in self.changes]

    def apply(self, by, progress: Callable[[int, int], None] | None = None) -> None:
        """Make every change, each with its audit row. Call inside a transaction.
        `progress(done, total)` is told every PROGRESS_EVERY changes."""
        state = _Applying(by=by, teams={t.slug: t for t in Team.objects.all()})
        for done, change in enumerate(self.changes, start=1):
            change.apply(state)
            if progress is not None and done % PROGRESS_EVERY == 0:
                progress(done, len(self.changes))


def _user_label(spec: MemberSpec) -> str:
    return spec.username or spec.email


class _Planner:
    """Compares specs with the database, in a few queries whatever the number of teams."""

    def __init__(self, specs: list[TeamSpec], *, prune: bool, reason: str, whole: bool) -> None:
        self.specs, self.prune, self.reason, self.whole = specs, prune, reason.strip(), whole
        self.problems = _Problems()
        self.plan = Plan()
        self.existing = {t.slug: t for t in Team.objects.select_related("parent")}
        self.removed = ({slug for slug in self.existing if slug not in {s.slug for s in specs}}
                        if prune and whole else set())
        self.users: dict[str, Any] = {}  # MemberSpec.key -> an existing user
        self.creating: dict[str, MemberSpec] = {}  # MemberSpec.key -> the spec of a user to create

    def build(self) -> Plan:
        self._remove_teams()
        self._resolve_people()
        self._teams()
        self._parents()
        self._members()
        self._channels()
        self.problems.raise_any()
        return self.plan

    def _add(self, sign: str, text: str, apply: Callable[[_Applying], None]) -> None:
        self.plan.changes.append(Change(sign, text, apply))

    # teams

    def _teams(self) -> None:
        names = {t.name.lower(): t.slug for t in self.existing.values() if t.slug not in self.removed}
        for spec in self.specs:
            team = self.existing.get(spec.slug)
            if spec.name is not None:
                holder = names.get(spec.name.lower())
                if holder is not None and holder != spec.slug and not any(
                        s.slug == holder and s.name and s.name.lower() != spec.name.lower() for s in self.specs):
                    self.problems.add(f"{spec.path}.name" if spec.path else "name",
                                      f"{spec.name!r} is already the name of team {holder}")
            if team is None:
                if spec.name is None:
                    self.problems.add(spec.path or spec.slug, f"team {spec.slug} is new: give its name")
                    continue
                self._add("+", f"team {spec.slug} \"{spec.name}\"", self._create_team(spec))
                continue
            updates = {}
            if spec.name is not None and spec.name != team.name:
                updates["name"] = (team.name, spec.name)
            if spec.description is not None and spec.description != team.description:
                updates["description"] = (team.description, spec.description)
            if updates:
                said = "; ".join(f"{k} {old!r} → {new!r}" for k, (old, new) in updates.items())
                self._add("~", f"team {spec.slug}: {said}", self._update_team(spec.slug, updates))

    @staticmethod
    def _create_team(spec: TeamSpec) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team = Team.objects.create(slug=spec.slug, name=spec.name, description=spec.description or "")
            state.teams[team.slug] = team
            AuditEvent.record(state.by, AuditAction.TEAM_CREATED, team, before=None,
                              after={"slug": team.slug, "name": team.name, "description": team.description})
        return apply

    @staticmethod
    def _update_team(slug: str, updates: dict[str, tuple[str, str]]) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team = state.teams[slug]
            for key, (_, new) in updates.items():
                setattr(team, key, new)
            team.save(update_fields=list(updates))
            AuditEvent.record(state.by, AuditAction.TEAM_UPDATED, team,
                              before={k: old for k, (old, _) in updates.items()},
                              after={k: new for k, (_, new) in updates.items()})
        return apply

    def _parents(self) -> None:
        final = {slug: (t.parent.slug if t.parent_id else None) for slug, t in self.existing.items()
                 if slug not in self.removed}
        known = set(final) | {s.slug for s in self.specs}
        wanted: dict[str, tuple[str, str | None]] = {}  # slug -> (path, new parent)
        for spec in self.specs:
            if spec.parent is UNSET:
                continue
            if spec.parent is not None and spec.parent not in known:
                gone = " (it is being removed)" if spec.parent in self.removed else ""
                self.problems.add(f"{spec.path}.parent" if spec.path else "parent",
                                  f"no team {spec.parent!r} in the file or the registry{gone}")
                continue
            wanted[spec.slug] = (spec.path, spec.parent)
            final[spec.slug] = spec.parent
        # A team that stays keeps no parent that is being removed.
        for slug, parent in list(final.items()):
            if parent in self.removed and slug not in wanted:
                wanted[slug], final[slug] = ("", None), None
        for slug, (path, _) in wanted.items():
            seen, at = [slug], final.get(slug)
            while at is not None and at not in seen:
                seen.append(at)
                at = final.get(at)
            if at is not None:
                self.problems.add(f"{path}.parent" if path else slug,
                                  "parents make a loop: " + " → ".join([*seen, at]))
        for slug, (_, parent) in wanted.items():
            team = self.existing.get(slug)
            current = team.parent.slug if team is not None and team.parent_id else None
            if parent != current:
                self._add("~", f"team {slug}: parent {current or 'none'} → {parent or 'none'}",
                          self._set_parent(slug, current, parent))

    @staticmethod
    def _set_parent(slug: str, current: str | None, parent: str | None) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team = state.teams[slug]
            team.parent = state.teams[parent] if parent else None
            team.save(update_fields=["parent"])
            AuditEvent.record(state.by, AuditAction.TEAM_UPDATED, team, before={"parent": current},
                              after={"parent": parent})
        return apply

    def _remove_teams(self) -> None:
        if not self.removed:
            return
        owned = dict(Dataset.objects.filter(owner_team__slug__in=self.removed).order_by()
                     .values_list("owner_team__slug").annotate(n=models.Count("id")))
        consumed = dict(Consumer.objects.filter(team__slug__in=self.removed).order_by()
                        .values_list("team__slug").annotate(n=models.Count("id")))
        for slug in sorted(self.removed):
            team = self.existing[slug]
            holds = [f"owns {owned[slug]} dataset{'s' if owned[slug] != 1 else ''}" if slug in owned else "",
                     f"consumes {consumed[slug]} dataset{'s' if consumed[slug] != 1 else ''}" if slug in consumed else ""]
            holds = [h for h in holds if h]
            if holds and not self.reason:
                self.problems.add(f"team {slug}", f"it {' and '.join(holds)}: removing it needs a reason "
                                                  "(its datasets become unowned, its registrations go)")
                continue
            protected = _protected_by(team)
            if protected:
                self.problems.add(f"team {slug}", f"cannot be removed: {protected} refer to it")
                continue
            said = f" ({' and '.join(holds)}; reason: {self.reason})" if holds else ""
            self._add("-", f"team {slug}{said}", self._remove_team(slug, self.reason))

    @staticmethod
    def _remove_team(slug: str, reason: str) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team = state.teams.pop(slug)
            rows = []
            for dataset in Dataset.objects.select_for_update(of=("self",)).select_related("owner").filter(owner_team=team):
                rows.append(AuditEvent(**AuditEvent.fields_for(
                    state.by, AuditAction.DATASET_OWNER_CHANGED, dataset,
                    before={"owner_team": slug, "owner": dataset.owner.get_username() if dataset.owner_id else None},
                    after={"owner_team": None, "owner": None, "reason": reason})))
            for consumer in Consumer.objects.select_related("dataset").filter(team=team):
                rows.append(AuditEvent(**AuditEvent.fields_for(
                    state.by, AuditAction.CONSUMER_UNREGISTERED, consumer.dataset,
                    before={"team": slug}, after={"reason": reason})))
            Dataset.objects.filter(owner_team=team).update(owner_team=None, owner=None)
            # Its memberships, job namespaces, channels and team tokens go with it (cascade);
            # the audit row keeps who was in it and which tokens stopped working.
            before = {"slug": slug, "name": team.name,
                      "members": sorted(team.members.values_list("username", flat=True)),
                      "job_namespaces": sorted(team.job_namespaces.values_list("namespace", flat=True)),
                      "tokens": sorted(team.api_tokens.values_list("key_prefix", flat=True))}
            rows.append(AuditEvent(**AuditEvent.fields_for(
                state.by, AuditAction.TEAM_REMOVED, team, before=before, after={"reason": reason} if reason else None)))
            AuditEvent.objects.bulk_create(rows)
            team.delete()
        return apply

    # people

    def _resolve_people(self) -> None:
        wanted = [m for s in self.specs for m in (s.members or [])]
        usernames = {m.username for m in wanted if m.username}
        emails = {m.email.lower() for m in wanted if m.email}
        User = get_user_model()
        by_username = {u.username: u for u in User.objects.filter(username__in=usernames)}
        by_email: dict[str, list] = {}
        for user in User.objects.annotate(email_lower=Lower("email")).filter(email_lower__in=emails).order_by("username"):
            by_email.setdefault(user.email_lower, []).append(user)
        said_email: dict[str, tuple[str, str]] = {}  # username -> (path, e-mail) as the file first said it
        for member in wanted:
            if member.username:
                if member.email:
                    first = said_email.setdefault(member.username, (member.path, member.email))
                    if first[1].lower() != member.email.lower():
                        self.problems.add(f"{member.path}.email",
                                          f"{member.username} has e-mail {first[1]} at {first[0]}")
                        continue
                user = by_username.get(member.username)
                if user is None and member.email:
                    others = [u.username for u in by_email.get(member.email.lower(), [])]
                    if others:
                        self.problems.add(f"{member.path}.email",
                                          f"{member.email} is the e-mail of user {', '.join(others)}, not "
                                          f"{member.username}; name that username, or change the e-mail")
                        continue
            else:
                found = by_email.get(member.email.lower(), [])
                if len(found) > 1:
                    self.problems.add(f"{member.path}.email",
                                      f"several users have e-mail {member.email} ({', '.join(u.username for u in found)}); "
                                      "name the username")
                    continue
                user = found[0] if found else None
            if user is not None:
                self.users[member.key] = user
                if member.email and user.email.lower() != member.email.lower():
                    self._email_change(user, member.email)
            elif member.key not in self.creating:
                self.creating[member.key] = member
                username = member.username or member.email
                self.plan.users_created.append(username)
                self._add("+", f"user {username} <{member.email or 'no e-mail'}>, with an unusable password",
                          self._create_user(member, username))

    def _email_change(self, user, email: str) -> None:
        if any(c.text.startswith(f"user {user.username}: e-mail") for c in self.plan.changes):
            return
        self._add("~", f"user {user.username}: e-mail {user.email or 'none'} → {email}",
                  self._change_email(user, email))

    @staticmethod
    def _change_email(user, email: str) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            before = user.email
            user.email = email
            user.save(update_fields=["email"])
            AuditEvent.record(state.by, AuditAction.USER_EMAIL_CHANGED, user, before={"email": before},
                              after={"email": email})
        return apply

    @staticmethod
    def _create_user(member: MemberSpec, username: str) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            user = get_user_model().objects.create_user(username, member.email or "", None)
            state.users[member.key] = user
            AuditEvent.record(state.by, AuditAction.USER_CREATED, user, before=None,
                              after={"username": username, "email": member.email or "", "password": "unusable"})
        return apply

    def _members(self) -> None:
        managed = [s for s in self.specs if s.members is not None]
        current: dict[str, dict[int, Membership]] = {}
        for membership in Membership.objects.select_related("team", "user").filter(
                team__slug__in=[s.slug for s in managed]):
            current.setdefault(membership.team.slug, {})[membership.user_id] = membership
        for spec in managed:
            mine = current.get(spec.slug, {})
            listed: set[int] = set()
            for member in spec.members:
                user = self.users.get(member.key)
                if user is None:
                    if member.key in self.creating:
                        self._add("+", f"{spec.slug}: member {_user_label(member)} ({member.role})",
                                  self._add_member(spec.slug, member, None))
                    continue
                if user.pk in listed:
                    self.problems.add(member.path, f"{user.username} is already listed in this team")
                    continue
                listed.add(user.pk)
                membership = mine.get(user.pk)
                if membership is None:
                    self._add("+", f"{spec.slug}: member {user.username} ({member.role})",
                              self._add_member(spec.slug, member, user))
                elif membership.role != member.role:
                    self._add("~", f"{spec.slug}: {user.username} {membership.role} → {member.role}",
                              self._change_role(membership, member.role))
            if self.prune:
                leaving = [m for uid, m in mine.items() if uid not in listed]
                self._remove_members(spec, sorted(leaving, key=lambda m: m.user.username))

    def _remove_members(self, spec: TeamSpec, leaving: list[Membership]) -> None:
        if not leaving:
            return
        owning = {}
        for username, n in (Dataset.objects.filter(owner_team__slug=spec.slug, owner__in=[m.user for m in leaving])
                            .order_by().values_list("owner__username").annotate(n=models.Count("id"))):
            owning[username] = n
        for membership in leaving:
            username = membership.user.username
            n = owning.get(username, 0)
            if n and not self.reason:
                self.problems.add(f"{spec.path}.members" if spec.path else "members",
                                  f"{username} is the named owner of {n} dataset{'s' if n != 1 else ''} of team "
                                  f"{spec.slug}: removing them needs a reason (the team keeps the datasets, "
                                  "with no owner person)")
                continue
            said = f" (owner of {n} dataset{'s' if n != 1 else ''}; reason: {self.reason})" if n else ""
            self._add("-", f"{spec.slug}: member {username}{said}", self._remove_member(membership, self.reason))

    @staticmethod
    def _add_member(slug: str, member: MemberSpec, user) -> Callable[[_Applying], None]:
        """`user` None: the person this sync creates."""
        def apply(state: _Applying) -> None:
            team = state.teams[slug]
            person = user if user is not None else state.users[member.key]
            Membership.objects.create(team=team, user=person, role=member.role)
            AuditEvent.record(state.by, AuditAction.MEMBER_ADDED, team, before=None,
                              after={"user": person.get_username(), "role": member.role})
        return apply

    @staticmethod
    def _change_role(membership: Membership, role: str) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            before = membership.role
            membership.role = role
            membership.save(update_fields=["role"])
            username = membership.user.get_username()
            AuditEvent.record(state.by, AuditAction.MEMBER_ROLE_CHANGED, membership.team,
                              before={"user": username, "role": before}, after={"user": username, "role": role})
        return apply

    @staticmethod
    def _remove_member(membership: Membership, reason: str) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            remove_membership(membership, by=state.by, reason=reason)
        return apply

    # channels

    def _channels(self) -> None:
        managed = [s for s in self.specs if s.channels is not None]
        provider = team_channels_provider()
        if not managed or provider is None:
            return
        current = provider.current([self.existing[s.slug].pk for s in managed if s.slug in self.existing])
        for spec in managed:
            team = self.existing.get(spec.slug)
            have = {(kind, provider.recipient(kind, settings)): (cid, settings)
                    for cid, kind, settings in (current.get(team.pk, []) if team else [])}
            listed = set()
            for channel in spec.channels:
                identity = (channel.kind, provider.recipient(channel.kind, channel.settings))
                listed.add(identity)
                found = have.get(identity)
                if found is None:
                    self._add("+", f"{spec.slug}: channel {channel.kind} {identity[1]}",
                              self._save_channel(spec.slug, channel, None, None))
                    continue
                # Settings the entry leaves out are left as they are, like a team's keys.
                changed = sorted(k for k, v in channel.settings.items() if found[1].get(k) != v)
                if changed:
                    merged = ChannelSpec(channel.path, channel.kind, {**found[1], **channel.settings})
                    self._add("~", f"{spec.slug}: channel {channel.kind} {identity[1]}: {', '.join(changed)} changed",
                              self._save_channel(spec.slug, merged, found[0], found[1]))
            if self.prune:
                for identity, (cid, settings) in sorted(have.items()):
                    if identity not in listed:
                        self._add("-", f"{spec.slug}: channel {identity[0]} {identity[1]}",
                                  self._remove_channel(spec.slug, cid, identity[0], settings))

    @staticmethod
    def _save_channel(slug: str, channel: ChannelSpec, channel_id: int | None,
                      before: dict | None) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team = state.teams[slug]
            team_channels_provider().save(team, channel.kind, channel.settings, channel_id)
            after = {"kind": channel.kind, **shown_settings(channel.settings)}
            if channel_id is None:
                AuditEvent.record(state.by, AuditAction.CHANNEL_ADDED, team, before=None, after=after)
            else:
                AuditEvent.record(state.by, AuditAction.CHANNEL_CHANGED, team,
                                  before={"kind": channel.kind, **shown_settings(before)}, after=after)
        return apply

    @staticmethod
    def _remove_channel(slug: str, channel_id: int, kind: str, settings: dict) -> Callable[[_Applying], None]:
        def apply(state: _Applying) -> None:
            team_channels_provider().remove(channel_id)
            AuditEvent.record(state.by, AuditAction.CHANNEL_REMOVED, state.teams[slug],
                              before={"kind": kind, **shown_settings(settings)}, after=None)
        return apply


def _protected_by(team: Team) -> str:
    """What keeps the database from deleting `team` (rows that PROTECT it), said plainly, or ""."""
    try:
        Collector(using=Team.objects.db).collect([team])
    except ProtectedError as exc:
        # The owned datasets are made unowned before the delete, so they do not count.
        kinds: dict[str, int] = {}
        for obj in exc.protected_objects:
            if not (isinstance(obj, Dataset) and obj.owner_team_id == team.pk):
                label = str(obj._meta.verbose_name_plural)
                kinds[label] = kinds.get(label, 0) + 1
        return ", ".join(f"{n} {label}" for label, n in sorted(kinds.items()))
    return ""


def remove_membership(membership: Membership, *, by, reason: str = "") -> None:
    """Take a person out of a team, audited. A person named as owner of the team's
    datasets is removed only with a reason: the datasets keep their team and lose the person."""
    team, user = membership.team, membership.user
    datasets = list(Dataset.objects.select_for_update().filter(owner_team=team, owner=user))
    if datasets and not reason.strip():
        raise RegistryError(f"{user.get_username()} is the named owner of {len(datasets)} dataset"
                            f"{'s' if len(datasets) != 1 else ''} of team {team.slug}; give a reason to remove them "
                            "(the team keeps the datasets, with no owner person).")
    AuditEvent.objects.bulk_create([AuditEvent(**AuditEvent.fields_for(
        by, AuditAction.DATASET_OWNER_CHANGED, d, before={"owner_team": team.slug, "owner": user.get_username()},
        after={"owner_team": team.slug, "owner": None, "reason": reason.strip()})) for d in datasets])
    Dataset.objects.filter(pk__in=[d.pk for d in datasets]).update(owner=None)
    after = {"reason": reason.strip()} if reason.strip() else None
    AuditEvent.record(by, AuditAction.MEMBER_REMOVED, team, before={"user": user.get_username(), "role": membership.role},
                      after=after)
    membership.delete()


# --- the entry points -------------------------------------------------------------------

def check_may_manage_teams(by) -> None:
    """Teams and people are a governance admin's (an operator's command passes its label, a str)."""
    if not isinstance(by, str) and not is_governance_admin(by):
        raise PermissionDenied("Managing teams and their members is for governance admins.")


def plan(specs: list[TeamSpec], *, prune: bool = False, reason: str = "", whole: bool = True) -> Plan:
    """The changes that make the registry match `specs`. `whole`: the specs are every team
    (a teams file), so `prune` removes the teams they leave out; otherwise (the API's one
    team) `prune` only makes the listed members and channels complete."""
    return _Planner(specs, prune=prune, reason=reason, whole=whole).build()


def sync(specs: list[TeamSpec], *, by, prune: bool = False, reason: str = "", dry_run: bool = False,
         whole: bool = True, progress: Callable[[int, int], None] | None = None) -> Plan:
    """Plan, and unless `dry_run` apply, in one transaction: all of it or none of it."""
    check_may_manage_teams(by)
    try:
        with transaction.atomic():
            changes = plan(specs, prune=prune, reason=reason, whole=whole)
            if not dry_run:
                changes.apply(by, progress)
    except IntegrityError:
        # Another change to the same teams or people committed between the plan and the write.
        raise RegistryError("Teams or people changed while this sync ran; nothing was applied. Run it again.") from None
    return changes


def sync_document(document: Any, **options) -> Plan:
    return sync(parse_document(document), **options)


def parse_one_team(entry: Any, *, slug: str | None = None) -> TeamSpec:
    """One team's entry as the API receives it (the slug from the URL when updating)."""
    problems = _Problems()
    if slug is not None and isinstance(entry, dict):
        if entry.get("slug", slug) != slug:
            problems.add("slug", f"is {slug!r} in the URL; rename a team in the admin")
        entry = {**entry, "slug": slug}
    spec = parse_team(entry, "", problems, creating=slug is None)
    problems.raise_any()
    return spec


def parse_one_member(entry: Any) -> MemberSpec:
    problems = _Problems()
    member = parse_member(entry, "", problems)
    problems.raise_any()
    return member


def create_team(spec: TeamSpec, *, by, dry_run: bool = False) -> Plan:
    check_may_manage_teams(by)
    if Team.objects.filter(slug=spec.slug).exists():
        raise RegistryError(f"Team {spec.slug} exists already; change it with PATCH /api/teams/{spec.slug}/.")
    return sync([spec], by=by, whole=False, dry_run=dry_run)


def remove_member(team: Team, user, *, by, reason: str = "") -> bool:
    """Take `user` out of `team` (a governance admin), audited; False if they were not in it."""
    check_may_manage_teams(by)
    with transaction.atomic():
        membership = Membership.objects.select_related("team", "user").select_for_update(of=("self",)).filter(
            team=team, user=user).first()
        if membership is None:
            return False
        remove_membership(membership, by=by, reason=reason)
    return True
