"""Marquez's objects, built from the registry's rows.

Marquez's OpenAPI document types no field as nullable, so a value the registry
does not know is left out rather than sent as null (Marquez's UI reads a
missing key as it reads null).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from lineage.models import RunState

# Marquez's run states: our START and RUNNING are its RUNNING.
RUN_STATES = {
    RunState.NEW: "NEW", RunState.START: "RUNNING", RunState.RUNNING: "RUNNING",
    RunState.COMPLETE: "COMPLETED", RunState.FAIL: "FAILED", RunState.ABORT: "ABORTED",
}
DATASET_TYPE = "DB_TABLE"
# The namespace of the uuid5 job versions: fixed, so a job's version never changes.
JOB_VERSIONS = uuid.UUID("5a0b7a4e-2f0e-5d6c-9a51-0c3f6d1e8b27")


def iso(moment: datetime | None) -> str | None:
    """An RFC 3339 time in UTC, written as PostgreSQL's JSON functions write it
    (no trailing zeros in the fraction), so the graph's SQL-built nodes and
    these Python-built objects say the same time the same way."""
    if moment is None:
        return None
    text = moment.astimezone(UTC).isoformat()
    if "." in text:
        whole, rest = text.split(".", 1)
        fraction, zone = rest[:6].rstrip("0"), rest[6:]
        text = f"{whole}.{fraction}{zone}" if fraction else f"{whole}{zone}"
    return text


def job_version(namespace: str, name: str) -> str:
    """A job's one version: the registry keeps no job versions (see the package doc)."""
    return str(uuid.uuid5(JOB_VERSIONS, f"{namespace}:{name}"))


def job_type(facets: dict | None) -> str:
    """BATCH, or STREAM when the jobType facet says the job is streaming."""
    processing = ((facets or {}).get("jobType") or {}).get("processingType")
    return "STREAM" if processing == "STREAMING" else "BATCH"


def _present(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if value is not None}


def fields_of(columns: dict[str, str] | None) -> list[dict[str, Any]]:
    """The dataset's fields from the latest schema facet seen ({column: type})."""
    return [{"name": name, "type": kind, "tags": []} for name, kind in (columns or {}).items()]


def dataset(*, namespace: str, name: str, description: str, created_at: datetime, columns: dict | None,
            owner_team: str | None, latest_write_run: uuid.UUID | None, latest_write_at: datetime | None,
            last_modified_at: datetime | None) -> dict[str, Any]:
    """Marquez's Dataset. `latest_write_*`: the newest run that wrote it (its
    version); `last_modified_at`: when the newest COMPLETE run writing it ended."""
    updated = max(created_at, latest_write_at) if latest_write_at else created_at
    return _present({
        "id": {"namespace": namespace, "name": name}, "type": DATASET_TYPE, "name": name, "physicalName": name,
        "createdAt": iso(created_at), "updatedAt": iso(updated), "namespace": namespace, "sourceName": namespace,
        "fields": fields_of(columns), "tags": [], "lastModifiedAt": iso(last_modified_at),
        "description": description, "facets": {},
        "currentVersion": str(latest_write_run) if latest_write_run else None, "deleted": False,
        "ownerTeam": owner_team,
    })


def run(*, run_uuid: uuid.UUID, state: str, created_at: datetime, state_at: datetime, started_at: datetime | None,
        ended_at: datetime | None, facets: dict | None, with_facets: bool = True) -> dict[str, Any]:
    """Marquez's Run (its IncompleteRun part). The latest run shown with a job
    leaves its facets out (`with_facets`): read them at /jobs/runs/{id}."""
    nominal = (facets or {}).get("nominalTime") or {}
    duration = int((ended_at - started_at).total_seconds() * 1000) if started_at and ended_at else None
    payload = _present({
        "id": str(run_uuid), "createdAt": iso(created_at), "updatedAt": iso(state_at),
        "nominalStartTime": nominal.get("nominalStartTime"), "nominalEndTime": nominal.get("nominalEndTime"),
        "state": RUN_STATES.get(state, "RUNNING"), "startedAt": iso(started_at), "endedAt": iso(ended_at),
        "durationMs": duration, "args": {},
    })
    if with_facets:
        payload["facets"] = facets or {}
    return payload


def dataset_version_id(namespace: str, name: str, run_uuid: uuid.UUID) -> dict[str, str]:
    return {"namespace": namespace, "name": name, "version": str(run_uuid)}


def job(*, namespace: str, name: str, created_at: datetime, updated_at: datetime, facets: dict | None,
        inputs: list[dict], outputs: list[dict], latest_run: dict | None, with_facets: bool = True) -> dict[str, Any]:
    """Marquez's Job. `inputs`/`outputs`: every dataset it was seen reading/writing."""
    facets = facets or {}
    payload = _present({
        "id": {"namespace": namespace, "name": name}, "type": job_type(facets), "name": name, "simpleName": name,
        "createdAt": iso(created_at), "updatedAt": iso(updated_at), "namespace": namespace,
        "inputs": inputs, "outputs": outputs,
        "location": (facets.get("sourceCodeLocation") or {}).get("url"),
        "description": (facets.get("documentation") or {}).get("description"),
        "latestRun": latest_run, "currentVersion": job_version(namespace, name),
    })
    if with_facets:
        payload["facets"] = facets
    return payload


def namespace(*, name: str, created_at: datetime, updated_at: datetime, owner: str | None) -> dict[str, Any]:
    """Marquez's Namespace; its owner is the team its jobs are mapped to, if any."""
    return _present({"name": name, "createdAt": iso(created_at), "updatedAt": iso(updated_at), "ownerName": owner})
