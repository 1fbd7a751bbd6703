"""Who a breaking change breaks: each change mapped to the columns it touches, and
each consumer team judged by the columns its jobs read.

1. `touched_columns`: every breaking change of the checker's report is mapped to
   the columns (dataframe) or top-level properties (event / api) under its path.
   A change that is not under one column (the row's own type, closing the
   content model, a whole-frame rule) touches every column: None.
   `column_effects` says what it does to each (registry.usage.Effect): a removed
   column reaches downstream readers only through `SELECT *`.
2. `assess`: the candidate teams are the registered consumer teams of the
   contract's datasets (never the owner team). A team must acknowledge when the
   columns its jobs read (observed in lineage, registry.usage) or the columns it
   declared include a touched column, or when its usage is unknown (no
   evidence, or a job that reads everything). Only a team whose usage provably
   excludes every touched column is "not affected": told, not asked. A change of
   values that keeps the type (NULLs, an enum narrowed, precision lost) asks only
   the teams that would notice it: a job that only carries the values on to its
   outputs, or a check whose assertions the change cannot fail, is told, with the
   path (registry.hooks.column_passers); the change goes on to what it feeds.
3. Jobs reading the datasets whose team is not a registered consumer are
   `unregistered readers`, listed with what they read.

Missing an affected team is the one unacceptable error, so every doubt resolves
towards asking: unknown usage asks, column names compare case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from packaging.version import Version
from registry_client.compat import version_bump_problem
from registry_client.compat.budget import BUDGET_KINDS

from change_requests.models import ChangeRequest, UnfinishedRequestExists
from change_requests.verify import KIND_LABELS, judge_teams
from contracts_app.models import Contract
from contracts_app.publishing import (
    BREAKING,
    check_in_required_modes,
    gate_document,
    gate_errors,
    published_below,
)
from registry.models import Consumer, Dataset, Team
from registry.usage import (
    Effect,
    Flow,
    JobReading,
    absorbing_readers,
    passing_readers,
    readings_of,
    value_flow,
)

_PROPERTY = re.compile(r"^/properties/([^/]+)")
_COLUMN = re.compile(r"/properties/[^/]+")
_API_SECTION = re.compile(r"^/properties/(?:request|response|callbacks/properties/[^/]+)(?=/|$)")
_QUOTED = re.compile(r"^'((?:[^']|'(?!\s))+)'")


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def _within_row(path: str, schema_type: str) -> str:
    """The path inside the row (an api contract's request/response section left out)."""
    return _API_SECTION.sub("", path, count=1) if schema_type == "api" else path


def column_of(path: str, kind: str, reason: str, schema_type: str) -> str | None:
    """The column a change at `path` is about, or None when it is about the whole row."""
    path = _within_row(path, schema_type)
    match = _PROPERTY.match(path)
    if match:
        return _unescape(match.group(1))
    if path == "/required" and kind in ("required_added", "required_removed"):
        quoted = _QUOTED.match(reason or "")  # the checker names the property first: "'x' is now required"
        if quoted:
            return quoted.group(1)
    return None


def touched_columns(report: dict, schema_type: str) -> list[str] | None:
    """The columns the report's breaking changes touch, sorted; None: every column."""
    effects = column_effects(report, schema_type)
    return None if effects is None else sorted(effects)


Effects = dict[str, set[str]]  # touched column -> what the change does to it (registry.usage.Effect)


def column_effects(report: dict, schema_type: str) -> Effects | None:
    """What the report's breaking changes do to each touched column; None: every column, anything."""
    effects: Effects = {}
    for change in report.get("changes", []):
        if not change.get("breaking"):
            continue
        path, kind = change.get("path", ""), change.get("kind", "")
        column = column_of(path, kind, change.get("reason", ""), schema_type)
        if column is None:
            return None
        # Only the column itself removed is a removal; a property removed inside it changes its values.
        removed = kind == "property_removed" and _COLUMN.fullmatch(_within_row(path, schema_type)) is not None
        effects.setdefault(column, set()).add(Effect.REMOVED if removed else Effect.of_change(kind))
    # A column no longer promised is gone for its readers, whatever else the report says
    # of it (that it is no longer required, say): the readers who name it are asked.
    return {column: {Effect.REMOVED} if Effect.REMOVED in found else found for column, found in effects.items()}


@dataclass
class Hit:
    """One job of a team reading one of the contract's datasets, and what of it touches the change."""

    job: str
    dataset: str
    reads: list[str] | None  # the columns it reads; None: all or unknown
    touched: list[str]  # the touched columns among them (all touched ones when it reads everything)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    decided_by: str = ""  # the rule that made the job its team's (registry.jobs.DecidedBy)
    decided_by_detail: str = ""
    # Touched columns it reads whose change its SQL provably absorbs: [{"column", "by"}]
    absorbed: list[dict[str, str]] = field(default_factory=list)
    # How the change reached this dataset's touched columns: [{"column", "path": [step…]}]
    reached_by: list[dict[str, Any]] = field(default_factory=list)
    # Touched columns whose changed values it only carries on to its outputs, nothing of
    # it noticing them, or checks them in ways the change cannot fail
    # (registry.hooks.column_passers): [{"column", "how"}]
    passed: list[dict[str, str]] = field(default_factory=list)


@dataclass
class TeamImpact:
    team_id: int
    team: str  # slug
    affected: bool
    why: str
    declared: list[str] | None = None
    hits: list[Hit] = field(default_factory=list)
    # The datasets it consumes where no job of it was seen and it declared nothing: what it
    # does there is unknown, so no proof from its seen jobs covers it.
    unseen: list[str] = field(default_factory=list)
    # Its verdict's kind and proof (change_requests.verify): proven broken, assumed affected, verified safe, not affected.
    verdict: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"team": self.team, "affected": self.affected, "why": self.why, "declared": self.declared,
                "jobs": [asdict(hit) for hit in self.hits], "verdict": self.verdict or self.default_verdict()}

    def default_verdict(self) -> dict[str, Any]:
        if not self.affected:
            return {"kind": "not_affected", "reason": self.why}
        return {"kind": "assumed_affected", "reason": self.why, "path": [f"{h.dataset} → {h.job}" for h in self.hits]}


