"""Which columns of which tables a SQL query reads, parsed with sqlglot.

Pure functions of the query text (and, for `SELECT *`, of the tables' known
columns), with no Django, so the ingest can cache them by query: dbt sends the
same compiled SQL on every run.

1. `sql_tables(query, dialect)` parses the query and names the physical tables
   it reads (CTE names are not tables) and the table it writes, if any
   (`INSERT INTO`, `CREATE TABLE … AS`).
2. `sql_reading(query, dialect, schemas)` follows every column reference
   through CTEs, derived tables, set operations and subqueries down to those
   tables, given the columns of the tables whose schema is known:

   - DIRECT: the column feeds a column of the query's result;
   - INDIRECT: it is used in WHERE, JOIN … ON/USING, GROUP BY, HAVING, ORDER BY,
     QUALIFY, a window's PARTITION BY/ORDER BY or a CASE condition, or it is
     named somewhere and does not reach the result (a CTE column left unused:
     dropping it still breaks the query);
   - `ALL_COLUMNS` ("*"): a `SELECT *` that reaches the result (or a filtering
     subquery) over a table whose columns are unknown, or a table read with no
     column named at all (`count(*)`) — all or unknown columns.

   A star is expanded lazily: `WITH s AS (SELECT * FROM t) SELECT a FROM s`
   reads `t.a`, not all of `t`.

Names compare case-insensitively (as unquoted identifiers do in most
dialects); a column is reported as the table's schema spells it when known,
else as the query spells it. Anything sqlglot cannot parse, and any query over
`max_bytes`, raises `SqlNotUnderstood`: the caller records all/unknown.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from registry.lazymodule import LazyModule

if TYPE_CHECKING:
    from sqlglot.optimizer.scope import Scope

# sqlglot takes most of a second to import: the first query parsed pays it, not every process.
sqlglot = LazyModule("sqlglot")
exp = LazyModule("sqlglot.expressions")
errors = LazyModule("sqlglot.errors")
sqlglot_scope = LazyModule("sqlglot.optimizer.scope")

ALL_COLUMNS = "*"
DIRECT = "DIRECT"
INDIRECT = "INDIRECT"
# How a DIRECT input reaches a result column (OpenLineage's transformation subtypes).
IDENTITY = "IDENTITY"
TRANSFORMATION = "TRANSFORMATION"
AGGREGATION = "AGGREGATION"
DEFAULT_MAX_BYTES = 100_000
# The INDIRECT uses through which an input's values change a result (OpenLineage's
# INDIRECT subtypes; SORT only orders the rows).
JOIN, GROUP_BY, FILTER, WINDOW, CONDITIONAL, SORT = "JOIN", "GROUP_BY", "FILTER", "WINDOW", "CONDITIONAL", "SORT"
RESULT_CHANGING = frozenset({JOIN, GROUP_BY, FILTER, WINDOW, CONDITIONAL})
# The value changes a step can absorb (registry.usage.Effect's values).
RETYPED, NULLS, VALUES = "retyped", "nulls", "values"
# A step whose result's type does not follow its input's (a comparison is a boolean): a
# new type reaches it as new values at most (registry.usage.KEEPS_ITS_TYPE).
TYPE = "type"
MAX_FRAGMENT = 400

# OpenLineage's `dialect` values (and dataset namespace schemes) that sqlglot names otherwise.
_DIALECTS = {
    "postgresql": "postgres", "postgres": "postgres", "redshift": "redshift", "snowflake": "snowflake",
    "bigquery": "bigquery", "trino": "trino", "presto": "presto", "mysql": "mysql", "mariadb": "mysql",
    "sqlserver": "tsql", "mssql": "tsql", "tsql": "tsql", "spark": "spark", "sparksql": "spark",
    "spark2": "spark2", "databricks": "databricks", "hive": "hive", "athena": "athena", "awsathena": "athena",
    "oracle": "oracle", "duckdb": "duckdb", "sqlite": "sqlite", "clickhouse": "clickhouse",
    "teradata": "teradata", "doris": "doris", "starrocks": "starrocks", "drill": "drill", "exasol": "exasol",
}


class SqlNotUnderstood(ValueError):
    """The query could not be parsed or followed; its reads are all/unknown."""


class TableRef(NamedTuple):
    """A physical table as the query names it: its name parts, unquoted."""

    parts: tuple[str, ...]

    @property
    def name(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class SqlTables:
    reads: tuple[TableRef, ...]  # in order of first appearance
    target: TableRef | None  # the table written by INSERT INTO / CREATE TABLE … AS


class FieldInput(NamedTuple):
    """An input column feeding a result column, and how.

    `subtype`: IDENTITY when some path passes it on unchanged, else TRANSFORMATION,
    else AGGREGATION. `through_star`: some path passes it on by `SELECT *` alone,
    never naming it, so that a column removed upstream disappears from the result
    without the query failing."""

    table: TableRef
    column: str
    subtype: str
    through_star: bool


class ValueStep(NamedTuple):
    """How an input column's values reach a result column beyond IDENTITY, and the SQL
    that shows it: for a DIRECT input, the expression and the changes it absorbs (a
    `cast(x as text)` takes any new type, a `coalesce(x, 'none')` any NULL, a
    `count(x)` both a new type and new values); for an INDIRECT one, the clause
    through which its values change the result: JOIN (rows matched), GROUP_BY (the
    groups), FILTER (WHERE, HAVING, QUALIFY, an aggregate's FILTER: rows kept),
    WINDOW (a window's PARTITION BY / ORDER BY), CONDITIONAL (a CASE condition); a JOIN
    step into a column of a side no outer join pads absorbs NULLs (`_padding`)."""

    table: TableRef
    column: str
    kind: str  # DIRECT | INDIRECT
    subtype: str  # DIRECT: IDENTITY, TRANSFORMATION, AGGREGATION; INDIRECT: JOIN, GROUP_BY, …
    fragment: str  # the SQL that justifies the step
    # Of a DIRECT step: the value changes it provably absorbs; of an INDIRECT JOIN step,
    # NULLs when no join pads the result column (a lost match drops the row or keeps it).
    absorbs: frozenset[str] = frozenset()
    # Of an INDIRECT step: a NULL in the input only drops rows of the result, the rows
    # left unchanged (a null-rejecting filter or join, nothing after it but rows).
    drops: bool = False


@dataclass(frozen=True)
class SqlReading:
    """What a query reads. Shared between threads through the cache: read only."""

    tables: tuple[TableRef, ...]
    direct: Mapping[TableRef, frozenset[str]]
    indirect: Mapping[TableRef, frozenset[str]]
    # Each result column and the input columns feeding it (DIRECT), in result order.
    fields: tuple[tuple[str, tuple[FieldInput, ...]], ...]
    target: TableRef | None
    # Each result column and how input values reach it beyond an unchanged copy:
    # DIRECT steps with their expression, INDIRECT ones with their clause (ValueStep).
    steps: tuple[tuple[str, tuple[ValueStep, ...]], ...] = ()
    # Result columns that hold one row per value: the query groups by that column alone
    # (`select customer_id, … group by customer_id`), so no two rows share a value.
    keyed: frozenset[str] = frozenset()


def dialect_for(dialect: str | None, namespace: str | None = None) -> str | None:
    """The sqlglot dialect for a sql facet's `dialect`, else the dataset namespace's scheme."""
    for name in (dialect, (namespace or "").partition(":")[0]):
        found = _DIALECTS.get((name or "").strip().lower())
        if found:
            return found
    return None


# --- caches --------------------------------------------------------------------------

class _Lru:
    """A small thread-safe LRU of results (and of failures, so a bad query is parsed once)."""

    def __init__(self, size: int) -> None:
        self.size, self.items, self.lock = size, OrderedDict(), threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


_tables_cache = _Lru(512)
_reading_cache = _Lru(512)


def clear_caches() -> None:
    _tables_cache.clear()
    _reading_cache.clear()


def _key(query: str) -> str:
    # The digest, not the text, is kept: compiled dbt models run to tens of kilobytes.
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


def _cached(cache: _Lru, key: Any, compute) -> Any:
    found = cache.get(key)
    if found is None:
        try:
            found = compute()
        except SqlNotUnderstood as exc:
            found = exc
        cache.put(key, found)
    if isinstance(found, SqlNotUnderstood):
        raise found
    return found


# --- parsing -----------------------------------------------------------------------

def _parse(query: str, dialect: str | None, max_bytes: int) -> list[exp.Expr]:
    if len(query) > max_bytes or len(query.encode("utf-8", "surrogatepass")) > max_bytes:
        raise SqlNotUnderstood(f"the query is over {max_bytes} bytes")
    try:
        statements = [s for s in sqlglot.parse(query, read=dialect) if s is not None]
    except (errors.SqlglotError, RecursionError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        raise SqlNotUnderstood(f"sqlglot could not parse the query: {str(exc).splitlines()[0][:200]}") from None
    if not statements:
        raise SqlNotUnderstood("the query is empty")
    return statements


def _table_ref(table: exp.Table) -> TableRef | None:
    if not isinstance(table.this, exp.Identifier):
        return None  # a table function, not a stored table
    return TableRef(tuple(part.name for part in table.parts if part.name))


def _query_of(statement: exp.Expr) -> tuple[exp.Expr | None, TableRef | None, list[str]]:
    """(the query whose columns are followed, the table it writes, that table's column list)."""
    if isinstance(statement, exp.Query):
        return statement, None, []
    if isinstance(statement, exp.Insert | exp.Create) and isinstance(statement.expression, exp.Query):
        target = statement.this
        columns: list[str] = []
        if isinstance(target, exp.Schema):
            columns = [c.name for c in target.expressions if isinstance(c, exp.Identifier | exp.Column | exp.ColumnDef)]
            target = target.this
        return statement.expression, _table_ref(target) if isinstance(target, exp.Table) else None, columns
    return None, None, []


def _physical_tables(statement: exp.Expr) -> list[exp.Table]:
    """The stored tables a statement reads: every table its scopes select from, or for
    a statement whose queries cannot be scoped (MERGE, UPDATE …), every table it names."""
    query, target, _ = _query_of(statement)
    if query is not None:
        found = []
        for scope in sqlglot_scope.traverse_scope(statement):
            found.extend(s for s in scope.sources.values() if isinstance(s, exp.Table))
        seen: set[int] = set()
        return [t for t in found if not (id(t) in seen or seen.add(id(t)))]
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    return [t for t in statement.find_all(exp.Table) if t.db or t.name.lower() not in ctes]


def sql_tables(query: str, dialect: str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SqlTables:
    """The tables a query reads and the one it writes (cached by query)."""
    def compute() -> SqlTables:
        reads: list[TableRef] = []
        target = None
        for statement in _parse(query, dialect, max_bytes):
            try:
                _, written, _ = _query_of(statement)
                tables = _physical_tables(statement)
            except (errors.SqlglotError, RecursionError) as exc:
                raise SqlNotUnderstood(f"sqlglot could not follow the query: {exc}") from None
            target = target or written
            for table in tables:
                ref = _table_ref(table)
                if ref and ref not in reads and ref != written:
                    reads.append(ref)
        return SqlTables(tuple(reads), target)

    return _cached(_tables_cache, (_key(query), dialect), compute)


def sql_reading(query: str, dialect: str | None = None, schemas: Mapping[TableRef, Iterable[str]] | None = None,
                *, max_bytes: int = DEFAULT_MAX_BYTES) -> SqlReading:
    """The columns a query reads (see the module docstring), cached by query and schemas.
    `schemas`: the known columns of some of its tables."""
    known = {ref: tuple(cols) for ref, cols in (schemas or {}).items() if cols}
    schema_key = tuple(sorted(known.items()))

    def compute() -> SqlReading:
        reader = _Reader(known)
        for statement in _parse(query, dialect, max_bytes):
            try:
                reader.statement(statement)
            except (errors.SqlglotError, RecursionError) as exc:
                raise SqlNotUnderstood(f"sqlglot could not follow the query: {exc}") from None
        return reader.result()

    return _cached(_reading_cache, (_key(query), dialect, schema_key), compute)


# --- following the columns ------------------------------------------------------------

class _Ref(NamedTuple):
    table: int  # index into _Reader.tables
    column: str  # lower case, or ALL_COLUMNS
    kind: str
    how: str = IDENTITY  # of a DIRECT ref: IDENTITY, TRANSFORMATION or AGGREGATION
    star: bool = False  # every step so far was a SELECT *: the column is never named
    # Of a DIRECT ref, the changes absorbed on the way and the SQL of the step that
    # absorbed them (else of the first step that was not a copy); of an INDIRECT one,
    # the clause (`use`: JOIN, GROUP_BY, …) and its SQL.
    absorbs: frozenset = frozenset()
    fragment: str = ""
    use: str = ""
    # Of an INDIRECT ref: a match lost on the way may leave this output NULL, because it
    # comes from a side an outer join pads (an inner join only drops the unmatched rows).
    nulls: bool = False
    # Of an INDIRECT ref: a NULL in the input only drops rows of this output, the rows
    # left as they were (a null-rejecting filter or inner join, nothing after it that
    # aggregates, limits or anti-joins the rows).
    drops: bool = False


@dataclass
class _Outputs:
    """What a scope hands to whoever selects from it."""

    named: dict[str, set[_Ref]] = field(default_factory=dict)  # lower-case output name -> refs
    order: list[str] = field(default_factory=list)  # output names in order (positional set operations)
    spelled: dict[str, str] = field(default_factory=dict)
    stars: list[Any] = field(default_factory=list)  # sources a SELECT * (or t.*) passes through
    # INDIRECT uses that change every result of the scope (join keys, filters, group keys),
    # star outputs included: added to whatever is pulled from it.
    steering: set = field(default_factory=set)
    # An EXCEPT: a row its second branch loses is a row the result gains.
    no_drops: bool = False

    def add(self, name: str, spelled: str, refs: set[_Ref]) -> None:
        if name not in self.named:
            self.named[name] = set()
            self.order.append(name)
            self.spelled[name] = spelled
        self.named[name] |= refs


def _weaker(kind: str, other: str) -> str:
    return DIRECT if kind == DIRECT and other == DIRECT else INDIRECT


def _compose(outer: str, inner: str) -> str:
    """How a value reaches the result through two steps."""
    if outer == IDENTITY:
        return inner
    if inner == IDENTITY:
        return outer
    return AGGREGATION if AGGREGATION in (outer, inner) else TRANSFORMATION


class _Reader:
    def __init__(self, schemas: Mapping[TableRef, tuple[str, ...]]) -> None:
        self.schemas = {ref: {c.lower(): c for c in cols} for ref, cols in schemas.items()}
        self.tables: list[TableRef] = []
        self.table_index: dict[TableRef, int] = {}
        self.spelling: dict[tuple[int, str], str] = {}
        self.named: set[tuple[int, str]] = set()  # every column named anywhere
        self.direct: set[tuple[int, str]] = set()
        self.indirect: set[tuple[int, str]] = set()
        self.fields: list[tuple[str, tuple[FieldInput, ...]]] = []
        self.steps: list[tuple[str, tuple[ValueStep, ...]]] = []
        self.target: TableRef | None = None
        self.outputs: dict[int, _Outputs] = {}  # id(scope) -> outputs
        self.padded: dict[int, set[str]] = {}  # id(scope) -> the sources an outer join of it pads
        self.physical: dict[int, int] = {}  # id(table node) -> table index
        self.keyed: set[str] = set()

    # the tables

    def _index(self, table: exp.Table) -> int | None:
        found = self.physical.get(id(table))
        if found is not None:
            return found
        ref = _table_ref(table)
        if ref is None:
            return None
        if ref not in self.table_index:
            self.table_index[ref] = len(self.tables)
            self.tables.append(ref)
        self.physical[id(table)] = self.table_index[ref]
        return self.table_index[ref]

    def _schema(self, index: int) -> dict[str, str] | None:
        return self.schemas.get(self.tables[index])

    # resolving names through sources

    def _pull(self, source: Any, name: str, kind: str, *, strict: bool, how: str = IDENTITY,
              absorbs: frozenset = frozenset(), fragment: str = "", use: str = "", padded: bool = False,
              drops: bool = False) -> set[_Ref]:
        """The refs behind column `name` of `source` (a table node or a scope), named
        here. `strict`: a table whose schema is known and lacks the column gives nothing.
        `padded`: an outer join here pads the source, so a row it loses (its own filter
        or join: its INDIRECT refs) leaves the column NULL in the other side's rows."""
        if isinstance(source, exp.Table):
            index = self._index(source)
            if index is None:
                return set()
            schema = self._schema(index)
            if strict and schema is not None and name not in schema:
                return set()
            return {_Ref(index, name, kind, how, False, absorbs if kind == DIRECT else frozenset(), fragment, use,
                         drops=drops and kind != DIRECT)}
        outputs = self.outputs.get(id(source))
        if outputs is None:
            return set()
        if name in outputs.named:
            refs = {_through(_padded(r, padded), kind, how, absorbs, fragment, use, drops)
                    for r in outputs.named[name]}
        else:
            refs = set()
            for star_source in outputs.stars:
                refs |= self._pull(star_source, name, kind, strict=strict, how=how, absorbs=absorbs, fragment=fragment,
                                   use=use, padded=padded, drops=drops)
            if refs:
                refs |= {_padded(r, padded) for r in outputs.steering}
        return _undropped(refs) if outputs.no_drops else refs

    def _expand(self, source: Any, kind: str) -> list[tuple[str, set[_Ref]]]:
        """The columns a `SELECT *` over `source` yields, each with the refs behind it,
        in order; a table of unknown columns yields one ("*", all of it)."""
        if isinstance(source, exp.Table):
            index = self._index(source)
            if index is None:
                return []
            schema = self._schema(index)
            if schema is None:
                return [(ALL_COLUMNS, {_Ref(index, ALL_COLUMNS, kind, IDENTITY, True)})]
            return [(spelled, {_Ref(index, column, kind, IDENTITY, True)}) for column, spelled in schema.items()]
        outputs = self.outputs.get(id(source))
        if outputs is None:
            return []
        found = [(outputs.spelled[name], {r._replace(kind=_weaker(kind, r.kind)) for r in outputs.named[name]})
                 for name in outputs.order]
        for star_source in outputs.stars:
            found.extend((name, refs | outputs.steering) for name, refs in self._expand(star_source, kind))
        return [(name, _undropped(refs)) for name, refs in found] if outputs.no_drops else found

    @staticmethod
    def _sources(scope: Scope) -> dict[str, Any]:
        return {name.lower(): source for name, source in scope.sources.items()}

    def _resolve(self, scope: Scope, column: exp.Column, kind: str, aliases: dict[str, set[_Ref]],
                 how: str = IDENTITY, absorbs: frozenset = frozenset(), fragment: str = "",
                 use: str = "", drops: bool = False) -> set[_Ref]:
        name = column.name.lower()
        qualifier = column.table.lower()
        extra = {"how": how, "absorbs": absorbs, "fragment": fragment, "use": use, "drops": drops}
        if qualifier:
            current: Scope | None = scope
            while current is not None:  # a correlated reference names an outer scope's source
                source = self._sources(current).get(qualifier)
                if source is not None:
                    return self._pull(source, name, kind, strict=False, **extra,
                                      padded=qualifier in self.padded.get(id(current), ()))
                current = current.parent
            return set()
        selected = [(alias.lower(), source) for alias, (_, source) in scope.selected_sources.items()]
        padded = self.padded.get(id(scope), set())
        refs: set[_Ref] = set()
        for alias, source in selected:
            refs |= self._pull(source, name, kind, strict=True, **extra, padded=alias in padded)
        if name in aliases and (not refs or kind != DIRECT):
            refs |= {_Ref(r.table, r.column, INDIRECT, use=use, fragment=fragment) for r in aliases[name]}
        if not refs and name not in aliases:
            # Nothing claims it (unknown schemas, or a correlated name): any source might.
            for alias, source in selected:
                refs |= self._pull(source, name, kind, strict=False, **extra, padded=alias in padded)
        return refs

    def _origins(self, scope: Scope, column: exp.Column) -> set[str] | None:
        """The sources of `scope` a column may come from (None: it cannot be told)."""
        qualifier = column.table.lower()
        if qualifier:
            return {qualifier} if qualifier in self._sources(scope) else None
        name = column.name.lower()
        found = {alias.lower() for alias, (_, source) in scope.selected_sources.items()
                 if self._pull(source, name, DIRECT, strict=True)}
        return found or None

    def _note(self, refs: set[_Ref], spelled: str) -> None:
        for ref in refs:
            key = (ref.table, ref.column)
            self.named.add(key)
            if spelled:
                self.spelling.setdefault(key, spelled)
            if ref.kind == INDIRECT:
                self.indirect.add(key)

    # one scope

    def scope(self, scope: Scope, seen: set[int]) -> None:
        expression = scope.expression
        outputs = _Outputs()
        self.outputs[id(scope)] = outputs
        if isinstance(expression, exp.SetOperation):
            branches = [self.outputs.get(id(s)) for s in getattr(scope, "set_operation_scopes", [])]
            branches = [b for b in branches if b is not None]
            if branches and all(not b.stars for b in branches):
                first = branches[0]
                for position, name in enumerate(first.order):
                    refs: set[_Ref] = set()
                    for branch in branches:
                        if position < len(branch.order):
                            refs |= branch.named[branch.order[position]]
                    outputs.add(name, first.spelled[name], refs)
            else:
                outputs.stars.extend(getattr(scope, "set_operation_scopes", []))
            if isinstance(expression, exp.Except):
                outputs.no_drops = True
                outputs.named = {name: _undropped(refs) for name, refs in outputs.named.items()}
            self._rename(scope, outputs)
            return
        if not isinstance(expression, exp.Select):
            return
        for table in (s for s in scope.sources.values() if isinstance(s, exp.Table)):
            self._index(table)
        padding = _padding(expression)
        # Joins whose sides cannot be named (a parenthesised join, an unnamed source): every
        # source counts as padded.
        self.padded[id(scope)] = set().union(*padding) if padding is not None else set(self._sources(scope))
        selected = [source for _, source in scope.selected_sources.values()]
        in_projection: dict[int, tuple[exp.Expr, str]] = {}
        # The sources each output is computed from (None: some column's source is unknown),
        # which only an outer join asks.
        origins: dict[str, set[str] | None] = {}
        outer = padding is not None and any(padding)
        # Rows dropped before these clauses stay dropped, and the rows left unchanged,
        # unless the scope keeps a number of rows, or filters groups or windows.
        monotone = not any(expression.args.get(k) for k in ("limit", "offset", "fetch", "having", "qualify")) and \
            not (isinstance(expression.args.get("distinct"), exp.Distinct) and expression.args["distinct"].args.get("on"))
        per_row: dict[str, bool] = {}  # an output computed from one row (no aggregate, no window)
        for projection in expression.selects:
            if isinstance(projection, exp.Star):
                outputs.stars.extend(selected)
                continue
            if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                source = self._sources(scope).get(projection.table.lower())
                outputs.stars.extend([source] if source is not None else selected)
                continue
            name = projection.alias_or_name
            outputs.add(name.lower(), name, set())
            origins.setdefault(name.lower(), set())
            per_row[name.lower()] = monotone and per_row.get(name.lower(), True) and \
                projection.find(exp.AggFunc, exp.Window) is None
            for column in projection.find_all(exp.Column):
                in_projection[id(column)] = (projection, name.lower())
                if not outer or _never_null_within(column, projection):
                    continue  # no outer join; or `coalesce(p.paid, 0)`, `count(p.id)`: no padded NULL gets through
                found = self._origins(scope, column)
                known = origins[name.lower()]
                origins[name.lower()] = None if found is None or known is None else known | found
        # The projections first, so that a clause naming a result alias (GROUP BY total,
        # Snowflake's WHERE total > 0) finds what the alias reads.
        columns = [c for c in scope.columns if id(c) not in seen and not isinstance(c.this, exp.Star)]
        seen.update(id(c) for c in columns)
        for column in (c for c in columns if id(c) in in_projection):
            projection, name = in_projection[id(column)]
            kind, use = _kind_within(column, projection)
            how = _how_within(column, projection)
            refs = self._resolve(scope, column, kind, {}, how, _absorbs_within(column, projection) if kind == DIRECT
                                 else frozenset(), _fragment(projection) if how != IDENTITY or use else "", use)
            self._note(refs, column.name)
            outputs.named[name] |= refs if per_row[name] else _undropped(refs)
        # A column in a clause changes the scope's results (every output: the rows it
        # keeps, matches or groups), unless it only orders them.
        changing: set[_Ref] = set()
        matching: dict[int, set[_Ref]] = {}  # a join's position -> the refs its condition reads
        # A clause reading a padded side (but the join that pads it) may keep a row because
        # it lost its match (`where p.id is null`): rows a join drops may then be rows gained.
        anti = padding is None
        for column in (c for c in columns if id(c) not in in_projection):
            use, clause = _clause_of(column, expression)
            drops = use in (FILTER, JOIN) and clause is not None and _null_rejecting(column, clause)
            refs = self._resolve(scope, column, INDIRECT, outputs.named, use=use,
                                 fragment=_fragment(clause) if clause is not None else "", drops=drops)
            self._note(refs, column.name)
            if outer and not anti:
                found = self._origins(scope, column)
                own = padding[_join_position(column, expression)] if use == JOIN else set()
                anti = found is None or bool((found - own) & set().union(*padding))
            if use == JOIN:
                matching.setdefault(_join_position(column, expression), set()).update(
                    r for r in refs if r.column != ALL_COLUMNS)
            elif use in RESULT_CHANGING:
                changing |= {r for r in refs if r.column != ALL_COLUMNS}
        # A match a join gains or loses changes every result; it leaves NULLs only in the
        # outputs of a side that this join, or an outer join after it, pads.
        for name in outputs.order:
            kept = per_row.get(name, False)
            outputs.named[name] |= changing if kept else _undropped(changing)
            for position, refs in matching.items():
                pads = padding is None or origins.get(name) is None or bool(
                    origins[name] & set().union(*padding[position:]))
                outputs.named[name] |= {r._replace(nulls=pads, drops=r.drops and kept and not pads and not anti)
                                        for r in refs}
        # A star passes whole rows on: rows a filter dropped stay dropped (unless the scope
        # aggregates, limits or filters groups); a join's sides are not told apart.
        outputs.steering |= (changing if monotone and not expression.args.get("group") else _undropped(changing)) | {
            r._replace(nulls=True, drops=False) for refs in matching.values() for r in refs}
        for join in expression.args.get("joins") or []:
            for identifier in join.args.get("using") or []:
                name = identifier.name.lower()
                refs = set()
                for source in selected:
                    refs |= self._pull(source, name, INDIRECT, strict=True)
                self._note(refs, identifier.name)
        self._rename(scope, outputs)
        if scope.is_subquery and not isinstance(expression.parent, exp.Exists):
            # A subquery's result filters or feeds its parent: whatever it selects is
            # read, stars included (EXISTS reads no column of its result).
            pulled = {r for rs in outputs.named.values() for r in rs}
            for source in outputs.stars:
                pulled |= {r for _, refs in self._expand(source, INDIRECT) for r in refs}
            self._note({_Ref(r.table, r.column, INDIRECT) for r in pulled}, "")

    @staticmethod
    def _rename(scope: Scope, outputs: _Outputs) -> None:
        """`WITH c(a, b) AS (…)` and `(…) AS d(a, b)` rename the outputs by position."""
        names = [n for n in scope.outer_columns if n] if scope.outer_columns else []
        if not names or outputs.stars or len(names) != len(outputs.order):
            return
        renamed = _Outputs()
        for new, old in zip(names, outputs.order, strict=True):
            renamed.add(new.lower(), new, outputs.named[old])
        outputs.named, outputs.order, outputs.spelled = renamed.named, renamed.order, renamed.spelled

    # one statement

    def statement(self, statement: exp.Expr) -> None:
        query, target, target_columns = _query_of(statement)
        self.target = self.target or target
        if query is None:
            # Not a query we can follow: every table it names is read, columns unknown.
            for table in _physical_tables(statement):
                index = self._index(table)
                if index is not None and self.tables[index] != target:
                    self.named.add((index, ALL_COLUMNS))
                    self.indirect.add((index, ALL_COLUMNS))
            return
        scopes = sqlglot_scope.traverse_scope(statement)
        seen: set[int] = set()
        for scope in scopes:
            self.scope(scope, seen)
        root = next((s for s in scopes if s.expression is query), scopes[-1] if scopes else None)
        if root is None:
            return
        outputs = self.outputs[id(root)]
        results: list[tuple[str, set[_Ref]]] = [(outputs.spelled[n], outputs.named[n]) for n in outputs.order]
        for source in outputs.stars:
            results.extend(self._expand(source, DIRECT))
        if target_columns and len(target_columns) == len(results):
            results = [(name, refs) for name, (_, refs) in zip(target_columns, results, strict=True)]
        elif isinstance(root.expression, exp.Select) and not isinstance(statement, exp.Insert | exp.Merge):
            self.keyed |= _keyed(root.expression)  # an INSERT appends: its rows meet older ones
        for name, refs in results:
            self._reach(refs)
            if name == ALL_COLUMNS:
                continue  # columns unknown: no field to name
            feeding: dict[tuple[TableRef, str], list[_Ref]] = {}
            steering: dict[tuple[TableRef, str], list[_Ref]] = {}
            for r in refs:
                if r.column == ALL_COLUMNS:
                    continue
                key = (self.tables[r.table], self._spell(r.table, r.column))
                if r.kind == DIRECT:
                    feeding.setdefault(key, []).append(r)
                elif r.use in RESULT_CHANGING:
                    steering.setdefault(key, []).append(r)
            self.fields.append((name, tuple(
                FieldInput(table, column, _subtype(paths), any(p.star for p in paths))
                for (table, column), paths in sorted(feeding.items()))))
            steps = [_direct_step(table, column, paths) for (table, column), paths in sorted(feeding.items())]
            for (table, column), paths in sorted(steering.items()):
                steps.append(_indirect_step(table, column, paths))
            self.steps.append((name, tuple(s for s in steps if s is not None)))

    def _reach(self, refs: set[_Ref]) -> None:
        """These refs reach the result."""
        for ref in refs:
            key = (ref.table, ref.column)
            self.named.add(key)
            (self.direct if ref.kind == DIRECT else self.indirect).add(key)

    def _spell(self, index: int, column: str) -> str:
        if column == ALL_COLUMNS:
            return ALL_COLUMNS
        schema = self._schema(index)
        if schema and column in schema:
            return schema[column]
        return self.spelling.get((index, column)) or column

    def result(self) -> SqlReading:
        direct: dict[TableRef, set[str]] = {ref: set() for ref in self.tables}
        indirect: dict[TableRef, set[str]] = {ref: set() for ref in self.tables}
        for index, column in self.direct:
            direct[self.tables[index]].add(self._spell(index, column))
        for index, column in self.named - self.direct:
            indirect[self.tables[index]].add(self._spell(index, column))
        for index, column in self.indirect:
            indirect[self.tables[index]].add(self._spell(index, column))
        for ref in self.tables:
            if ref != self.target and not direct[ref] and not indirect[ref]:
                # Read with no column named (count(*), an unused CTE over it): unknown.
                indirect[ref].add(ALL_COLUMNS)
        tables = tuple(ref for ref in self.tables if ref != self.target)
        return SqlReading(
            tables=tables,
            direct={ref: frozenset(direct[ref]) for ref in tables},
            indirect={ref: frozenset(indirect[ref]) for ref in tables},
            fields=tuple(self.fields),
            target=self.target,
            steps=tuple(self.steps),
            keyed=frozenset(self.keyed),
        )


def _subtype(paths: list[_Ref]) -> str:
    """The subtype of an input reaching a result column by `paths`: the one that
    carries most of the input's own value (IDENTITY, then TRANSFORMATION)."""
    hows = {p.how for p in paths}
    return next(how for how in (IDENTITY, TRANSFORMATION, AGGREGATION) if how in hows)


def _how_within(column: exp.Column, projection: exp.Expr) -> str:
    """IDENTITY for a projection that is the column itself (aliased or not),
    AGGREGATION for one under an aggregate function, else TRANSFORMATION."""
    bare = projection.this if isinstance(projection, exp.Alias) else projection
    while isinstance(bare, exp.Paren):
        bare = bare.this
    if bare is column:
        return IDENTITY
    node: exp.Expr = column
    while node is not projection and node.parent is not None:
        node = node.parent
        if isinstance(node, exp.AggFunc):
            return AGGREGATION
    return TRANSFORMATION


def _kind_within(column: exp.Column, projection: exp.Expr) -> tuple[str, str]:
    """(DIRECT, "") unless the column only steers the value: a window's PARTITION BY or
    ORDER BY (WINDOW), a CASE condition (CONDITIONAL), an aggregate's FILTER (WHERE …)."""
    node: exp.Expr = column
    while node is not projection and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Window) and node.arg_key in ("partition_by", "order"):
            return INDIRECT, WINDOW
        if isinstance(parent, exp.If) and node.arg_key == "this":
            return INDIRECT, CONDITIONAL
        if isinstance(parent, exp.Filter) and node.arg_key == "expression":
            return INDIRECT, FILTER
        node = parent
    return DIRECT, ""


def _clause_of(column: exp.Column, select: exp.Expr) -> tuple[str, exp.Expr | None]:
    """Which clause of `select` names the column (JOIN, FILTER, GROUP_BY, SORT), and that
    clause's SQL node (a join's ON condition, the WHERE, the GROUP BY, …)."""
    node: exp.Expr = column
    while node.parent is not None and node.parent is not select:
        node = node.parent
    key = node.arg_key if node.parent is select else ""
    if key == "joins":
        on = node.args.get("on")
        return JOIN, on if on is not None else node
    if key in ("where", "having", "qualify"):
        return FILTER, node
    if key == "group":
        return GROUP_BY, node
    if key == "order":
        return SORT, node
    return "", None


def _fragment(node: exp.Expr) -> str:
    try:
        text = node.sql()
    except (errors.SqlglotError, RecursionError, ValueError):  # pragma: no cover - sqlglot renders what it parsed
        return ""
    return text if len(text) <= MAX_FRAGMENT else text[:MAX_FRAGMENT - 1] + "…"


def _is_text(data_type: exp.Expr | None) -> bool:
    return isinstance(data_type, exp.DataType) and data_type.this in {exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR} and not data_type.expressions


def _non_null_literal(node: exp.Expr) -> bool:
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    return isinstance(node, exp.Literal | exp.Boolean) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal))


def _never_null_within(column: exp.Column, projection: exp.Expr) -> bool:
    """The projection gives no NULL for a NULL `column`: it sits under a `count`, or a
    `coalesce` with a non-NULL literal after it."""
    node: exp.Expr = column
    while node is not projection and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Count) or _coalesced(node, parent):
            return True
        node = parent
    return False


