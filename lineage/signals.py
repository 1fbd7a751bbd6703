"""What lineage offers other apps, in one place (the emitter never imports its
listeners): the `dataset_written` announcement, and `dataset_flag`, a fact the
ingest fetches with each dataset for those listeners.

`dataset_written` is sent once per output dataset of every stored RunEvent,
inside the ingest transaction, after the event's rows are written. Listeners do
database work only; network I/O goes through transaction.on_commit or a task.
Take the keyword arguments you need and end with `**kwargs`: later ones may be
added.

Keyword arguments:
- dataset: registry.models.Dataset (id, namespace and name loaded, the rest
  on first access; a dataset known before the event also carries the flags
  registered with `dataset_flag`)
- job: lineage Job instance; run: lineage Run instance
- event_type: "START" | "RUNNING" | "COMPLETE" | "FAIL" | "ABORT" | "OTHER"
- event_time: aware datetime of the event
- succeeded: bool, True when event_type == "COMPLETE"
- facets: dict, the output dataset's `facets` as sent ({} when none were sent)
- output_facets: dict, the output dataset's `outputFacets` as sent ({} when
  none were sent)
- row_count: int | None, `output_facets["outputStatistics"]["rowCount"]` when
  it is an integer (a count sent as a string is not trusted)
- schema_facet: dict | None, `facets["schema"]` when it is an object
- sent_by: who sent the event (a user, or a team token's principal; loaded on
  first access), or None when the registry stored it itself
- token: the registry.models.ApiToken that sent it (loaded on first access,
  with its user and team), or None

`facets` and `output_facets` are the event's own objects, shared by every
listener: read them, do not change them. A listener that needs another facet
reads it from them, so that neither lineage nor the other listeners change.
"""

from __future__ import annotations

from django.apps import apps
from django.db.models import QuerySet
from django.dispatch import Signal

dataset_written = Signal()

# `quality_reported` is sent once per (dataset, event) whose `dataQualityMetrics`
# or `dataQualityAssertions` facet was stored as a `QualityCheck` (a RunEvent's
# input or output, or a DatasetEvent), inside the same transaction, after the
# row is written. It is sent for START and RUNNING events too: a listener decides
# what a partial run means (`event_type`). The row is written with `judged`
# false: a listener that judges results after the commit reads them from the
# rows still waiting (`quality_results_waiting()`) and marks
# them judged, rather than keeping a copy of each result in a table of its own.
#
# Keyword arguments:
# - dataset_id: int
# - run_uuid: UUID | None (None for a DatasetEvent)
# - job_namespace, job_name: str ("" for a DatasetEvent)
# - event_type: "START" | "RUNNING" | "COMPLETE" | "FAIL" | "ABORT" | "OTHER" | "" (a DatasetEvent)
# - event_time: aware datetime of the event
# - assertions: list of the facet's assertion objects (dicts), as sent
# - metrics: dict | None, the dataQualityMetrics facet's fields
quality_reported = Signal()


def quality_results_waiting() -> QuerySet:
    """The stored quality results (`QualityCheck` rows) that no listener has marked
    judged since their last write: a listener judges them, then sets `judged`
    (only on the rows whose `checked_at` it read: a later write waits again) or
    counts a failure in `judge_attempts`."""
    # By name: the listeners that import this module may not import lineage's models.
    return apps.get_model("lineage", "QualityCheck").objects.waiting_to_be_judged()


_dataset_flags: dict[str, str] = {}


def dataset_flag(name: str, sql: str) -> None:
    """A yes/no fact about a dataset that the ingest selects with each dataset
    row it fetches and sets as attribute `name` on the `dataset` it sends with
    `dataset_written`, so that a listener can skip a query of its own. `sql` is
    an SQL expression over the dataset's row, aliased `t`. Register it in
    AppConfig.ready, before the first event is stored; an instance without the
    attribute means unknown."""
    _dataset_flags[name] = sql


def dataset_flags() -> dict[str, str]:
    return dict(_dataset_flags)