@dataclass
class Impact:
    touched: list[str] | None
    teams: list[TeamImpact]
    unregistered_readers: list[dict[str, Any]]
    dataset_granular: list[str]  # what asking every consumer team of every bound dataset would ask
    verification: dict[str, Any] | None = None  # what `verify` did (change_requests.verify), when asked
    # Every column the change reached (the changed ones included) and what reached it: a
    # step job re-typed on the way must read no other retyped column (change_requests.verify).
    reached: dict[int, dict[str, set[str]]] = field(default_factory=dict)

    @property
    def affected(self) -> list[TeamImpact]:
        return [t for t in self.teams if t.affected]

    @property
    def not_affected(self) -> list[TeamImpact]:
        return [t for t in self.teams if not t.affected]

    def to_dict(self) -> dict[str, Any]:
        return {
            "touched_columns": self.touched,
            "affected": [t.to_dict() for t in self.affected],
            "not_affected": [t.to_dict() for t in self.not_affected],
            "unregistered_readers": self.unregistered_readers,
            "dataset_granular": self.dataset_granular,
            **({"verification": self.verification} if self.verification is not None else {}),
        }


def _fold(columns: Iterable[str]) -> dict[str, str]:
    return {c.casefold(): c for c in columns}


def _evidence(reading: JobReading) -> list[dict[str, Any]]:
    return [{"source": e.source, "run_id": e.run_uuid,
             "event_time": e.event_time.isoformat() if e.event_time else None,
             "last_seen_at": e.last_seen_at.isoformat()} for e in reading.evidence]


def _hit(reading: JobReading, dataset_label: str, touched: list[str] | None) -> Hit:
    decided = (reading.rule, reading.rule_detail)
    if reading.columns is None:
        hits = list(touched) if touched is not None else []
        return Hit(reading.job, dataset_label, None, hits, _evidence(reading), *decided)
    reads = sorted(reading.columns)
    if touched is None:
        return Hit(reading.job, dataset_label, reads, reads, _evidence(reading), *decided)
    folded = _fold(reads)
    return Hit(reading.job, dataset_label, reads, [c for c in touched if c.casefold() in folded], _evidence(reading),
               *decided)