def _coalesced(node: exp.Expr, parent: exp.Expr) -> bool:
    """`parent` is a `coalesce` with a non-NULL literal after `node`."""
    if not isinstance(parent, exp.Coalesce):
        return False
    later = parent.expressions if node.arg_key == "this" else \
        parent.expressions[parent.expressions.index(node) + 1:] if node in parent.expressions else []
    return any(_non_null_literal(arg) for arg in later)


def _absorbs_within(column: exp.Column, projection: exp.Expr) -> frozenset[str]:
    """The value changes of `column` that the expression provably keeps from its result:
    a new type under `cast(… as text)` (every value of every type has a text form, and
    an unbounded text type keeps it whole); NULLs under `coalesce(…, <a literal>)`;
    a new type and new values under `count(…)` (which counts non-NULL values only); the
    type (TYPE) under a comparison, whose result is a boolean whatever it compares."""
    found: set[str] = set()
    node: exp.Expr = column
    while node is not projection and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Cast) and node.arg_key == "this" and _is_text(parent.args.get("to")):
            found.add(RETYPED)
        elif _coalesced(node, parent):
            found.add(NULLS)
        elif isinstance(parent, exp.Count) and not parent.args.get("distinct"):
            found.update((RETYPED, VALUES))
        elif isinstance(parent, exp.Predicate):
            found.add(TYPE)
        node = parent
    return frozenset(found)


