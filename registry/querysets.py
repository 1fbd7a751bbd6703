from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from django.db import connections, models
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Count,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce, Concat

from registry.jobs import JobTeam
from registry.usage import ColumnRead, NamespaceTeam

SEARCH_MAX_CHARS = 200
_WORD = re.compile(r"[^\W_]")  # a letter or a digit


class _WordsMatch(Func):
    """`registry_search_words(namespace, name, description) @@ registry_search_query(text)`,
    written as the index (migration registry.0018) is, so PostgreSQL reads that index,
    after a cheap test that each word is in the text."""

    output_field = BooleanField()

    def __init__(self, text: str):
        super().__init__(F("namespace"), F("name"), F("description"), Value(text))

    def as_sql(self, compiler, connection, **extra_context):
        (namespace, p1), (name, p2), (description, p3), (text, p4) = (
            compiler.compile(expression) for expression in self.get_source_expressions())
        # The LIKE ALL is a cheap necessary condition PostgreSQL tests first on the rows it
        # walks (migration registry.0018); the @@ is what the words index answers.
        return (f"(lower(concat_ws(' ', left({namespace}, 2000), left({name}, 2000), left({description}, 2000)))"
                f" LIKE ALL (registry_search_patterns({text}))"
                f" AND registry_search_words({namespace}, {name}, {description}) @@ registry_search_query({text}))",
                [*p1, *p2, *p3, *p4, *p1, *p2, *p3, *p4])


class DatasetQuerySet(models.QuerySet):
    def unowned(self) -> DatasetQuerySet:
        return self.filter(owner_team__isnull=True)

    def matching(self, text: str) -> DatasetQuerySet:
        """The datasets whose namespace, name or description holds `text`'s words: the API's
        `?search=` and the home page's search box both read this.

        On PostgreSQL each word of `text` (a run of letters and digits, any case) must be
        inside a word of the dataset: the last one anywhere in it (`rders` finds
        `orders_daily`), the others at its end or whole (`orders_dai` finds
        `analytics.orders_daily_2024`). Every substring of a dataset's namespace, name or
        description is such a query, so what a substring search found this finds; it also
        finds words apart (`orders 2024`). The words are looked up in the GIN index of
        every word's suffixes (migration registry.0018): the cost follows the matches,
        not the world. Text without a letter or digit (`%`, `_`, quotes) matches nothing;
        only its first SEARCH_MAX_CHARS characters count. SQLite (the demo) keeps a
        substring scan."""
        text = text[:SEARCH_MAX_CHARS]
        if connections[self.db].vendor != "postgresql":
            return self.filter(Q(name__icontains=text) | Q(namespace__icontains=text) | Q(description__icontains=text))
        if not _WORD.search(text):
            return self.none()
        return self.filter(_WordsMatch(text))

    def for_listing(self) -> DatasetQuerySet:
        """Owner and consumer count in the same query, whatever the number of rows.

        The count is a subquery per row, not a JOIN … GROUP BY: grouping would aggregate
        every dataset before the page's LIMIT applied (seconds at a million datasets);
        a subquery runs for the page's rows only."""
        consumers = self.model._meta.get_field("consumers").related_model.objects.filter(dataset=OuterRef("pk"))
        count = consumers.order_by().values("dataset").annotate(n=Count("pk")).values("n")
        return self.select_related("owner_team", "owner").annotate(
            consumer_count=Coalesce(Subquery(count[:1]), 0, output_field=IntegerField()))

    def labels_of(self, pks: Iterable[int], *, batch: int = 5000) -> dict[int, tuple[str, str, str]]:
        """{pk: (namespace, name, owner team's slug or "")} of those datasets: the labels of
        per-dataset series (/metrics), one query per `batch` pks.

        The pks go to the database as a list, after the caller read its own rows (the SLOs,
        the contract statuses): joined to those rows instead, PostgreSQL hashes the whole
        dataset table, a scan of every dataset for the few that have an SLO; a list is
        looked up in the primary key's index."""
        pks = list(pks)
        batch = min(batch, connections[self.db].features.max_query_params or batch)  # SQLite (the demo): 999
        found: dict[int, tuple[str, str, str]] = {}
        for start in range(0, len(pks), batch):
            rows = self.filter(pk__in=pks[start:start + batch]).values_list(
                "pk", "namespace", "name", "owner_team__slug").order_by()
            found.update((pk, (namespace, name, team or "")) for pk, namespace, name, team in rows)
        return found

    def with_unregistered_readers(self, now: datetime | None = None) -> DatasetQuerySet:
        """Annotate `unregistered_readers`: how many jobs read each dataset now (within
        COLUMN_USAGE_WINDOW) whose team is neither a registered consumer nor the owner
        team, or is unknown. A job's team is decided as registry.usage.attribute decides it
        (the job's ownership rules, its namespace's team, the posting token's team); a job with any evidence
        from a registered team counts as registered. One subquery, no query of its own."""
        consumer_teams = self.model._meta.get_field("consumers").related_model.objects.filter(
            dataset=OuterRef("dataset")).values("team")
        attributed = Coalesce(
            Subquery(JobTeam.objects.filter(job_namespace=OuterRef("job_namespace"), job_name=OuterRef("job_name"))
                     .values("team_id")[:1]),
            Subquery(NamespaceTeam.objects.filter(namespace=OuterRef("job_namespace")).values("team_id")[:1]),
            "token_team_id", output_field=BigIntegerField())
        registered_evidence = (
            ColumnRead.objects.current(now)
            .filter(dataset=OuterRef("dataset"), job_namespace=OuterRef("job_namespace"), job_name=OuterRef("job_name"))
            .annotate(reader_team=attributed)
            .filter(Q(reader_team=OuterRef(OuterRef("owner_team"))) | Q(reader_team__in=consumer_teams)))
        jobs = (ColumnRead.objects.current(now).filter(dataset=OuterRef("pk")).filter(~Exists(registered_evidence))
                .order_by().values("dataset")
                .annotate(n=Count(Concat("job_namespace", Value(" "), "job_name"), distinct=True)).values("n"))
        return self.annotate(unregistered_readers=Coalesce(Subquery(jobs[:1]), 0, output_field=IntegerField()))


class TeamQuerySet(models.QuerySet):
    def of_user(self, user) -> TeamQuerySet:
        if not getattr(user, "is_authenticated", False):
            return self.none()
        team_ids = getattr(user, "principal_team_ids", None)
        if team_ids is not None:  # a team-owned API token
            return self.filter(pk__in=team_ids)
        return self.filter(members=user)


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)