def _absorb(hit: Hit, reading: JobReading, absorbing: dict[tuple[int, str, str, str], str]) -> None:
    """Leave out of the hit's touched columns those whose change the job's SQL absorbs."""
    if not absorbing or hit.reads is None:
        return
    kept = []
    for column in hit.touched:
        by = absorbing.get((reading.dataset_id, column, reading.job_namespace, reading.job_name))
        if by is None:
            kept.append(column)
        else:
            hit.absorbed.append({"column": column, "by": by})
    hit.touched = kept


def _pass(hit: Hit, reading: JobReading, passing: dict[tuple[int, str, str, str], str]) -> None:
    """Move out of the hit's touched columns those whose changed values the job only carries on."""
    if not passing or hit.reads is None:
        return
    kept = []
    for column in hit.touched:
        into = passing.get((reading.dataset_id, column, reading.job_namespace, reading.job_name))
        if into is None:
            kept.append(column)
        else:
            hit.passed.append({"column": column, "how": into})
    hit.touched = kept


def _judge_dataset(label: str, hits: list[Hit], declared: list[str] | None,
                   touched: list[str] | None) -> tuple[bool, str]:
    """(affected, why) for one consumed dataset, `touched` being the columns touched there."""
    if touched is None:
        return True, "the change touches every column"
    unknown = [hit.job for hit in hits if hit.reads is None]
    if unknown:
        return True, f"its usage of {label} is unknown: {', '.join(unknown)} reads all columns or nothing says which"
    observed = sorted({c for hit in hits for c in hit.touched})
    declared_hits = [c for c in touched if c.casefold() in _fold(declared or [])]
    if observed or declared_hits:
        parts = [f"its jobs read {', '.join(observed)}"] if observed else []
        if declared_hits:
            parts.append(f"it declared {', '.join(declared_hits)}")
        return True, " and ".join(parts) + f" of {label}" + _reached(hits, observed)
    if not hits and declared is None:
        return True, f"its usage of {label} is unknown: no job of it was seen reading it and it declared no columns"
    absorbed = [f"{hit.job} reads {a['column']} only through `{a['by']}`" for hit in hits for a in hit.absorbed]
    if absorbed:
        return False, f"{_STOPS} on {label}: " + "; ".join(absorbed)
    passed = [f"{hit.job} {p['how']}" for hit in hits for p in hit.passed]
    if passed:
        columns = sorted({p["column"] for hit in hits for p in hit.passed})
        carrying = any(p["how"].startswith("carries") for hit in hits for p in hit.passed)
        return False, (f"{_PASSES} on {label}: " + "; ".join(passed) + _reached(hits, columns)
                       + ("; no check or expression of its own depends on them" if carrying else ""))
    return False, f"nothing it reads or declared of {label} is touched"


_STOPS = "the change stops in its SQL"
_PASSES = "the changed values reach it but nothing of it would notice them"


def _reached(hits: list[Hit], columns: list[str]) -> str:
    """How the change reached the columns (the first path of each), in words."""
    paths = {r["column"]: r["path"] for hit in hits for r in hit.reached_by if r["column"] in columns and r["path"]}
    if not paths:
        return ""
    said = []
    for column, path in sorted(paths.items()):
        said.append(f"{column} by " + " then ".join(
            f"{s['kind'].lower()} {s['subtype'] or 'use'} in {s['job']}" + (f" (`{s['fragment']}`)" if s["fragment"] else "")
            for s in path))
    return " (reached: " + "; ".join(said) + ")"


# team -> dataset label -> (its jobs' hits, the columns it declared there, the columns touched there)
Consumed = dict[str, tuple[list[Hit], list[str] | None, list[str] | None]]