def _through(ref: _Ref, kind: str, how: str, absorbs: frozenset, fragment: str, use: str,
             drops: bool = False) -> _Ref:
    """`ref` seen through one more step (kind, how, what it absorbs, its SQL, its clause,
    whether a NULL there only drops rows)."""
    if ref.kind == DIRECT and kind != DIRECT:
        return ref._replace(kind=INDIRECT, how=_compose(how, ref.how), use=use, fragment=fragment, absorbs=frozenset(),
                            drops=drops)
    if ref.kind != DIRECT:
        return ref._replace(how=_compose(how, ref.how))
    both = ref.absorbs | absorbs
    # The fragment kept is the step that absorbed, else the first that was not a copy.
    keep = ref.fragment if (ref.fragment and (ref.absorbs or not absorbs)) else (fragment or ref.fragment)
    return ref._replace(how=_compose(how, ref.how), absorbs=both, fragment=keep)


def _keyed(select: exp.Expr) -> set[str]:
    """The result names of `select` that hold one row per value: its GROUP BY has one
    expression (no ROLLUP, CUBE or GROUPING SETS) and the projection is that expression,
    spelled the same or named by position. (A GROUP BY naming a result alias is left
    out: where an input column has the same name, PostgreSQL groups by the input.)"""
    group = select.args.get("group")
    if group is None or len(group.expressions) != 1 or any(group.args.get(k) for k in ("rollup", "cube",
                                                                                        "grouping_sets")):
        return set()
    key = group.expressions[0]
    projections = list(select.expressions)
    if isinstance(key, exp.Rollup | exp.Cube | exp.GroupingSets):
        return set()
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.name)
        chosen = [projections[position - 1]] if 0 < position <= len(projections) else []
    else:
        chosen = [p for p in projections if (p.this if isinstance(p, exp.Alias) else p).sql() == key.sql()]
    return {p.alias_or_name for p in chosen if p.alias_or_name and not isinstance(p, exp.Star)}


