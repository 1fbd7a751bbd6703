"""A verdict per team, with its kind, and a proof where one can be had.

Routing (change_requests.impact) says which teams a change touches; this module says
how sure that is, team by team:

- `proven_broken`: an expression of one of its jobs fails on the proposed shape: the
  type check found it (`by: "type check"`) or PostgreSQL said so (`by: "EXPLAIN"`),
  with the error that team's job would get;
- `assumed_affected`: it reads what the change touches and nothing proves either
  way: the path (dataset, job, columns) and the reason no proof was possible;
- `verified_safe`: a structural change (a column dropped or renamed) and every job
  of it planned cleanly on the proposed shape, selecting no `*`;
- `not_affected`: told, not asked, with the reason.

1. `judge_teams` (always, cheap): every team gets its kind. For a retype (a column's
   dtype changed, nothing else of it), each job's compiled SQL (registry.hooks.job_queries,
   answered by lineage) is re-typed with the proposed types (change_requests.typecheck):
   a team whose every job still type-checks is not affected (a job passing the new type
   on to its result leaves that to the result's readers, a copy's readers are re-typed
   with the copy's new type: `retype_verdict`).
2. `verify=True` (the preview's `--verify`, the review page's Verify button) adds
   `verify_consumers`: a scratch PostgreSQL schema in the registry's own database
   (never the warehouse) holding, as empty tables, the current shape of every dataset
   the affected jobs read and the proposed shape of the changed one; each job's SQL,
   transpiled to PostgreSQL by sqlglot (what it cannot transpile stays assumed), is
   EXPLAINed on the current shape, then on the proposed one, each with a
   `statement_timeout` (CHANGE_REQUEST_VERIFY_TIMEOUT). The schema is dropped at the
   end. It runs on a connection of its own, outside any request transaction: one
   short transaction that holds locks only on the tables it created.
   On SQLite it is unavailable, and says so.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections

from registry.hooks import JobQuery, observed_schemas_of, queries_of
from registry.lazymodule import LazyModule
from registry.usage import Effect

# sqlglot and psycopg load when a change is verified, not with every process that imports the impact preview.
sql = LazyModule("psycopg.sql")
errors = LazyModule("sqlglot.errors")
typecheck = LazyModule("change_requests.typecheck")

PROVEN_BROKEN = "proven_broken"
ASSUMED_AFFECTED = "assumed_affected"
VERIFIED_SAFE = "verified_safe"
NOT_AFFECTED = "not_affected"
KINDS = (PROVEN_BROKEN, ASSUMED_AFFECTED, VERIFIED_SAFE, NOT_AFFECTED)
KIND_LABELS = {PROVEN_BROKEN: "proven broken", ASSUMED_AFFECTED: "assumed affected", VERIFIED_SAFE: "verified safe",
               NOT_AFFECTED: "not affected"}
NOT_VERIFIED = "not verified: run the preview with --verify, or Verify on the review page"


@dataclass
class Shape:
    """One changed dataset: its current columns ({name: type}, from its observed schema) and
    the proposed ones; `retyped`: {column: proposed type} of the columns whose type alone changes."""

    dataset_id: int
    name: str
    current: dict[str, str] | None
    proposed: dict[str, str] | None
    retyped: dict[str, str] = field(default_factory=dict)
    why_unknown: str = ""


def _columns(document: dict | None) -> dict[str, dict]:
    return {c["name"]: c for c in (document or {}).get("columns") or [] if isinstance(c, dict) and c.get("name")}


def _sql_of(dtype: Any) -> str:
    return typecheck.DTYPE_SQL.get(str(dtype), "")


def shapes_of(datasets, base: dict | None, proposed: dict) -> dict[int, Shape]:
    """What each changed dataset looks like now (its observed schema) and as proposed: the
    contract's column changes applied to it (dataframe contracts only). One query."""
    observed = observed_schemas_of([d.pk for d in datasets])
    shapes = {}
    dataframe = (proposed.get("schema") or {}).get("schema_type") == "dataframe"
    before, after = _columns(base), _columns(proposed)
    for dataset in datasets:
        seen = observed.get(dataset.pk)
        current = {c["name"]: c.get("type") or "" for c in seen["columns"]} if seen else None
        if not dataframe:
            shapes[dataset.pk] = Shape(dataset.pk, dataset.name, current, None,
                                       why_unknown="only a dataframe contract gives the dataset a table's shape")
            continue
        if current is None:
            current = {name: _sql_of(c.get("dtype")) for name, c in before.items()} if before else None
        if current is None:
            shapes[dataset.pk] = Shape(dataset.pk, dataset.name, None, None,
                                       why_unknown="no schema of it was seen and no version of it is published")
            continue
        folded = {name.casefold(): name for name in current}
        proposed_columns = dict(current)
        retyped = {}
        for name in before.keys() - after.keys():
            proposed_columns.pop(folded.get(name.casefold(), name), None)
        for name, column in after.items():
            old = before.get(name)
            if old is None:
                proposed_columns[name] = _sql_of(column.get("dtype"))
            elif old.get("dtype") != column.get("dtype"):
                proposed_columns[folded.get(name.casefold(), name)] = _sql_of(column.get("dtype"))
                same_otherwise = {k: v for k, v in old.items() if k != "dtype"} == \
                    {k: v for k, v in column.items() if k != "dtype"}
                if same_otherwise and _sql_of(column.get("dtype")):
                    retyped[folded.get(name.casefold(), name)] = _sql_of(column.get("dtype"))
        shapes[dataset.pk] = Shape(dataset.pk, dataset.name, current, proposed_columns, retyped)
    return shapes