def _judge(team: Team, consumed: Consumed, touched: list[str] | None) -> TeamImpact:
    """A team is affected when any dataset it consumes is."""
    verdicts = [_judge_dataset(label, hits, declared, there) for label, (hits, declared, there) in consumed.items()]
    affected = [why for hit, why in verdicts if hit]
    declared_all = None
    if any(declared is not None for _, declared, _ in consumed.values()):
        declared_all = sorted({c for _, declared, _ in consumed.values() for c in (declared or [])})
    hits = [hit for hits, _, _ in consumed.values() for hit in hits]
    if affected:
        unseen = [label for label, (hits_there, declared, _) in consumed.items() if not hits_there and declared is None]
        return TeamImpact(team.pk, team.slug, True, "; ".join(affected), declared_all, hits, unseen)
    stopped = [why for _, why in verdicts if why.startswith((_STOPS, _PASSES))]
    if stopped:
        return TeamImpact(team.pk, team.slug, False, "; ".join(stopped), declared_all, hits)
    return TeamImpact(team.pk, team.slug, False,
                      f"none of the touched columns ({', '.join(touched or [])}) is read or declared by it",
                      declared_all, hits)


def assess(contract: Contract, touched: list[str] | None, *, effects: Effects | None = None,
           now: datetime | None = None, owner_team_id: int | None = None, proposed: dict | None = None,
           base: dict | None = None, verify: bool = False, settle: bool = True) -> Impact:
    """Judge every consumer team of the contract's datasets (a fixed number of queries).

    With the `proposed` document (and the `base` one it changes), each team also gets its
    verdict's kind, retypes are type-checked per expression, and with `verify` the affected
    teams' SQL is EXPLAINed on a scratch schema (change_requests.verify; `impact.verification`)."""
    datasets = list(Dataset.objects.filter(contract_binding__contract=contract))
    impact = assess_datasets(datasets, touched, effects=effects, now=now,
                             owner_team_id=owner_team_id if owner_team_id is not None else contract.owner_team_id)
    if proposed is not None and touched != []:
        impact.verification = judge_teams(impact, datasets, base, proposed, effects=effects, verify=verify,
                                          settle=settle)
    return impact


def preview_change(dataset: Dataset, columns: list[str] | None, *, effect: str | None = None,
                   now: datetime | None = None) -> dict[str, Any]:
    """Who a change to `columns` of one dataset would wait for (None: every column), contract or not.
    `effect`: what it does to them (registry.usage.Effect); unknown by default."""
    effects = {c: {effect} for c in columns} if effect and columns else None
    return assess_datasets([dataset], columns, effects=effects, now=now, owner_team_id=dataset.owner_team_id).to_dict()


def _label(dataset: Dataset) -> str:
    return f"{dataset.namespace}/{dataset.name}"