def _padding(select: exp.Expr) -> list[set[str]] | None:
    """For each join of `select`, in order, the sources (lower-case names) it pads with
    NULLs where a row finds no match: a LEFT join the side it joins, a RIGHT join every
    source before it, a FULL join both; an inner or cross join none (it drops the row).
    None when a source has no name of its own (`a JOIN (b LEFT JOIN c …)`): it cannot be told."""
    joins = select.args.get("joins") or []
    first = select.args.get("from_") or select.args.get("from")
    names = [first.this.alias_or_name.lower() if first is not None else "",
             *(join.this.alias_or_name.lower() for join in joins)]
    if joins and (not all(names) or len(set(names)) != len(names)):
        return None
    padding = []
    for position, join in enumerate(joins, 1):
        side = (join.side or "").upper()
        pads = set()
        if side in ("LEFT", "FULL"):
            pads.add(names[position])
        if side in ("RIGHT", "FULL"):
            pads.update(names[:position])
        padding.append(pads)
    return padding


def _join_position(column: exp.Column, select: exp.Expr) -> int:
    """The position of the join whose condition names `column` (0 when it cannot be told:
    every join from the first then counts)."""
    node: exp.Expr = column
    while node.parent is not None and node.parent is not select:
        node = node.parent
    joins = select.args.get("joins") or []
    return next((i for i, join in enumerate(joins) if join is node), 0)