def _path(team) -> list[str]:
    return [f"{hit.dataset} → {hit.job}"
            + (f" reads {', '.join(hit.touched)}" if hit.touched else " reads all or unknown columns")
            for hit in team.hits]


def _tables(query: JobQuery) -> dict[str, dict[str, str]]:
    return {i.name: dict(i.columns) for i in query.inputs if i.columns is not None}


def judge_teams(impact, datasets, base: dict | None, proposed: dict, *, effects: dict | None = None,
                verify: bool = False, settle: bool = True) -> dict[str, Any] | None:
    """Give every team of `impact` its verdict (`team.verdict`), type-checking retypes; with
    `verify`, also EXPLAIN the affected teams' jobs on a scratch schema (the answer's
    `verification` is returned). `settle`: a team proven unaffected moves to "not affected"
    (a preview); on an open request its answer stays required and only the verdict shows it."""
    datasets = list(datasets)
    shapes = shapes_of(datasets, base, proposed)
    by_label = {f"{d.namespace}/{d.name}": shapes[d.pk] for d in datasets}
    affected = [t for t in impact.teams if t.affected]
    # The teams' jobs, and the jobs on the way a retype took to reach them (re-typed step by step).
    steps = {step["job"] for team in affected for hit in team.hits for entry in hit.reached_by
             for step in entry["path"]}
    queries = queries_of({*(hit.job for team in affected for hit in team.hits), *steps}) if affected else {}
    carry = Carry(queries, getattr(impact, "reached", {}) or {})
    # Teams with jobs reading what the change reached that are no hit of theirs (their own
    # models, not consumed): a job of theirs passing a new type on may reach those unjudged.
    unseen = {r.get("team") for r in impact.unregistered_readers if r.get("touched") or r.get("reads") is None}
    for team in impact.teams:
        if not team.affected:
            team.verdict = {"kind": NOT_AFFECTED, "reason": team.why}
            continue
        team.verdict = {"kind": ASSUMED_AFFECTED, "path": _path(team), "reason": NOT_VERIFIED}
        declared = _declared_touched(team, impact.touched)
        if declared:
            # Its own word covers jobs nobody saw: their SQL proves nothing either way.
            team.verdict["reason"] = f"it declared it reads {', '.join(declared)}, beyond any job whose SQL was seen"
            continue
        retype_verdict(team, by_label, queries, settle=settle, unseen_readers=unseen, carry=carry)
    if not verify:
        return None
    return verify_teams(impact, by_label, queries, effects=effects, settle=settle)


def _declared_touched(team, touched: list[str] | None) -> list[str]:
    if not team.declared:
        return []
    if touched is None:
        return sorted(team.declared)
    folded = {c.casefold() for c in touched}
    return sorted(c for c in team.declared if c.casefold() in folded)