def assess_datasets(datasets_: Iterable[Dataset], touched: list[str] | None, *, effects: Effects | None = None,
                    now: datetime | None = None, owner_team_id: int | None = None) -> Impact:
    """Judge the consumer teams of `datasets_`, and of the datasets their touched columns feed.

    1. The datasets' own consumer teams, by what their jobs read and what they declared.
    2. Downstream: the columns the touched ones feed, directly or through other jobs'
       outputs (registry.usage.downstream_columns, lineage's field edges: a column
       retyped or filled with nulls upstream reaches whoever reads what it feeds; a
       column dropped, only the readers of a `SELECT *` passing it on), judge those
       datasets' consumer teams the same way. `effects`: what the change does to
       each touched column (unknown: anything).
    A fixed number of queries whatever the number of teams and datasets."""
    datasets = {d.pk: d for d in datasets_}
    touched_at: dict[int, list[str] | None] = {pk: touched for pk in datasets}
    labels = {pk: _label(d) for pk, d in datasets.items()}
    flow, effects_at = Flow(), {}
    # Downstream datasets whose changed columns only changed values, and their owner team:
    # a team's own check of its own model is how it notices values its models passed on.
    values_only_owner: dict[int, int | None] = {}
    if datasets and touched != []:
        sources = {pk: ({c: set((effects or {}).get(c) or Effect.ALL) for c in touched} if touched is not None else None)
                   for pk in datasets}
        flow = value_flow(sources, now=now)
        downstream = {pk: cols for pk, cols in flow.reached.items() if pk not in datasets}
        for dataset in Dataset.objects.filter(pk__in=downstream):
            labels[dataset.pk] = f"{_label(dataset)} (fed by the changed columns)"
            touched_at[dataset.pk] = sorted(downstream[dataset.pk])
            if all(effects <= Effect.VALUE_CHANGES for effects in downstream[dataset.pk].values()):
                values_only_owner[dataset.pk] = dataset.owner_team_id
        effects_at = {**{pk: cols for pk, cols in sources.items() if cols is not None}, **downstream}
    # Jobs whose SQL provably absorbs the change of a column they read (lineage.sql_usage),
    # and jobs that only carry changed values on to their outputs, nothing of theirs noticing.
    absorbing = absorbing_readers(effects_at, now) if effects_at else {}
    passing = passing_readers(effects_at, now) if effects_at else {}
    consumers = list(Consumer.objects.filter(dataset_id__in=touched_at).select_related("team").order_by("team__name"))
    readings = readings_of(touched_at, now=now) if touched_at else []
    teams: dict[int, Team] = {}
    consumed: dict[int, Consumed] = {}
    for consumer in consumers:
        if consumer.team_id == owner_team_id:
            continue
        teams[consumer.team_id] = consumer.team
        consumed.setdefault(consumer.team_id, {})[labels[consumer.dataset_id]] = (
            [], consumer.declared_columns, touched_at[consumer.dataset_id])
    unregistered: list[dict[str, Any]] = []
    reading_teams = Team.objects.in_bulk({r.team_id for r in readings if r.team_id})
    slugs = {pk: team.slug for pk, team in reading_teams.items()}
    for reading in readings:
        there = touched_at[reading.dataset_id]
        hit = _hit(reading, labels[reading.dataset_id], there)
        _absorb(hit, reading, absorbing)
        _pass(hit, reading, passing)
        hit.reached_by = [{"column": c, "path": [step.to_dict() for step in flow.path_to(reading.dataset_id, c)]}
                          for c in [*hit.touched, *(p["column"] for p in hit.passed)]
                          if (reading.dataset_id, c) in flow.steps]
        if (hit.touched and reading.team_id is not None and reading.team_id != owner_team_id
                and values_only_owner.get(reading.dataset_id) == reading.team_id):
            # The owner's own job (its check, say) reads the changed values of its model:
            # its team notices them, though it is no consumer of its own dataset.
            teams[reading.team_id] = reading_teams[reading.team_id]
            consumed.setdefault(reading.team_id, {}).setdefault(hit.dataset, ([], None, there))
        mine = consumed.get(reading.team_id, {}).get(hit.dataset)
        if mine is not None:
            mine[0].append(hit)
        elif (reading.team_id is None or reading.team_id != owner_team_id) and (
                reading.dataset_id in datasets or hit.touched or hit.reads is None):
            unregistered.append({"job": reading.job, "team": slugs.get(reading.team_id), "dataset": hit.dataset,
                                 "dataset_id": reading.dataset_id, "reads": hit.reads, "touched": hit.touched,
                                 "decided_by": hit.decided_by, "decided_by_detail": hit.decided_by_detail})
    judged = [_judge(team, consumed[team_id], touched) for team_id, team in teams.items()]
    direct = {c.team.slug for c in consumers if c.dataset_id in datasets and c.team_id != owner_team_id}
    return Impact(touched=touched, teams=judged, unregistered_readers=unregistered, dataset_granular=sorted(direct),
                  reached=effects_at)


# --- the preview: what proposing `document` would do, opening nothing -----------------

class PreviewError(ValueError):
    """The document cannot be previewed; the message says what is wrong and where."""

    def __init__(self, message: str, errors: list[str] | None = None):
        super().__init__(message)
        self.errors = errors or []


def suggested_version(latest: str | None, bump: str) -> str | None:
    """The smallest version number the advice allows after `latest`."""
    if latest is None:
        return None
    v = Version(latest)
    major, minor, micro = (list(v.release) + [0, 0, 0])[:3]
    if bump == "major":
        return f"{major + 1}.0"
    if bump == "minor":
        return f"{major}.{minor + 1}"
    if bump == "patch":
        return f"{major}.{minor}.{micro + 1}"
    return latest