def _padded(ref: _Ref, padded: bool) -> _Ref:
    """A ref of a source an outer join pads: a row that source loses (its INDIRECT refs:
    a filter, a join of its own) leaves the padded columns NULL in the other side's rows."""
    return ref._replace(nulls=True, drops=False) if padded and ref.kind != DIRECT else ref


def _undropped(refs: set[_Ref]) -> set[_Ref]:
    """Refs past a step after which rows dropped upstream change values (an aggregate, a
    window, a LIMIT, an EXCEPT's second branch), not only the number of rows."""
    return {r._replace(drops=False) if r.drops else r for r in refs}


# What a NULL goes through and still gives NULL, never TRUE: a WHERE or an ON built of
# these drops the row (Kleene logic: AND, OR and NOT of unknowns never make TRUE).
_STRICT = ("EQ", "NEQ", "GT", "GTE", "LT", "LTE", "Like", "ILike", "In", "Between", "And", "Or", "Not", "Paren",
           "Neg", "Add", "Sub", "Mul", "Div", "Cast", "Lower", "Upper", "Where")


def _null_rejecting(column: exp.Column, clause: exp.Expr) -> bool:
    """A NULL in `column` makes `clause` (a WHERE, a join's ON condition) drop the row:
    every step from the column up to it passes NULL on (no IS NULL, COALESCE, CASE, IS
    DISTINCT FROM or function that may turn a NULL into a value)."""
    node: exp.Expr = column
    while node is not clause:
        parent = node.parent
        if parent is None or type(parent).__name__ not in _STRICT:
            return False
        if isinstance(parent, exp.In) and node.arg_key != "this":
            return False  # a column in the list: `x IN (a, NULL)` is not FALSE
        node = parent
    return True


