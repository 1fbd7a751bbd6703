"""Does a consumer's SQL still type-check when a column it reads changes type?

Pure functions of the query text and the tables' column types (sqlglot; no Django),
shared by routing (a retype is judged per expression, not per column) and by the
verification on a scratch schema (change_requests.verify), which binds the query's
tables the same way.

1. `bind_tables` parses the query, keeps the SELECT it runs (the query of an
   `INSERT … SELECT` / `CREATE TABLE … AS`) and points every stored table it names
   at the dataset whose name ends with those parts, renamed `t1`, `t2`, … (aliases
   kept): the product's datasets are named as the lineage names them
   (`warehouse.schema.table`), the SQL as its author wrote it.
2. `check_retype` qualifies the query with the current column types, annotates it
   twice (current types, proposed types: sqlglot's `annotate_types`) and looks at
   every expression whose operand changed type:

   - arithmetic on text or booleans (`amount + 1` once `amount` is text);
   - a comparison of text (or a boolean) with a number, or of text with a date
     (`status = 5`, a join of a text key with an integer one), and a quoted literal
     the new type cannot read (`value_tier = 'high'` once `value_tier` is an integer);
   - a date function on text (`date_trunc('day', placed_at)`, `extract(...)`);
   - `sum` / `avg` of a boolean or of text, `min` / `max` of a boolean;
   - a condition (WHERE, HAVING, NOT, AND, OR, CASE WHEN) that is no longer boolean;
   - branches that no longer agree: a UNION's result columns, COALESCE / CASE values
     (text and a number cannot be matched);
   - a timestamp plus or minus a number;
   - a cast that may fail for some value of the new type (text to a number or a
     date) is not provably absorbed; other casts absorb the change;
   - any other function given the changed column is not decided.

   The consumer is *not affected* only when every use type-checks, nothing is
   undecided, and no result column changes type (a result column that does passes
   the change on to whoever reads it). A failing expression is reported with the
   error PostgreSQL would give.

Anything undecidable is never "fine": the answer is then `ok=None`, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

MAX_QUERY_BYTES = 100_000

# Dataframe contract dtypes as the PostgreSQL types a table of them has.
DTYPE_SQL = {
    "int8": "smallint", "int16": "smallint", "int32": "integer", "int64": "bigint", "int": "bigint",
    "uint8": "smallint", "uint16": "integer", "uint32": "bigint", "uint64": "numeric",
    "Int8": "smallint", "Int16": "smallint", "Int32": "integer", "Int64": "bigint",
    "float16": "real", "float32": "real", "float64": "double precision", "float": "double precision",
    "Float32": "real", "Float64": "double precision",
    "bool": "boolean", "boolean": "boolean",
    "str": "text", "string": "text", "object": "text", "category": "text",
    "date": "date", "datetime64[ns]": "timestamp", "datetime64": "timestamp", "datetime": "timestamp",
    "decimal": "numeric", "Decimal": "numeric", "timedelta64[ns]": "interval",
}

_T = exp.DataType.Type
TEXT = exp.DataType.TEXT_TYPES | {_T.NAME}
NUMBER = exp.DataType.NUMERIC_TYPES
TEMPORAL = exp.DataType.TEMPORAL_TYPES
ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Pow)
COMPARISON = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
DATE_FUNCTIONS = (exp.TimestampTrunc, exp.DateTrunc, exp.DatetimeTrunc, exp.Extract, exp.DateAdd, exp.DateSub,
                  exp.DateDiff, exp.TimestampAdd, exp.TimestampSub, exp.TimestampDiff, exp.DatetimeAdd,
                  exp.DatetimeSub, exp.DatetimeDiff, exp.Year, exp.Month, exp.Day, exp.Quarter, exp.Week,
                  exp.DayOfWeek, exp.DayOfMonth, exp.DayOfYear, exp.TimeToStr, exp.TsOrDsAdd, exp.TsOrDsDiff)
DATE_NAMES = {"date_part", "date_trunc", "age", "to_char", "extract", "datediff", "dateadd"}
NUMERIC_AGGREGATES = (exp.Sum, exp.Avg, exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance, exp.VariancePop)
# What passes a value on or reads it without caring about its type.
NEUTRAL = (exp.Column, exp.Alias, exp.Paren, exp.Subquery, exp.Select, exp.From, exp.Join, exp.Where, exp.Group,
           exp.Having, exp.Order, exp.Ordered, exp.Window, exp.Tuple, exp.CTE, exp.With, exp.Union, exp.Intersect,
           exp.Except, exp.Count, exp.Min, exp.Max, exp.Distinct, exp.Coalesce, exp.Case, exp.If, exp.Is, exp.Not,
           exp.Null, exp.ArrayAgg, exp.GroupConcat, exp.AnyValue, exp.First, exp.Last, exp.Lag, exp.Lead,
           exp.FirstValue, exp.LastValue, exp.Nullif, exp.In, exp.Between, exp.Table, exp.TableAlias,
           exp.Identifier, exp.Star)


class NotChecked(ValueError):
    """The query cannot be checked (not parsed, not a query, a table not known); the message says why."""


@dataclass(frozen=True)
class BoundQuery:
    """A consumer's query with its stored tables renamed to `key`s, and which dataset each is."""

    query: exp.Query
    datasets: dict[str, str]  # key ("t1") -> the dataset's name, as the lineage names it


