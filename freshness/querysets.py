from __future__ import annotations

from datetime import datetime

from django.db import connection, models

from freshness.constants import STATUS_ORDER, FreshnessStatus
from registry.keyset import Segment

# The status view's totals count this many datasets of a status at most; past it they say "1,000+".
STATUS_COUNT_CAP = 1000

# The status view's totals, each counted up to a cap (%s after a status: cap + 1), in one
# statement (PostgreSQL and the demo's SQLite alike):
# - a status with an SLO (stale, warning, unknown, fresh): the first rows of that status
#   in the (status, last write) index, freshness_status_write_idx: at most cap + 1 entries;
# - no SLO: the datasets with no freshness row, or a row of status no_slo (written, no SLO),
#   walked by primary key, each probed in the freshness rows' primary key, until cap + 1
#   are found: cap + 1 rows when most datasets have no SLO (as in every large estate), up
#   to a walk of the datasets when nearly all of them have one.
# A total over every row (GROUP BY status, COUNT of the datasets) read the whole of both
# tables on each view: 1M datasets, 1M rows.
CAPPED_STATUS_COUNTS = """
SELECT (SELECT count(*) FROM (SELECT 1 FROM freshness_datasetfreshness WHERE status = %s LIMIT %s) AS capped),
       (SELECT count(*) FROM (SELECT 1 FROM freshness_datasetfreshness WHERE status = %s LIMIT %s) AS capped),
       (SELECT count(*) FROM (SELECT 1 FROM freshness_datasetfreshness WHERE status = %s LIMIT %s) AS capped),
       (SELECT count(*) FROM (SELECT 1 FROM freshness_datasetfreshness WHERE status = %s LIMIT %s) AS capped),
       (SELECT count(*) FROM (SELECT 1 FROM registry_dataset d
                               WHERE NOT EXISTS (SELECT 1 FROM freshness_datasetfreshness f
                                                  WHERE f.dataset_id = d.id AND f.status <> %s)
                               LIMIT %s) AS capped)
"""


def status_counts(cap: int = STATUS_COUNT_CAP) -> dict[str, tuple[int, bool]]:
    """{status: (datasets of that status up to `cap`, whether there are more)} for every
    status of STATUS_ORDER: one query whose cost follows the cap, not the registry."""
    statuses = [*(s for s in STATUS_ORDER if s != FreshnessStatus.NO_SLO), FreshnessStatus.NO_SLO]
    with connection.cursor() as cursor:
        cursor.execute(CAPPED_STATUS_COUNTS, [value for status in statuses for value in (str(status), cap + 1)])
        found = cursor.fetchone()
    return {status: (min(n, cap), n > cap) for status, n in zip(statuses, found, strict=True)}


class DatasetFreshnessQuerySet(models.QuerySet):
    def with_slo(self) -> DatasetFreshnessQuerySet:
        """Rows of datasets with a freshness SLO (every written dataset has a row; most
        have no SLO). `freshness_slo_idx` holds these alone."""
        return self.filter(max_age__isnull=False)

    def due(self, now: datetime) -> DatasetFreshnessQuerySet:
        """Rows whose next deadline has passed: their status may have changed."""
        return self.filter(next_check_at__lte=now)

    def needing_a_task(self, until: datetime) -> DatasetFreshnessQuerySet:
        """Deadlines before `until` that have no deadline task scheduled for them yet."""
        return (self.filter(next_check_at__lte=until)
                .exclude(task_eta__isnull=False, task_eta=models.F("next_check_at")))


class TransitionQuerySet(models.QuerySet):
    def for_dataset(self, dataset) -> TransitionQuerySet:
        return self.filter(dataset=dataset)


# The status view's columns a reader may sort by: ?sort=NAME, or -NAME for the reverse.
STATUS_VIEW_SORTS = {
    "since": ("freshness__status_since",),
    "team": ("owner_team__name",),
    "dataset": ("name",),
    "last_write": ("freshness__last_write_at",),
    "deadline": ("freshness__next_check_at",),
}
STATUS_VIEW_DEFAULT_SORT = "since"


def needing_attention(datasets, statuses, *, team_id: int | None = None,
                      sort: str = STATUS_VIEW_DEFAULT_SORT) -> list[Segment]:
    """The datasets whose freshness is one of `statuses` now (stale, warning...), of one
    owner team when `team_id` is given, ordered by a STATUS_VIEW_SORTS key (longest stale
    first by default: the oldest `since`, then by dataset id), then by namespace and name. Unknown keys fall
    back to the default; missing values (never written, no deadline, no team) sort last
    either way, by namespace and name.

    As keyset segments (registry.keyset.segmented_page): the rows with a value, then the
    rows without one, so that a page seeks from the row before it rather than skipping
    every row before it. (`-KEY` reverses the names of equal values too: one direction
    seeks.)"""
    key = sort.removeprefix("-")
    if key not in STATUS_VIEW_SORTS:
        key, sort = STATUS_VIEW_DEFAULT_SORT, STATUS_VIEW_DEFAULT_SORT
    (column,) = STATUS_VIEW_SORTS[key]
    rows = datasets.filter(freshness__status__in=list(statuses)).select_related("freshness", "owner_team", "owner")
    if team_id is not None:
        rows = rows.filter(owner_team_id=team_id)
    if key == STATUS_VIEW_DEFAULT_SORT:
        # Equal times (one sweep's transitions) by dataset id, from the freshness row as its
        # partial index holds them: the default page then seeks, never sorts the stale rows.
        ordered = (column, "freshness__dataset_id")
    else:
        ordered = tuple(dict.fromkeys((column, "namespace", "name")))
    if sort.startswith("-"):
        ordered = tuple(f"-{name}" for name in ordered)
    return [Segment(rows.filter(**{f"{column}__isnull": False}), ordered),
            Segment(rows.filter(**{f"{column}__isnull": True}), ("namespace", "name"))]