_MAKES_NULLS = (CONDITIONAL, WINDOW)


def _indirect_step(table: TableRef, column: str, paths: list[_Ref]) -> ValueStep:
    """An INDIRECT input's step: the use that leaves most of its change in the result, one
    that may make NULLs first (a padding join, a CASE condition, a window), with its SQL
    and that of the first use otherwise (so a value the other names is still seen). A join
    that pads nothing into this result absorbs the NULLs a lost match would make (the
    row drops, or is kept as it was): the edge's description says so."""
    usual = min(paths, key=lambda p: (p.use, p.fragment))
    making = [p for p in paths if p.use in _MAKES_NULLS or p.nulls]
    if not making:
        return ValueStep(table, column, INDIRECT, usual.use, usual.fragment,
                         frozenset({NULLS}) if usual.use == JOIN else frozenset(),
                         usual.use in (FILTER, JOIN) and all(p.drops for p in paths))
    first = min(making, key=lambda p: (p.use, p.fragment))
    # A filter's or a group's rows lost on the padded side of an outer join are NULLs here.
    use = first.use if first.use in (*_MAKES_NULLS, JOIN) else JOIN
    fragment = first.fragment if usual.fragment in ("", first.fragment) else f"{first.fragment}; {usual.fragment}"
    if len(fragment) > MAX_FRAGMENT:
        fragment = fragment[:MAX_FRAGMENT - 1] + "…"
    return ValueStep(table, column, INDIRECT, use, fragment)


def _direct_step(table: TableRef, column: str, paths: list[_Ref]) -> ValueStep | None:
    """A DIRECT input's step: what every path absorbs, and the SQL that shows it."""
    absorbs = frozenset.intersection(*(p.absorbs for p in paths))
    subtype = _subtype(paths)
    if subtype == IDENTITY and not absorbs:
        return None
    shown = next((p.fragment for p in paths if p.fragment and p.absorbs >= absorbs), "") if absorbs else \
        next((p.fragment for p in paths if p.fragment), "")
    return ValueStep(table, column, DIRECT, subtype, shown, absorbs)