def select_of(query: str, dialect: str | None) -> exp.Query:
    """The one query a job runs: its SELECT (that of an INSERT … SELECT / CREATE … AS)."""
    if len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        raise NotChecked(f"the query is over {MAX_QUERY_BYTES} bytes")
    try:
        statements = [s for s in sqlglot.parse(query, read=dialect) if s is not None]
    except (SqlglotError, RecursionError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        raise NotChecked(f"sqlglot could not parse it as {dialect or 'generic SQL'}: "
                         f"{str(exc).splitlines()[0][:200]}") from None
    if len(statements) != 1:
        raise NotChecked(f"it holds {len(statements)} statements, not one query")
    statement = statements[0]
    if isinstance(statement, exp.Insert | exp.Create) and isinstance(statement.expression, exp.Query):
        statement = statement.expression
    if not isinstance(statement, exp.Query):
        raise NotChecked(f"it is a {statement.key.upper()}, not a query")
    return statement


def dataset_for(parts: list[str], names: list[str]) -> str | None:
    """The dataset whose dotted name ends with the table's name parts (case-insensitively);
    the shortest such name when several do, None when none does."""
    wanted = [p.casefold() for p in parts]
    found = [n for n in names if [p.casefold() for p in n.split(".")][-len(wanted):] == wanted]
    return min(found, key=len) if found else None


def bind_tables(query: str, dialect: str | None, names: list[str], *, db: str | None = None) -> BoundQuery:
    """Parse the query and point each stored table it reads at one of `names` (see the module's
    docstring), as `key` or `db.key`. A table that is none of them: NotChecked."""
    select = select_of(query, dialect)
    ctes = {cte.alias_or_name.casefold() for cte in select.find_all(exp.CTE)}
    keys: dict[str, str] = {}
    for table in list(select.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            raise NotChecked(f"it reads a table function ({table.sql(dialect=dialect)[:80]})")
        parts = [p.name for p in table.parts if p.name]
        if len(parts) == 1 and parts[0].casefold() in ctes:
            continue
        name = dataset_for(parts, names)
        if name is None:
            raise NotChecked(f"it reads {'.'.join(parts)}, which is none of the datasets its lineage names")
        key = next((k for k, n in keys.items() if n == name), None) or f"t{len(keys) + 1}"
        keys[key] = name
        alias = table.alias or parts[-1]
        table.replace(exp.Table(this=exp.to_identifier(key), db=exp.to_identifier(db) if db else None,
                                alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return BoundQuery(select, keys)


def sql_type(type_name: str, dialect: str | None = None) -> exp.DataType:
    """A warehouse's type name (from a schema facet) as sqlglot's type; UNKNOWN when it is not one."""
    text = (type_name or "").strip()
    if not text:
        return exp.DataType.build("unknown")
    try:
        return exp.DataType.build(text, dialect=dialect)
    except (SqlglotError, ValueError):
        try:
            return exp.DataType.build(text, dialect="postgres")
        except (SqlglotError, ValueError):
            return exp.DataType.build("unknown")


@dataclass
class TypeCheck:
    """`ok`: True when every use still type-checks and nothing passes the change on; False
    when an expression fails (`problems`: each with the error); None when undecided."""

    ok: bool | None
    reason: str
    problems: list[str] = field(default_factory=list)
    # Every use type-checks but these result columns change type ({column: new type}):
    # the job itself works; whoever reads them is judged where the change reaches them.
    passes_on: dict[str, str] = field(default_factory=dict)


def _type(node: exp.Expr) -> exp.DataType:
    return node.type or exp.DataType.build("unknown")


def _is(node: exp.Expr, kinds) -> bool:
    return _type(node).this in kinds


def _literal_text(node: exp.Expr) -> bool:
    """A quoted literal: PostgreSQL types it from what it meets ('5' = 5 works)."""
    return isinstance(node, exp.Literal) and node.is_string


def _name(t: exp.DataType) -> str:
    return t.sql(dialect="postgres").lower()


def _problem(node: exp.Expr, operands: list[exp.Expr]) -> tuple[str | None, str | None]:
    """(the error it would raise, or None; why it is undecided, or None) for one expression
    an operand of which changed type."""
    shown = node.sql(dialect="postgres")[:120]
    if isinstance(node, ARITHMETIC):
        left, right = node.left, node.right
        for side in (left, right):
            if (_is(side, TEXT) and not _literal_text(side)) or _is(side, {_T.BOOLEAN}):
                op = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "IntDiv": "/", "Mod": "%", "Pow": "^"}[type(node).__name__]
                return (f"{shown}: arithmetic on {_name(_type(side))}: operator does not exist: "
                        f"{_name(_type(left))} {op} {_name(_type(right))}"), None
        stamps = exp.DataType.TEMPORAL_TYPES - {_T.DATE, _T.DATE32}
        if (_is(left, stamps) and _is(right, NUMBER)) or (_is(right, stamps) and _is(left, NUMBER)):
            return (f"{shown}: arithmetic on a timestamp and a number: operator does not exist: "
                    f"{_name(_type(left))} {type(node).__name__.lower()} {_name(_type(right))}"), None
        return None, None
    if isinstance(node, (*COMPARISON, exp.In)):
        pairs = [(node.left, node.right)] if isinstance(node, COMPARISON) else \
            [(node.this, e) for e in node.expressions]
        for one, other in pairs:
            # A quoted literal takes the other side's type, and PostgreSQL converts it when it plans.
            for side, literal in ((one, other), (other, one)):
                if _literal_text(literal) and not _literal_text(side):
                    refused = _refused_literal(literal.name, _type(side))
                    if refused:
                        return f"{shown}: {refused}", None
        for one, other in (pair for left_right in pairs for pair in (left_right, left_right[::-1])):
            if _literal_text(one) or _literal_text(other) or isinstance(other, exp.Null):
                continue
            textual = _is(one, TEXT) or _is(one, {_T.BOOLEAN})
            if textual and (_is(other, NUMBER) or (_is(one, TEXT) and _is(other, TEMPORAL))):
                what = "a number" if _is(other, NUMBER) else "a date"
                return (f"{shown}: comparison of {_name(_type(one))} with {what}: operator does not exist: "
                        f"{_name(_type(node.left))} {_op(node)} "
                        f"{_name(_type(node.right))}"), None
        return None, None
    date_function = isinstance(node, DATE_FUNCTIONS) or (
        isinstance(node, exp.Anonymous) and node.name.casefold() in DATE_NAMES)
    if date_function:
        for operand in operands:
            if _is(operand, TEXT) and not _literal_text(operand):
                name = node.sql_name().lower() if not isinstance(node, exp.Anonymous) else node.name.lower()
                return (f"{shown}: a date function on {_name(_type(operand))}: function {name}(…, "
                        f"{_name(_type(operand))}) does not exist"), None
        return None, None
    if isinstance(node, NUMERIC_AGGREGATES):
        for operand in operands:
            if _is(operand, {_T.BOOLEAN}) or (_is(operand, TEXT) and not _literal_text(operand)):
                name = node.sql_name().lower()
                return f"{shown}: {name} of a {_name(_type(operand))}: function {name}({_name(_type(operand))}) does not exist", None
        return None, None
    if isinstance(node, exp.Cast):
        source, target = _type(node.this), node.to
        if target.this in TEXT or (source.this in NUMBER and target.this in NUMBER) or source.this == target.this:
            return None, None
        return None, f"{shown}: a cast from {_name(source)} to {_name(target)} may fail for some values"
    if isinstance(node, CONDITIONS):
        for operand in operands:
            if _category(_type(operand)) not in ("boolean", "unknown"):
                where = node.key.upper() if isinstance(node, exp.Where | exp.Having) else "a condition"
                return f"{shown[:80]}: argument of {where} must be type boolean, not type {_name(_type(operand))}", None
            if _category(_type(operand)) == "unknown":
                return None, f"{shown[:80]}: the type of a condition is not known"
        return None, None
    if isinstance(node, exp.Min | exp.Max):
        for operand in operands:
            if _is(operand, {_T.BOOLEAN}):
                name = node.sql_name().lower()
                return f"{shown}: {name} of a boolean: function {name}(boolean) does not exist", None
        return None, None
    if isinstance(node, exp.Between):
        for bound in (node.args.get("low"), node.args.get("high")):
            if bound is None:
                continue
            if _literal_text(bound):
                refused = _refused_literal(bound.name, _type(node.this))
                if refused:
                    return f"{shown}: {refused}", None
            elif _clash(_type(node.this), _type(bound)):
                return (f"{shown}: comparison of {_name(_type(node.this))} with {_name(_type(bound))}: operator does "
                        f"not exist"), None
        return None, None
    if isinstance(node, exp.If) and any(o is node.this for o in operands) and \
            _category(_type(node.this)) not in ("boolean", "unknown"):
        return f"{shown[:80]}: argument of CASE/WHEN must be type boolean, not type {_name(_type(node.this))}", None
    if isinstance(node, exp.Coalesce | exp.Nullif | exp.Case | exp.If):
        values = [node.this, *node.expressions] if isinstance(node, exp.Coalesce | exp.Nullif) else \
            [*(i.args.get("true") for i in node.args.get("ifs") or []), node.args.get("default")] \
            if isinstance(node, exp.Case) else [node.args.get("true"), node.args.get("false")]
        values = [v for v in values if v is not None and not isinstance(v, exp.Null)]
        typed = [v for v in values if not _literal_text(v)]
        for literal in (v for v in values if _literal_text(v)):
            for other in typed:
                refused = _refused_literal(literal.name, _type(other))
                if refused:
                    return f"{shown[:80]}: {refused}", None
        for a in typed:
            for b in typed:
                if _clash(_type(a), _type(b)):
                    return (f"{shown[:80]}: {node.key.upper()} types {_name(_type(a))} and {_name(_type(b))} "
                            "cannot be matched"), None
        return None, None
    if isinstance(node, exp.SetOperation):
        for left, right in zip(node.left.selects, node.right.selects, strict=False):
            if _clash(_type(left), _type(right)):
                return (f"{node.key.upper()} types {_name(_type(left))} and {_name(_type(right))} cannot be matched "
                        f"({left.alias_or_name})"), None
        return None, None
    if isinstance(node, exp.Window | exp.Ordered | exp.Alias):
        return None, None
    if isinstance(node, NEUTRAL):
        return None, None
    return None, f"{shown}: the checker does not know how {node.key.upper()} takes " + \
        ", ".join(sorted({_name(_type(o)) for o in operands}))


CONDITIONS = (exp.Where, exp.Having, exp.Not, exp.And, exp.Or)


def _category(t: exp.DataType) -> str:
    if t.this in TEXT:
        return "text"
    if t.this in NUMBER:
        return "number"
    if t.this == _T.BOOLEAN:
        return "boolean"
    if t.this in TEMPORAL:
        return "temporal"
    return "unknown"


def _clash(a: exp.DataType, b: exp.DataType) -> bool:
    """Two known kinds of value PostgreSQL will not compare or unite (text and a number, …)."""
    first, second = _category(a), _category(b)
    return "unknown" not in (first, second) and first != second


_BOOLEAN_WORDS = {"t", "f", "true", "false", "y", "n", "yes", "no", "on", "off", "1", "0"}


def _refused_literal(text: str, target: exp.DataType) -> str | None:
    """PostgreSQL's error for a quoted literal it cannot read as `target`, else None."""
    value = text.strip()
    kind = target.this
    if kind in NUMBER:
        try:
            float(value)
        except ValueError:
            return f'invalid input syntax for type {_name(target)}: "{text}"'
    elif kind == _T.BOOLEAN and value.lower() not in _BOOLEAN_WORDS:
        return f'invalid input syntax for type boolean: "{text}"'
    elif kind in TEMPORAL:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            if value.lower() not in {"now", "today", "tomorrow", "yesterday", "infinity", "-infinity", "epoch"}:
                return f'invalid input syntax for type {_name(target)}: "{text}"'
    return None


def _op(node: exp.Expr) -> str:
    return {"EQ": "=", "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "NullSafeEQ": "IS NOT DISTINCT FROM",
            "NullSafeNEQ": "IS DISTINCT FROM"}.get(type(node).__name__, node.key)


def _schema(columns: Mapping[str, Mapping[str, str]], dialect: str | None) -> dict:
    return {key: {name: sql_type(t, dialect).sql(dialect="postgres") if sql_type(t, dialect).this != _T.UNKNOWN
                  else "unknown" for name, t in cols.items()} for key, cols in columns.items()}


def check_retype(query: str, dialect: str | None, tables: Mapping[str, Mapping[str, str]], changed: str,
                 proposed: Mapping[str, str]) -> TypeCheck:
    """Does `query` still type-check once the columns `proposed` ({column: new type}) of the dataset
    named `changed` change type? `tables`: {dataset name: {column: current type}} of what it reads."""
    try:
        bound = bind_tables(query, dialect, list(tables))
    except NotChecked as exc:
        return TypeCheck(None, f"its SQL cannot be checked: {exc}")
    keys = {name: key for key, name in bound.datasets.items()}
    if changed not in keys:
        return TypeCheck(None, f"its SQL does not read {changed}")
    untyped = sorted(f"{name}.{c}" for key, name in bound.datasets.items() for c, t in tables[name].items()
                     if not (t or "").strip())
    current = {key: dict(tables[name]) for key, name in bound.datasets.items()}
    folded = {c.casefold(): c for c in current[keys[changed]]}
    new = {key: dict(cols) for key, cols in current.items()}
    for column, new_type in proposed.items():
        new[keys[changed]][folded.get(column.casefold(), column)] = new_type
    old_schema, new_schema = _schema(current, "postgres"), _schema(new, "postgres")
    try:
        qualified = qualify(bound.query, schema=old_schema, dialect="postgres", validate_qualify_columns=True,
                            quote_identifiers=False)
        before = annotate_types(qualified.copy(), schema=old_schema, dialect="postgres")
        after = annotate_types(qualified.copy(), schema=new_schema, dialect="postgres")
    except (SqlglotError, RecursionError, ValueError, TypeError, AttributeError, KeyError) as exc:
        return TypeCheck(None, f"its SQL cannot be typed: {str(exc).splitlines()[0][:200]}")
    pairs = list(zip(after.walk(), before.walk(), strict=False))
    changed_ids = {id(n) for n, o in pairs if _type(n).sql() != _type(o).sql()}
    if not changed_ids:
        return TypeCheck(True, "nothing it computes changes type")
    problems, undecided = [], []
    for node, _ in pairs:
        operands = [child for child in node.iter_expressions() if id(child) in changed_ids]
        if isinstance(node, exp.SetOperation) and any(
                id(p) in changed_ids for side in (node.left, node.right) for p in side.selects):
            operands = operands or [node]  # the branches' result columns meet here
        if not operands:
            continue
        error, doubt = _problem(node, operands)
        if error:
            problems.append(error)
        elif doubt:
            undecided.append(doubt)
    if problems:
        return TypeCheck(False, "; ".join(problems[:3]), problems)
    if undecided:
        return TypeCheck(None, "not decided: " + "; ".join(undecided[:3]))
    passed_on = [(p.alias_or_name, _type(p), _type(o)) for p, o in zip(after.selects, before.selects, strict=False)
                 if id(p) in changed_ids]
    if passed_on:
        return TypeCheck(None, "every use type-checks, but its result " + ", ".join(
            f"column {name} becomes {_name(t)} (was {_name(was)})" for name, t, was in passed_on)
            + ": the change passes on to whoever reads it",
            passes_on={name: t.sql(dialect="postgres") for name, t, _ in passed_on})
    if untyped:
        return TypeCheck(None, f"the types of {', '.join(untyped[:5])} are not known")
    return TypeCheck(True, "every use of " + ", ".join(sorted(proposed)) + " still type-checks and no result column "
                     "changes type")
