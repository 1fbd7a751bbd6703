"""A dataset's health now, as every app knows it (registry.hooks.dataset_statuses and the
list badges), said the same on the dataset page and the lineage graph."""

from __future__ import annotations

from registry.hooks import (
    DatasetStatus,
    annotate_dataset_list,
    dataset_badges,
    list_annotations,
    status_providers,
)
from registry.models import Dataset


def statuses_of(dataset_ids) -> dict[int, list[DatasetStatus]]:
    """Each dataset's statuses: the providers' first, then its badges (one query for all
    the badges, whatever the number of datasets)."""
    ids = list(dataset_ids)
    found: dict[int, list[DatasetStatus]] = {pk: [] for pk in ids}
    if not ids:
        return found
    for fn in status_providers():
        for dataset_id, statuses in fn(ids).items():
            found.setdefault(dataset_id, []).extend(statuses)
    if list_annotations():
        for dataset in annotate_dataset_list(Dataset.objects.filter(pk__in=ids).only("pk")):
            found[dataset.pk].extend(DatasetStatus(kind=b.anchor or b.css, text=b.text, css=b.css, anchor=b.anchor,
                                                   title=b.title) for b in dataset_badges(dataset))
    return found