@dataclass
class Carry:
    """What re-types a computing step on a retype's way: the step jobs' SQL, and every column
    the change reached with what reached it."""

    queries: dict[str, JobQuery] = field(default_factory=dict)
    reached: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    memo: dict[tuple, str | None] = field(default_factory=dict)

    def step_type(self, step: dict, input_type: str, retyped_at: dict[int, dict[str, str]]) -> str | None:
        """The type of a DIRECT step's result column when its input column takes `input_type`,
        from the step job's own type check ("": the result keeps its type, `SUM` of an int32 or
        an int64); None when it cannot be told: its SQL is unknown, it reads another retyped
        column (which would be typed with its old type), or an expression of it fails or is
        undecided."""
        (source_id, source_column), (_, column) = step["from"], step["to"]
        key = (step["job"], source_id, source_column, column, input_type)
        if key not in self.memo:
            self.memo[key] = self._step_type(step, input_type, retyped_at)
        return self.memo[key]

    def _step_type(self, step: dict, input_type: str, retyped_at: dict[int, dict[str, str]]) -> str | None:
        query = self.queries.get(step["job"])
        (source_id, source_column), (_, column) = step["from"], step["to"]
        if query is None:
            return None
        for table in query.inputs:
            others = {c.casefold() for c, effects in self.reached.get(table.dataset_id, {}).items()
                      if Effect.RETYPED in effects} | {c.casefold() for c in retyped_at.get(table.dataset_id, {})}
            if others - ({source_column.casefold()} if table.dataset_id == source_id else set()):
                return None
        name = next((t.name for t in query.inputs if t.dataset_id == source_id), None)
        tables = _tables(query)
        if name is None or name not in tables:
            return None
        result = typecheck.check_retype(query.query, query.dialect, tables, name, {source_column: input_type})
        if result.ok is True:
            return ""
        if result.ok is False or not result.passes_on:
            return None  # it fails, or it was not decided
        return {c.casefold(): t for c, t in result.passes_on.items()}.get(column.casefold(), "")


def _carried(hit, retyped_at: dict[int, dict[str, str]],
             carry: Carry | None = None) -> tuple[int, dict[str, str]] | None:
    """The dataset a downstream hit reads and the proposed types of its touched columns, when
    each got there by DIRECT steps that carried nothing but the retype: a copy (IDENTITY)
    keeps its type; a computing step (`SUM(quantity) AS units`) gives the type its job's own
    type check says its result takes (`Carry.step_type`). None: some touched column got
    there otherwise."""
    paths = {entry["column"]: entry["path"] for entry in hit.reached_by}
    found, dataset_id = {}, None
    for column in hit.touched:
        path = paths.get(column)
        if not path or any(step["kind"] != "DIRECT" or step["effects"] != [Effect.RETYPED] for step in path):
            return None
        source_id, source_column = path[0]["from"]
        types = {c.casefold(): t for c, t in retyped_at.get(source_id, {}).items()}
        if source_column.casefold() not in types:
            return None
        there = (carry.reached.get(path[-1]["to"][0], {}) if carry is not None else {})
        if carry is not None and there.get(column, {Effect.RETYPED}) != {Effect.RETYPED}:
            return None  # something else reached it too (a join key's new matches, NULLs)
        new_type = types[source_column.casefold()]
        for step in path:
            if step["subtype"] != "IDENTITY":
                new_type = carry.step_type(step, new_type, retyped_at) if carry is not None else None
                if not new_type:
                    break  # unknown (None), or the type stops changing here ("")
        if new_type is None:
            return None
        if new_type:
            found[column] = new_type
        dataset_id = path[-1]["to"][0]
    return (dataset_id, found) if dataset_id is not None else None


