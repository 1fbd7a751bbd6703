"""Celery tasks of the lineage app (the beat entry is in registry/settings.py)."""

from __future__ import annotations

from lineage import partitions
from registry.celery import app


@app.task(name="lineage.create_raw_event_partitions", ignore_result=True)
def create_raw_event_partitions() -> list[str]:
    """The raw events' monthly partitions, made ahead (safe under two beats: lineage.partitions)."""
    return partitions.create_ahead()
