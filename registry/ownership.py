"""Job ownership at job grain: team aliases, owners read from dbt artefacts,
the ownership rules file, and the attribution they decide (registry.jobs).

The rules file is CODEOWNERS syntax, one rule a line, the last matching line
winning; `#` starts a comment:

    models/finance/**             @finance      # dbt's original_file_path
    *.yml                         @platform
    ns:dbt_shop job:*.finance_*   @finance      # job-name globs in a namespace
    job:nightly_*                 @warehouse    # in any namespace
    models/finance/legacy/                      # no owner: the rules file does not decide

A path pattern is matched as CODEOWNERS and .gitignore match theirs: `*` within
a folder, `**` across folders, a leading `/` or a `/` inside anchors it at the
project root, otherwise it matches at any depth, and a folder matches
everything under it. A `ns:`/`job:` glob is matched against the whole job
namespace/name (`*` matches anything, dots and slashes included). `@owner` is
a team slug or an alias a team declared (`@org/team` also tries `team`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from registry.constants import AuditAction
from registry.jobs import DbtOwner, DecidedBy, JobTeam, OwnershipRules, TeamAlias, normal_name
from registry.models import (
    AuditEvent,
    RegistryError,
    Team,
    acts_for,
    is_governance_admin,
    person_of,
)
from registry.usage import ColumnRead, NamespaceTeam


def dbt_project_of(unique_id: str) -> str:
    """The project in a dbt unique_id ("model.shop.orders" -> "shop"), or ""."""
    parts = unique_id.split(".")
    return parts[1] if len(parts) >= 3 else ""


@dataclass
class DbtOwnersRecorded:
    """What `record_dbt_owners` changed, node ids sorted."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"created": self.created, "changed": self.changed, "unchanged": self.unchanged, "removed": self.removed}