def retype_verdict(team, by_label: dict[str, Shape], queries: dict[str, JobQuery], *, settle: bool,
                   unseen_readers: set[str] | frozenset[str] = frozenset(), carry: Carry | None = None) -> None:
    """A team touched only by retypes: each of its jobs' SQL re-typed with the proposed types.

    A job reading a dataset the change reached through copies of the retyped column is
    re-typed with the copy's new type; a job whose every use type-checks and that passes
    the new type on to its result is not broken by it: whoever reads that result is judged
    where the change reaches them (not so when its team has readers the change reached
    that are no hit of it: those would go unjudged). One failing expression proves the team
    broken, whatever its other jobs leave undecided."""
    # What keeps the team assumed unless a job of it is proven broken ("" when nothing more is said).
    doubts: list[str] = []
    if team.unseen:
        doubts.append("")  # it consumes a dataset where none of its jobs was seen: nothing proves what it does there
    results = []
    retyped_at = {shape.dataset_id: shape.retyped for shape in by_label.values() if shape.retyped}
    for hit in team.hits:
        if not hit.touched:
            continue  # its columns there are known and none is touched: no use of it changes type
        shape = by_label.get(hit.dataset)
        if shape is None:
            carried = _carried(hit, retyped_at, carry)
            if carried is None:
                doubts.append("")  # fed by the change otherwise than by steps carrying the retype alone
                continue
            dataset_id, proposed = carried
        else:
            if not shape.retyped or any(c not in shape.retyped for c in hit.touched):
                doubts.append("")
                continue
            dataset_id, proposed = shape.dataset_id, {c: shape.retyped[c] for c in hit.touched}
        query = queries.get(hit.job)
        if query is None:
            doubts.append(f"{hit.job}: its SQL is not known, so its uses cannot be type-checked")
            continue
        tables = _tables(query)
        changed = next((i.name for i in query.inputs if i.dataset_id == dataset_id),
                       shape.name if shape is not None else None)
        if shape is not None:
            tables[changed] = dict(shape.current or {})
        if changed not in tables:
            doubts.append("")  # the copy's current types are not known
            continue
        results.append((hit, typecheck.check_retype(query.query, query.dialect, tables, changed, proposed)))
    broken = [(hit, r) for hit, r in results if r.ok is False]
    if broken:
        hit, result = broken[0]
        team.verdict = {"kind": PROVEN_BROKEN, "by": "type check", "job": hit.job, "error": result.problems[0],
                        "errors": [f"{h.job}: {p}" for h, r in broken for p in r.problems][:10],
                        "path": _path(team)}
        return
    if doubts or not results:
        said = [d for d in doubts if d]
        if said:
            team.verdict["reason"] = said[0]
        return
    undecided = [(hit, r) for hit, r in results
                 if r.ok is None and not (r.passes_on and team.team not in unseen_readers)]
    if undecided:
        team.verdict["reason"] = "; ".join(f"{hit.job}: {r.reason}" for hit, r in undecided[:3])
        return
    reason = "every use still type-checks with the proposed types: " + "; ".join(
        f"{hit.job}: {r.reason}" for hit, r in results[:3])
    team.verdict = {"kind": NOT_AFFECTED, "reason": reason, "by": "type check"}
    if settle:
        team.affected, team.why = False, reason


# --- verification on a scratch schema ------------------------------------------------------

def unavailable_reason(alias: str = "default") -> str | None:
    """Why verification cannot run here (None: it can)."""
    vendor = connections[alias].vendor
    if vendor != "postgresql":
        return (f"verification needs PostgreSQL; this registry runs on {connections[alias].display_name}, so every "
                "affected team stays assumed")
    return None


@dataclass
class Plan:
    """One job to EXPLAIN: its SQL bound to the scratch tables, on the current and proposed shapes."""

    job: str
    current: str
    proposed: str


def _bind(query: JobQuery, schema: str, keys: dict[str, str], changed_keys: dict[str, str]) -> Plan:
    """The job's SQL as PostgreSQL, its tables in `schema` (current shapes), then with each
    changed dataset's table swapped for its proposed one. NotChecked when it cannot be."""
    names = [i.name for i in query.inputs]
    texts = []
    for swap in (False, True):
        bound = typecheck.bind_tables(query.query, query.dialect, names, db=schema)
        for table in bound.query.find_all(typecheck.exp.Table):
            name = bound.datasets.get(table.name)
            if name is not None:
                key = (changed_keys if swap and name in changed_keys else keys)[name]
                table.set("this", typecheck.exp.to_identifier(key, quoted=True))
        try:
            texts.append(bound.query.sql(dialect="postgres", unsupported_level=errors.ErrorLevel.RAISE))
        except errors.SqlglotError as exc:
            raise typecheck.NotChecked(f"sqlglot cannot transpile it from {query.dialect or 'generic SQL'} to "
                                       f"PostgreSQL: {str(exc).splitlines()[0][:200]}") from None
    return Plan(query.job, *texts)


