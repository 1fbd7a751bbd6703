"""What freshness adds to the core's pages: a section on the dataset page and
the dataset list's table, most urgent first; and the SLOs the core asks for on behalf of
exports (registry.hooks.service_levels_of)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef
from django.template.loader import render_to_string
from django.utils import timezone

from freshness.constants import STATUS_CSS, STATUS_ORDER, FreshnessStatus
from freshness.evaluation import can_edit_slo
from freshness.forms import SLOForm
from freshness.models import DatasetFreshness
from registry.hooks import (
    DatasetStatus,
    dataset_list_table,
    dataset_page_section,
    dataset_service_levels,
    dataset_statuses,
)
from registry.keyset import Segment
from registry.pagination import segmented_page_of

TIMELINE_LENGTH = 20


@dataset_page_section(order=30)
def freshness_section(request, dataset) -> str:
    row = DatasetFreshness.objects.filter(dataset=dataset).first()
    transitions = list(dataset.freshness_transitions.all()[:TIMELINE_LENGTH])
    form = None
    if can_edit_slo(request.user, dataset):
        form = SLOForm(initial={
            "max_age": row.max_age if row else None, "warn_after": row.warn_after if row else None,
            "empty_write_counts": row.empty_write_counts if row else False,
        })
    now = timezone.now()
    return render_to_string("freshness/_section.html", {
        "dataset": dataset, "row": row, "status": row.status if row else FreshnessStatus.NO_SLO,
        "status_css": STATUS_CSS.get(row.status if row else FreshnessStatus.NO_SLO, ""),
        "age": row.age_at(now) if row else None, "transitions": transitions, "form": form,
    }, request=request)


def most_urgent_first(datasets) -> list[Segment]:
    """Stale first, then warning, unknown, fresh and no SLO; within a status, the
    oldest last write (the most urgent) first, never-written last, by name.

    One keyset segment a status (registry.keyset.segmented_page), so that no page sorts
    the whole list: a written status seeks through the freshness rows' (status, last
    write) index, a never-written one walks the datasets' (namespace, name) index. By
    the rule (freshness.rules) stale, warning and fresh rows always have a write and
    unknown ones never do. The no-SLO datasets never written are one segment, by name,
    whether a freshness row says so (an SLO removed before any write) or no row does:
    they look alike on the page, and a segment of the former alone, rare, would walk
    the whole index to find it empty."""
    rows = datasets.select_related("freshness")
    # Equal last writes (a run's outputs, an import) by dataset id, not name, both taken from
    # the freshness row: its index holds that order, and a page's seek compares its columns
    # alone, so a page among thousands of equal writes sorts none (with the dataset's own id
    # in the comparison, PostgreSQL joined every dataset first).
    written, named = ("freshness__last_write_at", "freshness__dataset_id"), ("namespace", "name")
    segments = []
    for status in STATUS_ORDER:
        of_status = rows.filter(freshness__status=status)
        if status == FreshnessStatus.UNKNOWN:
            segments.append(Segment(of_status, named))
        elif status == FreshnessStatus.NO_SLO:
            segments.append(Segment(of_status.filter(freshness__last_write_at__isnull=False), written))
            # NOT EXISTS, not "no row OR a never-written no-SLO row" over the LEFT JOIN: PostgreSQL
            # estimates that OR at one row, then sorts every dataset rather than walk the index.
            other_rows = DatasetFreshness.objects.filter(dataset=OuterRef("pk")).exclude(
                status=status, last_write_at__isnull=True)
            segments.append(Segment(rows.filter(~Exists(other_rows)), named))
        else:
            segments.append(Segment(of_status, written))
    return segments


@dataset_list_table
def by_urgency(request, datasets) -> str:
    """One page of the datasets in one table, most urgent first (`most_urgent_first`),
    with each one's status, age and deadline. One query a status the page spans (one,
    on most pages), whatever the rows and however deep the page."""
    now = timezone.now()
    page = segmented_page_of(request, most_urgent_first(datasets))
    seen: set[str] = set()
    for dataset in page.object_list:
        row = row_of(dataset)
        dataset.fresh_row = row
        dataset.fresh_age = row.age_at(now) if row else None
        dataset.fresh_status = row.status if row else FreshnessStatus.NO_SLO
        dataset.fresh_css = STATUS_CSS.get(dataset.fresh_status, "")
        # The overview links to the first dataset of each status (/#status-stale).
        dataset.first_of_status = dataset.fresh_status not in seen
        seen.add(dataset.fresh_status)
    return render_to_string("freshness/_dataset_groups.html", {"page": page}, request=request)


def row_of(dataset) -> DatasetFreshness | None:
    """The dataset's freshness row, or None (no SLO and never written)."""
    try:
        return dataset.freshness
    except DatasetFreshness.DoesNotExist:
        return None


@dataset_service_levels
def freshness_slos(dataset_ids: list[int]) -> dict[int, dict]:
    """The freshness SLO of each of the datasets that has one (one query)."""
    rows = DatasetFreshness.objects.filter(dataset_id__in=dataset_ids, max_age__isnull=False).values_list(
        "dataset_id", "max_age", "warn_after", "empty_write_counts")
    return {dataset_id: {"max_age": max_age, "warn_after": warn_after, "empty_write_counts": empty}
            for dataset_id, max_age, warn_after, empty in rows}


@dataset_statuses
def freshness_statuses(dataset_ids: list[int]) -> dict[int, list[DatasetStatus]]:
    """Each dataset's freshness status, for those with an SLO (one query)."""
    rows = DatasetFreshness.objects.filter(dataset_id__in=dataset_ids).exclude(status=FreshnessStatus.NO_SLO)
    return {row.dataset_id: [DatasetStatus(
        kind="freshness", text=FreshnessStatus(row.status).label, css=STATUS_CSS.get(row.status, ""),
        anchor="freshness", title=f"Freshness: {FreshnessStatus(row.status).label.lower()} since "
                                  f"{row.status_since:%Y-%m-%d %H:%M} UTC")]
        for row in rows.only("dataset_id", "status", "status_since")}