def record_dbt_owners(rows: Iterable[Mapping], *, by, project: str | None = None,
                      replace: bool = False) -> DbtOwnersRecorded:
    """Record the owner team dbt's artefacts give each node, in one transaction, audited.

    Each row is a mapping with `unique_id` (dbt's node id, required), `team` (a
    Team, or a name: a team slug or an alias a team declared; "group:finance"
    also tries "finance", as owner names do), and optionally
    `original_file_path`, `source` (where the owner was read, e.g. "group:finance"
    or "meta.owner") and `project` (else the unique_id's second part, else
    `project`). A node recorded before is updated when its team, path or source
    differ. With `replace` and `project`, nodes of that project not in `rows` are
    removed (their owner was taken out of the artefacts). A name no team answers
    to is an error naming the node; nothing is stored then.

    Jobs whose `dbt_node` facet names a recorded node (by unique_id, else by
    original_file_path) are then attributed to its team unless an `ownership`
    facet or the rules file decides first (rule order: registry.jobs)."""
    if by is not None and not is_governance_admin(by):
        raise PermissionDenied("Recording owners from dbt artefacts is for governance admins.")
    rows = list(rows)
    problems = []
    wanted: dict[str, dict] = {}
    for n, row in enumerate(rows, 1):
        unique_id = str(row.get("unique_id") or "").strip()
        team = row.get("team")
        if not unique_id:
            problems.append(f"row {n}: no unique_id (dbt's node id, e.g. \"model.shop.orders\")")
            continue
        if team is None or (isinstance(team, str) and not team.strip()):
            problems.append(f"{unique_id}: no team")
            continue
        if unique_id in wanted:
            problems.append(f"{unique_id}: listed twice")
            continue
        wanted[unique_id] = {"team": team, "original_file_path": str(row.get("original_file_path") or "").strip(),
                             "source": str(row.get("source") or "").strip()[:100],
                             "project": str(row.get("project") or dbt_project_of(unique_id) or project or "").strip()}
    named = team_names() if any(isinstance(w["team"], str) for w in wanted.values()) else {}
    for unique_id, w in wanted.items():
        if isinstance(w["team"], Team):
            continue
        team = team_of_owner(str(w["team"]), named)
        if team is None:
            problems.append(f"{unique_id}: no team is named or aliased \"{w['team']}\" "
                            "(add the team, or declare the name as one of its aliases)")
        w["team"] = team
    if problems:
        raise RegistryError("dbt owners not recorded: " + "; ".join(problems) + ".")

    recorded = DbtOwnersRecorded()
    now = timezone.now()
    with transaction.atomic():
        existing = {o.unique_id: o for o in DbtOwner.objects.select_for_update().select_related("team")
                    .filter(Q(unique_id__in=list(wanted)) | (Q(project=project) if replace and project else Q(pk__in=[])))}
        audits = []
        for unique_id in sorted(wanted):
            w = wanted[unique_id]
            old = existing.get(unique_id)
            after = {"unique_id": unique_id, "team": w["team"].slug, "original_file_path": w["original_file_path"],
                     "source": w["source"], "project": w["project"]}
            if old is None:
                row = DbtOwner.objects.create(unique_id=unique_id, team=w["team"], original_file_path=w["original_file_path"],
                                              source=w["source"], project=w["project"], recorded_at=now,
                                              recorded_by=person_of(by))
                recorded.created.append(unique_id)
                audits.append(AuditEvent(**AuditEvent.fields_for(by, AuditAction.DBT_OWNER_RECORDED, row, after=after)))
                continue
            before = {"unique_id": unique_id, "team": old.team.slug, "original_file_path": old.original_file_path,
                      "source": old.source, "project": old.project}
            if before == after:
                recorded.unchanged.append(unique_id)
                continue
            old.team, old.original_file_path, old.source, old.project = (
                w["team"], w["original_file_path"], w["source"], w["project"])
            old.recorded_at, old.recorded_by = now, person_of(by)
            old.save()
            recorded.changed.append(unique_id)
            audits.append(AuditEvent(**AuditEvent.fields_for(by, AuditAction.DBT_OWNER_RECORDED, old,
                                                             before=before, after=after)))
        if replace and project:
            for unique_id, old in sorted(existing.items()):
                if unique_id not in wanted and old.project == project:
                    audits.append(AuditEvent(**AuditEvent.fields_for(
                        by, AuditAction.DBT_OWNER_REMOVED, old,
                        before={"unique_id": unique_id, "team": old.team.slug, "project": old.project}, after=None)))
                    old.delete()
                    recorded.removed.append(unique_id)
        AuditEvent.objects.bulk_create(audits)
        touched = [*recorded.created, *recorded.changed, *recorded.removed]
        if touched:
            paths = {w["original_file_path"] for w in wanted.values() if w["original_file_path"]}
            paths |= {o.original_file_path for o in existing.values() if o.original_file_path}
            attribute_jobs(Q(dbt_unique_id__in=touched) | Q(dbt_path__in=paths))
            settle_after_commit()
    return recorded


def declare_alias(team: Team, alias: str, *, by) -> TeamAlias:
    """Say that `team` also answers to `alias` in lineage and ownership files (audited)."""
    name = normal_name(alias)
    if not name:
        raise RegistryError("Name the alias, e.g. \"team:finance\".")
    if not (acts_for(by, team) or is_governance_admin(by)):
        raise PermissionDenied(f"Only a member of team {team.slug} or an admin can declare its aliases.")
    with transaction.atomic():
        clash = Team.objects.filter(slug__iexact=name).exclude(pk=team.pk).first()
        if clash is not None:
            raise RegistryError(f"\"{name}\" is team {clash.slug}'s slug; it cannot be another team's alias.")
        existing = TeamAlias.objects.select_for_update().select_related("team").filter(alias=name).first()
        if existing is not None:
            if existing.team_id == team.pk:
                return existing
            raise RegistryError(f"\"{name}\" is already an alias of team {existing.team.slug}; "
                                "that team removes it first.")
        row = TeamAlias.objects.create(team=team, alias=name)
        AuditEvent.record(by, AuditAction.TEAM_ALIAS_DECLARED, team, after={"team": team.slug, "alias": name})
        attribute_jobs()  # an ownership facet's owner, or a rules line's, may now name this team
        settle_after_commit()
    return row


