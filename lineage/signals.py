"""What lineage announces, for other apps to react to (the emitter never
imports its listeners).

`dataset_written` is sent once per output dataset of every stored RunEvent,
inside the ingest transaction, after the event's rows are written. Listeners do
database work only; network I/O goes through transaction.on_commit or a task.

Keyword arguments:
- dataset: registry.models.Dataset
- job: lineage Job instance; run: lineage Run instance
- event_type: "START" | "RUNNING" | "COMPLETE" | "FAIL" | "ABORT" | "OTHER"
- event_time: aware datetime of the event
- succeeded: bool, True when event_type == "COMPLETE"
- row_count: int | None, from the outputStatistics facet
- schema_facet: dict | None, the dataset's `schema` facet as sent
"""

from django.dispatch import Signal

dataset_written = Signal()
