"""Which Marquez resource a /api/v1/namespaces/… path names.

Marquez's clients percent-encode the namespace and the name as one path
segment each (`postgres%3A%2F%2Fdb%3A5432`), but Django — like every WSGI
server — hands views the decoded path, where a namespace's slashes look like
the path's own. So the path is read from its end: the namespace runs up to its
first `/datasets` or `/jobs` segment, a dataset name is what follows (less a
trailing `/versions[/<uuid>]`), a job name likewise (less a trailing `/runs`
or `/versions[/<uuid>]`).
A namespace holding a `/datasets` or `/jobs` segment of its own cannot be
addressed; one with slashes anywhere else (`s3://bucket/warehouse`) can.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_COLLECTION = re.compile(r"^(?P<namespace>.+?)/(?P<collection>datasets|jobs)(?:/(?P<tail>.+))?$")
_VERSION = re.compile(r"^(?P<name>.+)/versions/(?P<version>[0-9a-fA-F-]{32,36})$")


class Route(NamedTuple):
    resource: str  # namespace | datasets | dataset | dataset_versions | dataset_version | jobs | job | job_runs
    #                | job_versions | job_version
    namespace: str
    name: str | None = None
    version: str | None = None


def route(rest: str) -> Route:
    """The resource that `rest` (the decoded path after `namespaces/`, with no
    trailing slash) names."""
    match = _COLLECTION.match(rest)
    if match is None:
        return Route("namespace", rest)
    namespace, collection, tail = match["namespace"], match["collection"], match["tail"]
    if tail is None:
        return Route(collection, namespace)
    kind = "job" if collection == "jobs" else "dataset"
    if kind == "job" and tail.endswith("/runs") and len(tail) > len("/runs"):
        return Route("job_runs", namespace, tail[: -len("/runs")])
    version = _VERSION.match(tail)
    if version:
        return Route(f"{kind}_version", namespace, version["name"], version["version"])
    if tail.endswith("/versions") and len(tail) > len("/versions"):
        return Route(f"{kind}_versions", namespace, tail[: -len("/versions")])
    return Route(kind, namespace, tail)