def _column_type(type_name: str, dialect: str | None) -> str | None:
    parsed = typecheck.sql_type(type_name, dialect)
    if parsed.this == typecheck.exp.DataType.Type.UNKNOWN:
        return None
    return parsed.sql(dialect="postgres")


def verify_teams(impact, by_label: dict[str, Shape], queries: dict[str, JobQuery], *, effects: dict | None,
                 settle: bool) -> dict[str, Any]:
    """EXPLAIN the still-undecided affected teams' jobs on a scratch schema (see the module docstring)."""
    reason = unavailable_reason()
    teams = [t for t in impact.teams if t.affected and t.verdict["kind"] == ASSUMED_AFFECTED
             and not _declared_touched(t, impact.touched)]
    if reason:
        for team in teams:
            team.verdict["reason"] = reason
        return {"available": False, "ran": False, "reason": reason, "consumers": 0}
    shapes = {s.dataset_id: s for s in by_label.values()}
    schema = f"verify_{secrets.token_hex(6)}"
    keys: dict[str, str] = {}       # dataset name -> its table (current shape)
    changed_keys: dict[str, str] = {}  # a changed dataset's name -> its proposed table
    columns: dict[str, list[tuple[str, str]]] = {}
    plans: dict[str, Plan] = {}
    doubts: dict[str, str] = {}
    # Only the jobs reading a changed dataset: the shapes of what the change feeds are not known.
    jobs = {hit.job for team in teams for hit in team.hits if hit.dataset in by_label}
    for label in sorted(jobs):
        query = queries.get(label)
        if query is None:
            doubts[label] = "its SQL is not known (no sql facet was seen)"
            continue
        problem = None
        for table in query.inputs:
            shape = shapes.get(table.dataset_id)
            if shape is not None and shape.proposed is None:
                problem = f"the proposed shape of {table.name} is not known: {shape.why_unknown}"
                break
            current = shape.current if shape is not None else (dict(table.columns) if table.columns else None)
            if not current:
                problem = f"the columns of {table.name} are not known (no schema facet was seen)"
                break
            typed = [(n, _column_type(t, query.dialect)) for n, t in current.items()]
            if any(t is None for _, t in typed):
                untyped = [n for n, t in typed if t is None]
                problem = f"the types of {table.name}'s columns {', '.join(untyped[:5])} are not known"
                break
            key = keys.setdefault(table.name, f"d{table.dataset_id}")
            columns[key] = typed
            if shape is not None:
                proposed = [(n, _column_type(t, "postgres")) for n, t in shape.proposed.items()]
                if any(t is None for _, t in proposed):
                    problem = f"the proposed types of {table.name} are not all known"
                    break
                changed_keys[table.name] = f"d{table.dataset_id}_proposed"
                columns[changed_keys[table.name]] = proposed
        if problem:
            doubts[label] = problem
            continue
        try:
            plans[label] = _bind(query, schema, keys, changed_keys)
        except typecheck.NotChecked as exc:
            doubts[label] = str(exc)
    started = time.perf_counter()
    outcomes = _explain_all(schema, columns, list(plans.values())) if plans else {}
    seconds = time.perf_counter() - started
    for team in teams:
        _verdict_from(team, by_label, queries, outcomes, doubts, effects, settle=settle)
    return {"available": True, "ran": bool(plans), "consumers": len(plans), "assumed": len(doubts),
            "seconds": round(seconds, 3), "schema": schema, "dropped": True,
            "timeout_ms": _timeout_ms()}


def _timeout_ms() -> int:
    return int(settings.CHANGE_REQUEST_VERIFY_TIMEOUT.total_seconds() * 1000)


@dataclass
class Outcome:
    current_error: str | None
    proposed_error: str | None