def remove_alias(team: Team, alias: str, *, by) -> bool:
    if not (acts_for(by, team) or is_governance_admin(by)):
        raise PermissionDenied(f"Only a member of team {team.slug} or an admin can remove its aliases.")
    name = normal_name(alias)
    with transaction.atomic():
        deleted, _ = TeamAlias.objects.filter(team=team, alias=name).delete()
        if deleted:
            AuditEvent.record(by, AuditAction.TEAM_ALIAS_REMOVED, team, before={"team": team.slug, "alias": name})
            attribute_jobs()
            settle_after_commit()
    return bool(deleted)


class RulesUnreadable(RegistryError):
    """A rules file with lines that cannot be read: bad input, refused whole."""

    http_status = 400


def team_names() -> dict[str, Team]:
    """Every name a team answers to (its slug, its aliases), by normal name (two queries)."""
    teams = {t.pk: t for t in Team.objects.all()}
    names = {t.slug.casefold(): t for t in teams.values()}
    for alias, team_id in TeamAlias.objects.values_list("alias", "team_id"):
        names.setdefault(alias, teams[team_id])
    return names


def owner_candidates(name: str) -> list[str]:
    """The names an owner name may mean, most exact first: "team:finance" and
    "org/finance" also try "finance"."""
    name = normal_name(name)
    found = [name]
    for separator in (":", "/"):
        if separator in name:
            found.append(name.rsplit(separator, 1)[1])
    return [n for n in dict.fromkeys(found) if n]


def team_of_owner(name: str, names: dict[str, Team]) -> Team | None:
    for candidate in owner_candidates(name):
        if candidate in names:
            return names[candidate]
    return None


# --- what a job's events say (the ingest keeps these on JobTeam) -----------------

@dataclass(frozen=True)
class JobFacts:
    """What a job's facets say for ownership; None where the event said nothing
    (a later event without the facet keeps what an earlier one said)."""

    dbt_unique_id: str | None = None
    dbt_path: str | None = None
    owners: tuple[str, ...] | None = None

    @property
    def said(self) -> bool:
        return self.dbt_unique_id is not None or self.owners is not None


NO_FACTS = JobFacts()


def job_facts(job_facets: dict) -> JobFacts:
    """The `dbt_node` facet's unique_id and original_file_path, and the
    `ownership` facet's owner names (normal names, in order)."""
    node, ownership = job_facets.get("dbt_node"), job_facets.get("ownership")
    unique_id = path = owners = None
    if isinstance(node, dict):
        unique_id = str(node.get("unique_id") or "")[:500]
        path = str(node.get("original_file_path") or "").strip().removeprefix("./")[:1000]
    if isinstance(ownership, dict) and isinstance(ownership.get("owners"), list):
        owners = tuple(dict.fromkeys(
            normal_name(o["name"]) for o in ownership["owners"]
            if isinstance(o, dict) and isinstance(o.get("name"), str) and normal_name(o["name"])))
    return JobFacts(unique_id, path, owners)


# --- the rules file ------------------------------------------------------------------

def path_regex(pattern: str) -> re.Pattern:
    """A CODEOWNERS path pattern as a regular expression over a project-relative path."""
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    anchored = pattern.startswith("/") or "/" in body
    out, i = [], 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and "]" in body[i + 2:]:
            end = body.index("]", i + 2)
            inner = body[i + 1:end]
            out.append("[" + ("^" + re.escape(inner[1:]) if inner.startswith("!") else re.escape(inner)) + "]")
            i = end + 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    last = body.rsplit("/", 1)[-1]
    # A folder matches everything under it; a last part with a wildcard only what is
    # directly there (CODEOWNERS: `docs/*` is not `docs/a/b.md`), unless it is `**`.
    suffix = "/.*" if directory else "" if ("*" in last or "?" in last) and last != "**" else "(?:/.*)?"
    return re.compile(prefix + "".join(out) + suffix)


ANY_NAME = "[^\x00]*"  # a namespace or job name never holds a NUL: it joins the two


def glob_regex(glob: str) -> re.Pattern:
    """A `ns:`/`job:` glob: `*` anything, `?` one character, `[...]` a class; matched whole."""
    out = []
    for part in re.split(r"(\*|\?|\[[^\]]+\])", glob):
        if part == "*":
            out.append(ANY_NAME)
        elif part == "?":
            out.append("[^\x00]")
        elif part.startswith("[") and part.endswith("]") and len(part) > 2:
            inner = part[1:-1]
            out.append("[" + ("^" + re.escape(inner[1:]) if inner.startswith("!") else re.escape(inner)) + "]")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out), re.S)