def preview(document: Any, *, by=None, now: datetime | None = None, verify: bool = False) -> dict[str, Any]:
    """The checker's verdicts, the suggested version, who the change would wait for, and
    what submitting it as `by` (None: an operator's command) would do.

    1. The publish gates must pass (PreviewError lists what they refuse).
    2. `outcome` is contracts_app.publishing.gate_document's decision, the one publishing
       acts on: published, unchanged, refused (with `outcome_message`) or breaking.
    3. The checker compares the document with the published versions below it, in the
       modes the publish gate uses.
    4. The breaking changes' columns route the consumer teams (`assess`), each with its
       verdict's kind; `verify`: with a proof per team where one can be had."""
    errors = gate_errors(document)
    if errors:
        raise PreviewError("the document fails the publish gates", errors)
    schema = document["schema"]
    name, version = str(schema["name"]), str(schema["version"])
    decision = gate_document(document, by=by)
    answer: dict[str, Any] = {"contract": name, "proposed_version": version, **_outcome(decision, document)}
    contract = Contract.objects.filter(name=name).first()
    if contract is None:
        return {**answer, "compatible": True, "mode": None, "suggested_version": version, "changes": [],
                "verdict": "a new contract: the first version is always accepted",
                **Impact(touched=[], teams=[], unregistered_readers=[], dataset_granular=[]).to_dict()}
    below = published_below(contract, version)
    report = decision.report or check_in_required_modes(contract, [v.document for v in below], document)
    latest = below[-1].version if below else None
    effects = column_effects(report.to_dict(), contract.schema_type) if not report.compatible else {}
    touched = None if effects is None else sorted(effects)
    effects = effects or None
    impact = assess(contract, touched, effects=effects, now=now, proposed=document,
                    base=below[-1].document if below else None, verify=verify)
    found = impact.to_dict()
    return {**answer, "compatible": report.compatible, "mode": report.mode, "verdict": report.verdict,
            "latest_published": latest, "suggested_bump": report.suggested_bump,
            "suggested_version": suggested_version(latest, report.suggested_bump),
            "version_problem": version_bump_problem(latest, version, report) if latest else None,
            "changes": [c.to_dict() for c in report.changes], **found,
            "lanes": lanes_after(contract, version, report.compatible, found)}


def lanes_after(contract: Contract, version: str, compatible: bool, found: dict[str, Any]) -> dict[str, Any] | None:
    """Which teams would stay on which lane if `version` opened a new major lane (docs/lanes.md):
    the old lane stays served; the teams the change breaks stay on it until they approve or
    migrate by their date; the others can follow the new lane at once. None: no new lane."""
    major = int(version.split(".", 1)[0])
    majors = {int(v.split(".", 1)[0]) for v in contract.versions.values_list("version", flat=True)}
    if compatible or not majors or major <= max(majors):
        return None
    old = f"{max(majors)}.x"
    return {"new_lane": f"{major}.x", "old_lane": old,
            "stay": [{"team": t["team"], "lane": old, "why": t["why"]} for t in found["affected"]],
            "move": [{"team": t["team"], "lane": f"{major}.x", "why": t["why"]} for t in found["not_affected"]]}


def verdict_markdown(team: dict[str, Any]) -> str:
    """A team's verdict kind, for the markdown block: `proven broken` with the error its job would get,
    `assumed affected` with the path and why nothing proves it, `verified safe` / `not affected` with why."""
    verdict = team.get("verdict") or {}
    kind = verdict.get("kind")
    if kind == "proven_broken":
        return (f"  \n  **{KIND_LABELS[kind]}** ({verdict.get('by')}): `{verdict.get('job')}` would fail with "
                f"`{str(verdict.get('error', '')).replace('`', chr(39))}`")
    if kind == "assumed_affected":
        path = "; ".join(verdict.get("path") or [])
        return f"  \n  _{KIND_LABELS[kind]}_" + (f" via {path}" if path else "") + f": {verdict.get('reason')}"
    if kind == "verified_safe" or (kind == "not_affected" and verdict.get("by")):
        return f"  \n  _{KIND_LABELS[kind]}_ ({verdict.get('by')})"
    return ""