def _explain_all(schema: str, columns: dict[str, list[tuple[str, str]]], plans: list[Plan]) -> dict[str, Outcome]:
    """1. A connection of its own (outside the caller's transaction), one transaction.
    2. CREATE SCHEMA, one empty table per shape, search_path set to it alone.
    3. Per job, under a savepoint and a statement_timeout: EXPLAIN on the current shape,
       then on the proposed one; an error is kept and the savepoint rolled back.
    4. DROP SCHEMA … CASCADE, commit. Whatever fails on the way, the rollback drops it too."""
    connection = connections.create_connection("default")
    outcomes: dict[str, Outcome] = {}
    try:
        connection.ensure_connection()
        raw = connection.connection
        raw.autocommit = False
        with raw.cursor() as cursor:
            try:
                cursor.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
                for key, cols in columns.items():
                    cursor.execute(sql.SQL("CREATE TABLE {}.{} ({})").format(
                        sql.Identifier(schema), sql.Identifier(key),
                        sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(n), sql.SQL(t)) for n, t in cols)))
                cursor.execute(sql.SQL("SET LOCAL search_path TO {}, pg_catalog").format(sql.Identifier(schema)))
                cursor.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(_timeout_ms())))
                for plan in plans:
                    outcomes[plan.job] = Outcome(_explain(cursor, plan.current), _explain(cursor, plan.proposed))
                cursor.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
                raw.commit()
            except Exception:
                raw.rollback()
                raise
    finally:
        connection.close()
    return outcomes


def _explain(cursor, statement: str) -> str | None:
    """None when PostgreSQL plans it; else its error, as the job would get it."""
    cursor.execute("SAVEPOINT verify_one")
    try:
        cursor.execute("EXPLAIN " + statement)
        cursor.fetchall()
    except Exception as exc:  # noqa: BLE001 - any database error is the answer
        cursor.execute("ROLLBACK TO SAVEPOINT verify_one")
        diag = getattr(exc, "diag", None)
        message = getattr(diag, "message_primary", None) or str(exc).splitlines()[0]
        code = getattr(exc, "sqlstate", None)
        return f"{message}" + (f" (SQLSTATE {code})" if code else "")
    cursor.execute("RELEASE SAVEPOINT verify_one")
    return None


def _verdict_from(team, by_label, queries, outcomes: dict[str, Outcome], doubts: dict[str, str],
                  effects: dict | None, *, settle: bool) -> None:
    failures = [(hit.job, outcomes[hit.job].proposed_error) for hit in team.hits
                if hit.job in outcomes and outcomes[hit.job].current_error is None and outcomes[hit.job].proposed_error]
    if failures:
        job, error = failures[0]
        team.verdict = {"kind": PROVEN_BROKEN, "by": "EXPLAIN", "job": job, "error": error,
                        "errors": [f"{j}: {e}" for j, e in failures][:10], "path": _path(team)}
        return
    reasons = []
    for hit in team.hits:
        if hit.dataset not in by_label:
            reasons.append(f"{hit.job} reads {hit.dataset}: a dataset fed by the change, whose new shape is not known")
        elif hit.job in doubts:
            reasons.append(f"{hit.job}: {doubts[hit.job]}")
        elif hit.job in outcomes and outcomes[hit.job].current_error:
            reasons.append(f"{hit.job}: its SQL does not plan on the current shape either "
                           f"({outcomes[hit.job].current_error})")
    if reasons:
        team.verdict["reason"] = "; ".join(dict.fromkeys(reasons))
        return
    if not team.hits:
        team.verdict["reason"] = "no job of it was seen reading the changed data: there is no SQL to verify"
        return
    touched = {c for hit in team.hits for c in hit.touched}
    structural = bool(touched) and all(Effect.REMOVED in ((effects or {}).get(c) or ()) for c in touched)
    starred = [hit.job for hit in team.hits if hit.job in queries and _selects_star(queries[hit.job])]
    planned = ", ".join(sorted({hit.job for hit in team.hits}))
    if not structural:
        team.verdict["reason"] = (f"{planned} plans on the proposed shape, but a change of values can still break "
                                  "it at run time")
        return
    if starred:
        team.verdict["reason"] = (f"{planned} plans on the proposed shape, but {', '.join(starred)} selects *: the "
                                  "change passes on to whoever reads its output")
        return
    reason = f"{planned} plans cleanly on the proposed shape (EXPLAIN on a scratch schema)"
    team.verdict = {"kind": VERIFIED_SAFE, "by": "EXPLAIN", "reason": reason, "path": _path(team)}
    if settle:
        team.affected, team.why = False, f"verified safe: {reason}"


def _selects_star(query: JobQuery) -> bool:
    try:
        select = typecheck.select_of(query.query, query.dialect)
    except typecheck.NotChecked:
        return True
    return any(isinstance(s, typecheck.exp.Star) or (isinstance(s, typecheck.exp.Column) and s.is_star)
               for q in select.find_all(typecheck.exp.Select) for s in q.expressions)