@dataclass(frozen=True)
class RuleLine:
    line: int
    text: str
    team: Team | None  # None: the line says the rules file does not decide what it matches
    path: re.Pattern | None = None
    namespace: re.Pattern | None = None
    job: re.Pattern | None = None

    def matches(self, job_namespace: str, job_name: str, dbt_path: str) -> bool:
        if self.path is not None:
            return bool(dbt_path) and self.path.fullmatch(dbt_path) is not None
        return ((self.namespace is None or self.namespace.fullmatch(job_namespace) is not None)
                and self.job is not None and self.job.fullmatch(job_name) is not None)


@dataclass
class Ruleset:
    version: int | None
    lines: list[RuleLine]
    problems: list[str] = field(default_factory=list)

    def deciding_line(self, job_namespace: str, job_name: str, dbt_path: str) -> RuleLine | None:
        """The last line matching the job (CODEOWNERS: a later line overrides an earlier one)."""
        paths, jobs = self._combined()
        found = [m for m in (paths.fullmatch(dbt_path) if dbt_path and paths else None,
                             jobs.fullmatch(f"{job_namespace}\x00{job_name}") if jobs else None) if m is not None]
        return max((self.lines[int(m.lastgroup[1:])] for m in found), key=lambda line: line.line, default=None)

    def _combined(self) -> tuple[re.Pattern | None, re.Pattern | None]:
        """Each kind of line as one expression, its alternatives last line first: the
        first alternative that matches is the last matching line (one regex call per
        job and kind, not one per line)."""
        if getattr(self, "_regexes", None) is None:
            def either(lines: list[tuple[int, str]]) -> re.Pattern | None:
                return re.compile("|".join(f"(?P<l{i}>{body})" for i, body in reversed(lines)), re.S) if lines else None

            paths = [(i, line.path.pattern) for i, line in enumerate(self.lines) if line.path is not None]
            jobs = [(i, f"(?:{line.namespace.pattern if line.namespace else ANY_NAME})\x00(?:{line.job.pattern})")
                    for i, line in enumerate(self.lines) if line.path is None]
            self._regexes = (either(paths), either(jobs))
        return self._regexes


_COMMENT = re.compile(r"(?:^|\s)#.*$")


def parse_rules(text: str, *, version: int | None = None, names: dict[str, Team] | None = None) -> Ruleset:
    """The rules of a rules file (format: this module's docstring). Each line
    that cannot be read is a problem naming its line; such a line is left out."""
    names = team_names() if names is None else names
    lines, problems = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        stripped = _COMMENT.sub("", raw).strip()
        if not stripped:
            continue
        tokens = stripped.split()
        owners = [t for t in tokens if t.startswith("@") or "@" in t]
        patterns = [t for t in tokens if t not in owners]
        where = f"line {n} ({stripped})"
        if len(owners) > 1:
            problems.append(f"{where}: names {len(owners)} owners; a job has one owner team, keep one")
            continue
        team = None
        if owners:
            owner = owners[0]
            if not owner.startswith("@"):
                problems.append(f"{where}: the owner {owner} is not a team; owners are teams, written @slug")
                continue
            team = team_of_owner(owner, names)
            if team is None:
                problems.append(f"{where}: no team is named or aliased \"{normal_name(owner)}\" "
                                "(add the team, or declare the name as one of its aliases)")
                continue
        ns = [t for t in patterns if t.startswith("ns:")]
        job = [t for t in patterns if t.startswith("job:")]
        paths = [t for t in patterns if not t.startswith(("ns:", "job:"))]
        if not patterns:
            problems.append(f"{where}: no pattern before the owner")
        elif job or ns:
            if paths or len(job) != 1 or len(ns) > 1:
                problems.append(f"{where}: a job rule is `ns:<glob> job:<glob> @team` or `job:<glob> @team`")
            elif not job[0][4:] or (ns and not ns[0][3:]):
                problems.append(f"{where}: an empty glob; write `*` to mean any")
            else:
                lines.append(RuleLine(n, stripped, team, job=glob_regex(job[0][4:]),
                                      namespace=glob_regex(ns[0][3:]) if ns else None))
        elif len(paths) > 1:
            problems.append(f"{where}: one path pattern a line (quote nothing; spaces are not allowed in a pattern)")
        else:
            lines.append(RuleLine(n, stripped, team, path=path_regex(paths[0])))
    return Ruleset(version, lines, problems)