def _outcome(decision, document: dict) -> dict[str, Any]:
    """What submit would do, in the preview's words: the gate's status, a sentence, and for a
    breaking version whether a change request would open (one already waiting for another
    document of the contract stops it, as propose_breaking_version does)."""
    out = {"outcome": decision.status, "outcome_message": decision.message, "outcome_errors": list(decision.errors),
           "waits_in": None}
    if decision.status == BREAKING:
        waiting = ChangeRequest.objects.unfinished().filter(contract__name=decision.name).select_related("contract").first()
        if waiting is not None:  # what propose_breaking_version answers submit, in its words
            out["waits_in"] = waiting.pk
            out["outcome_message"] = (
                f"It already waits in change request #{waiting.pk} ({waiting.state})."
                if waiting.proposed_document == document else str(UnfinishedRequestExists(waiting).messages[0]))
        else:
            out["outcome_message"] = decision.message.replace("it was not published.", "submitting opens a change request.")
    return out


def as_markdown(answer: dict[str, Any]) -> str:
    """A block fit for a pull-request comment."""
    lines = [f"### Impact of {answer['contract']} {answer['proposed_version']}", ""]
    if answer["compatible"]:
        lines.append(f"**Compatible** ({answer.get('mode') or 'first version'}): publishing it opens no change request.")
    else:
        lines.append(f"**Breaking** under {answer['mode']}: it would open a change request.")
    if answer.get("suggested_version"):
        lines.append(f"Suggested version: **{answer['suggested_version']}**"
                     + (f" (latest published: {answer['latest_published']})" if answer.get("latest_published") else ""))
    if answer.get("version_problem"):
        lines.append(f"> :warning: {answer['version_problem']}")
    breaking = [c for c in answer["changes"] if c.get("breaking")]
    if breaking:
        frames = all(c.get("summary") for c in breaking)  # a dataframe contract: said of its columns
        lines += ["", "| column | change | breaks | proof |" if frames else "| change | breaks | proof | why |",
                  "|---|---|---|---|"]
        for c in breaking:
            directions = " + ".join(d for d, on in (("backward", c["breaks_backward"]), ("forward", c["breaks_forward"])) if on)
            proof = "decided by a budget" if c.get("kind") in BUDGET_KINDS else c.get("proof") or ""
            if frames:
                column = f"`{c['column']}`" if c.get("column") else "the frame"
                lines.append(f"| {column} | {c['summary'].replace('|', '∣')} | {directions} | {proof} |")
            else:
                lines.append(f"| `{c['path']}` | {directions} | {proof} | {c['reason'].replace('|', '∣')} |")
        undecided = sum(c.get("kind") in BUDGET_KINDS for c in breaking)
        if undecided:
            lines += ["", f"{undecided} of these {'was' if undecided == 1 else 'were'} decided by the checker's budget, "
                          "not by the schemas: counted as breaking both ways."]
    touched = answer.get("touched_columns")
    lines += ["", "Touched: " + ("every column" if touched is None else ", ".join(f"`{c}`" for c in touched) or "nothing")]
    if answer["affected"]:
        lines += ["", "**Must acknowledge:**"]
        lines += [f"- **{t['team']}**: {t['why']}" + verdict_markdown(t) for t in answer["affected"]]
    if answer["not_affected"]:
        lines += ["", "Told, not affected:"]
        lines += [f"- {t['team']}: {t['why']}" + verdict_markdown(t) for t in answer["not_affected"]]
    verification = answer.get("verification")
    if verification:
        lines += ["", ("Verified: " + f"{verification['consumers']} consumer job(s) EXPLAINed on a scratch schema "
                       f"holding the proposed shape ({verification['seconds']} s; dropped afterwards)")
                  if verification.get("available") else f"Not verified: {verification['reason']}."]
    lanes = answer.get("lanes")
    if lanes:
        lines += ["", f"**Lanes:** {lanes['new_lane']} opens beside {lanes['old_lane']}, which stays served."]
        lines += [f"- {t['team']} stays on {t['lane']} until it approves or migrates" for t in lanes["stay"]]
        lines += [f"- {t['team']} can move to {t['lane']} at once" for t in lanes["move"]]
    if answer["unregistered_readers"]:
        lines += ["", "Unregistered readers (not asked; ask their teams to register):"]
        lines += [f"- `{r['job']}` ({r['team'] or 'team unknown'}) reads "
                  f"{', '.join(r['reads']) if r['reads'] else 'all columns'} of {r['dataset']}"
                  for r in answer["unregistered_readers"]]
    return "\n".join(lines) + "\n"