def current_rules(names: dict[str, Team] | None = None) -> Ruleset:
    """The rules in force (the highest version), read leniently: a line whose owner
    no longer answers (a team or alias removed since) is left out."""
    latest = OwnershipRules.objects.order_by("-version").first()
    if latest is None:
        return Ruleset(None, [])
    return parse_rules(latest.text, version=latest.version, names=names)


# --- deciding -----------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    team: Team | None
    rule: str  # DecidedBy
    detail: str


NOBODY = Decision(None, DecidedBy.NOBODY, "")


def decide(job: JobTeam, ruleset: Ruleset, names: dict[str, Team],
           dbt_by_id: dict[str, DbtOwner], dbt_by_path: dict[str, DbtOwner]) -> Decision:
    """The first three rules of registry.jobs, in order."""
    for owner in job.owners or []:
        team = team_of_owner(owner, names)
        if team is not None:
            return Decision(team, DecidedBy.OWNERSHIP_FACET, f"ownership facet owner \"{owner}\"")
    line = ruleset.deciding_line(job.job_namespace, job.job_name, job.dbt_path)
    if line is not None and line.team is not None:
        return Decision(line.team, DecidedBy.RULES_FILE, f"rules v{ruleset.version} line {line.line}: {line.text}")
    node = dbt_by_id.get(job.dbt_unique_id) if job.dbt_unique_id else None
    if node is None and job.dbt_path:
        node = dbt_by_path.get(job.dbt_path)
    if node is not None:
        return Decision(node.team, DecidedBy.DBT_ARTEFACTS, f"dbt {node.source or 'artefacts'}: {node.unique_id}")
    return NOBODY


@dataclass(frozen=True)
class Reattributed:
    job: str
    before: str | None  # team slug
    after: str | None
    rule: str
    detail: str

    def to_dict(self) -> dict:
        return {"job": self.job, "before": self.before, "after": self.after, "rule": self.rule, "detail": self.detail}


def attribute_jobs(where: Q | None = None, *, ruleset: Ruleset | None = None, write: bool = True) -> list[Reattributed]:
    """Decide again the team of the jobs `where` selects (all by default) from the
    facts stored on them, and store what changed (one bulk update); nothing is
    re-ingested. With `write` False, only says what would change (a dry run of
    `ruleset`). A constant number of queries whatever the number of jobs."""
    jobs = list(JobTeam.objects.filter(where or Q()).select_related("team"))
    if not jobs:
        return []
    names = team_names()
    ruleset = current_rules(names) if ruleset is None else ruleset
    ids = {j.dbt_unique_id for j in jobs if j.dbt_unique_id}
    paths = {j.dbt_path for j in jobs if j.dbt_path}
    dbt_by_id, dbt_by_path = {}, {}
    if ids or paths:
        # Every job: every node (no list of ten thousand names to send); some: those they name.
        nodes = DbtOwner.objects.all() if where is None else DbtOwner.objects.filter(
            Q(unique_id__in=ids) | Q(original_file_path__in=paths))
        for node in nodes.select_related("team"):
            dbt_by_id[node.unique_id] = node
            if node.original_file_path:
                dbt_by_path.setdefault(node.original_file_path, node)
    now, changed, reattributed = timezone.now(), [], []
    for job in jobs:
        decision = decide(job, ruleset, names, dbt_by_id, dbt_by_path)
        team_id = decision.team.pk if decision.team else None
        if (job.team_id, job.rule, job.rule_detail) == (team_id, decision.rule, decision.detail):
            continue
        if job.team_id != team_id:
            reattributed.append(Reattributed(job.job, job.team.slug if job.team else None,
                                             decision.team.slug if decision.team else None,
                                             decision.rule, decision.detail))
        job.team, job.rule, job.rule_detail, job.attributed_at = decision.team, decision.rule, decision.detail, now
        changed.append(job)
    if write and changed:
        _store_decisions(changed, now)
    return sorted(reattributed, key=lambda r: r.job)


# One statement for every changed job, whatever their number (Django's bulk_update
# builds a CASE per row and field: seconds of Python for ten thousand jobs).
STORE_DECISIONS = (
    f"UPDATE {JobTeam._meta.db_table} AS j SET team_id = v.t, rule = v.r, rule_detail = v.d, attributed_at = %s "
    "FROM unnest(CAST(%s AS bigint[]), CAST(%s AS bigint[]), CAST(%s AS text[]), CAST(%s AS text[])) AS v(i, t, r, d) "
    "WHERE j.id = v.i")


def _store_decisions(jobs: list[JobTeam], now) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        JobTeam.objects.bulk_update(jobs, ["team", "rule", "rule_detail", "attributed_at"], batch_size=500)
        return
    with connection.cursor() as cursor:
        cursor.execute(STORE_DECISIONS, [now, [j.pk for j in jobs], [j.team_id for j in jobs],
                                         [j.rule for j in jobs], [j.rule_detail for j in jobs]])


# How long before a change of the rules a job first seen may still have been decided
# under the old ones (an ingest transaction open while the change was made).
SETTLE_WINDOW = timedelta(minutes=5)


def settle_after_commit() -> None:
    """Once the current change of rules, aliases or dbt owners commits, decide again
    the jobs first seen shortly before it: an event storing a new job concurrently
    decided it under what it could see then, and the change's own pass did not
    see that uncommitted job."""
    since = timezone.now() - SETTLE_WINDOW
    transaction.on_commit(lambda: attribute_jobs(Q(first_seen_at__gte=since)))


def record_job_facts(job_namespace: str, job_name: str, facts: JobFacts) -> bool:
    """Keep what a job's event says for ownership (the ingest calls this for a new
    job, or one whose facts may have changed), and decide its team again if
    anything changed. Returns whether it did. Portable SQL: one upsert, and
    only on a change the few queries of attribute_jobs."""
    from django.db import connection

    table = JobTeam._meta.db_table
    uid, path = facts.dbt_unique_id, facts.dbt_path
    owners = JobTeam._meta.get_field("owners").get_db_prep_save(list(facts.owners or ()), connection)
    now = JobTeam._meta.get_field("first_seen_at").get_db_prep_save(timezone.now(), connection)
    sql = (f"INSERT INTO {table} AS t (job_namespace, job_name, dbt_unique_id, dbt_path, owners, rule, rule_detail, "
           "first_seen_at) VALUES (%s, %s, %s, %s, %s, '', '', %s) "
           "ON CONFLICT (job_namespace, job_name) DO UPDATE SET "
           "dbt_unique_id = CASE WHEN %s THEN EXCLUDED.dbt_unique_id ELSE t.dbt_unique_id END, "
           "dbt_path = CASE WHEN %s THEN EXCLUDED.dbt_path ELSE t.dbt_path END, "
           "owners = CASE WHEN %s THEN EXCLUDED.owners ELSE t.owners END "
           "WHERE (%s AND (t.dbt_unique_id <> EXCLUDED.dbt_unique_id OR t.dbt_path <> EXCLUDED.dbt_path)) "
           "OR (%s AND NOT (t.owners = EXCLUDED.owners)) RETURNING id")
    has_dbt, has_owners = uid is not None, facts.owners is not None
    with connection.cursor() as cursor:
        cursor.execute(sql, [job_namespace, job_name, uid or "", path or "", owners, now,
                             has_dbt, has_dbt, has_owners, has_dbt, has_owners])
        row = cursor.fetchone()
    if row is None:
        return False
    attribute_jobs(Q(pk=row[0]))
    return True


# --- changing the rules ---------------------------------------------------------------

@dataclass
class RulesSaved:
    version: int | None  # the version in force after the call (None: none yet, a dry run)
    created: bool  # a new version was stored
    reattributed: list[Reattributed]

    def to_dict(self) -> dict:
        return {"version": self.version, "created": self.created,
                "reattributed": [r.to_dict() for r in self.reattributed]}


def normal_rules_text(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + ("\n" if lines else "")


def save_ownership_rules(text: str, *, by, note: str = "", dry_run: bool = False) -> RulesSaved:
    """Make `text` the ownership rules in force: a new version, audited, and every
    stored job's team decided again in the same transaction (no re-ingest). The
    same text as the version in force changes nothing. A line that cannot be read
    refuses the whole file, naming each such line. `dry_run`: only say which jobs
    would change team."""
    if by is not None and not is_governance_admin(by):
        raise PermissionDenied("Changing the ownership rules is for governance admins.")
    if not isinstance(text, str):
        raise RegistryError("The ownership rules are the text of a rules file.")
    text = normal_rules_text(text)
    names = team_names()
    parsed = parse_rules(text, names=names)
    if parsed.problems:
        raise RulesUnreadable("Ownership rules not saved: " + "; ".join(parsed.problems) + ".")
    with transaction.atomic():
        latest = OwnershipRules.objects.select_for_update().order_by("-version").first()
        if latest is not None and latest.text == text:
            return RulesSaved(latest.version, False, [])
        if dry_run:
            parsed.version = (latest.version if latest else 0) + 1
            return RulesSaved(latest.version if latest else None, False, attribute_jobs(ruleset=parsed, write=False))
        return _record_rules(latest, parsed, text, note=note.strip()[:500], by=by)


def _record_rules(latest: OwnershipRules | None, parsed, text: str, *, note: str, by) -> RulesSaved:
    """Inside the caller's transaction, holding `latest` locked: `text` (read as `parsed`)
    becomes the next version, every stored job's team is decided again by it, audited."""
    version = (latest.version if latest else 0) + 1
    parsed.version = version
    rules = OwnershipRules.objects.create(version=version, text=text, note=note, created_by=person_of(by))
    reattributed = attribute_jobs(ruleset=parsed)
    settle_after_commit()
    AuditEvent.record(by, AuditAction.OWNERSHIP_RULES_CHANGED, rules,
                      before={"version": latest.version, "text": latest.text} if latest else None,
                      after={"version": version, "text": text, "note": rules.note,
                             "jobs_reattributed": len(reattributed)})
    return RulesSaved(version, True, reattributed)


# --- jobs nobody owns -----------------------------------------------------------------

@dataclass(frozen=True)
class UnownedJob:
    job_namespace: str
    job_name: str
    dbt_unique_id: str
    dbt_path: str
    owners: list[str]
    token_team: str | None  # the slug of the team whose token posted its latest reading, if any
    suggestion: str  # the rules-file line that would claim it

    @property
    def job(self) -> str:
        return f"{self.job_namespace}/{self.job_name}"

    def to_dict(self) -> dict:
        return {"job": self.job, "namespace": self.job_namespace, "name": self.job_name,
                "dbt_unique_id": self.dbt_unique_id or None, "dbt_path": self.dbt_path or None,
                "owners": self.owners, "token_team": self.token_team,
                "decided_by": DecidedBy.TOKEN.value if self.token_team else DecidedBy.NOBODY.value,
                "suggested_rule": self.suggestion}


def suggested_rule(job_namespace: str, job_name: str, dbt_path: str, team: str | None) -> str:
    """A rules-file line that would claim the job: its dbt file's folder, else its name in its namespace."""
    owner = f"@{team}" if team else "@TEAM"
    if dbt_path:
        folder = posixpath.dirname(dbt_path)
        return f"{folder + '/**' if folder else dbt_path} {owner}"
    return f"ns:{job_namespace} job:{job_name} {owner}"


UNOWNED_JOBS_KEY = ("job_namespace", "job_name")  # job_team_unique: the lists page through it


def unowned_job_rows() -> QuerySet:
    """The JobTeam rows of the jobs no rule but the posting token's team owns (neither
    an ownership facet, the rules file, dbt artefacts nor their namespace's team), with
    that team; unordered, for a page (registry.keyset) or `unowned_jobs`."""
    token_team = Subquery(ColumnRead.objects.filter(job_namespace=OuterRef("job_namespace"), job_name=OuterRef("job_name"),
                                                    token_team__isnull=False)
                          .order_by("-last_seen_at").values("token_team_id")[:1])
    return (JobTeam.objects.filter(team__isnull=True)
            .exclude(Exists(NamespaceTeam.objects.filter(namespace=OuterRef("job_namespace"))))
            .annotate(token_team_id=token_team)
            .annotate(token_team_slug=Subquery(Team.objects.filter(pk=OuterRef("token_team_id")).values("slug")[:1])))


def unowned_jobs(rows=None) -> list[UnownedJob]:
    """Those jobs (`rows`: a page of `unowned_job_rows`; all of them, in order, by
    default), each with the rule that would claim it (one query)."""
    if rows is None:
        rows = unowned_job_rows().order_by(*UNOWNED_JOBS_KEY)
    return [UnownedJob(r.job_namespace, r.job_name, r.dbt_unique_id, r.dbt_path, list(r.owners or []),
                       r.token_team_slug, suggested_rule(r.job_namespace, r.job_name, r.dbt_path, r.token_team_slug))
            for r in rows]


# --- "this job is ours" ---------------------------------------------------------------

class JobAlreadyAttributed(RegistryError):
    """The job already has a team by a rule: changing it is the rules file's business (an admin)."""


def _glob_literal(text: str) -> str:
    """`text` as a `ns:`/`job:` glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def is_unattributed(job_namespace: str, job_name: str) -> bool:
    """Whether no rule but the posting token's team (rules 1 to 4 of registry.jobs) names the job's team."""
    return (JobTeam.objects.filter(job_namespace=job_namespace, job_name=job_name, team__isnull=True).exists()
            and not NamespaceTeam.objects.filter(namespace=job_namespace).exists())


def claim_job(job_namespace: str, job_name: str, team: Team, *, by) -> RulesSaved:
    """A member of `team` says an unattributed job is the team's: the line
    `ns:<namespace> job:<name> @<team>` is added to the ownership rules (a new
    version, as an admin's edit would make, so the job's team is decided by the same
    rules everyone's are), the job's readings follow at once, and the claim is audited
    (`job.claimed`, besides the rules' own `ownership_rules.changed`). A job some rule
    already gives a team is refused: changing that is the rules file's, for admins."""
    if not acts_for(by, team):
        raise PermissionDenied(f"Only a member of team {team.slug} can say a job is its.")
    if any(ch.isspace() or ch == "#" for ch in job_namespace + job_name):
        raise RegistryError(f"Job {job_namespace}/{job_name} cannot be named on one rules-file line (it holds a space "
                            "or a #): ask a governance admin to add a rule for it.")
    with transaction.atomic():
        latest = OwnershipRules.objects.select_for_update().order_by("-version").first()
        job = JobTeam.objects.select_for_update().filter(job_namespace=job_namespace, job_name=job_name).first()
        if job is None:
            raise RegistryError(f"No job {job_namespace}/{job_name} has been seen in lineage.")
        if job.team_id is not None or NamespaceTeam.objects.filter(namespace=job_namespace).exists():
            raise JobAlreadyAttributed(f"Job {job_namespace}/{job_name} already has a team by a rule "
                                       f"({DecidedBy(job.rule).label if job.team_id else 'its namespace'}); "
                                       "a governance admin changes the ownership rules.")
        line = f"ns:{_glob_literal(job_namespace)} job:{_glob_literal(job_name)} @{team.slug}"
        before = latest.text if latest else ""
        text = normal_rules_text(before + ("\n" if before and not before.endswith("\n") else "")
                                 + f"# claimed by {person_of(by).get_username() if person_of(by) else 'a token'} "
                                   f"for {team.slug}\n{line}\n")
        names = team_names()
        parsed = parse_rules(text, names=names)
        if parsed.problems:
            raise RulesUnreadable("The job cannot be claimed: " + "; ".join(parsed.problems) + ".")
        saved = _record_rules(latest, parsed, text, note=f"{team.slug} says {job_namespace}/{job_name} is its job",
                              by=by)
        AuditEvent.record(by, AuditAction.JOB_CLAIMED, team, before={"job": job.job, "team": None},
                          after={"job": job.job, "team": team.slug, "rule": line, "rules_version": saved.version})
    return saved
