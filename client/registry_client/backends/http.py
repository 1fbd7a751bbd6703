from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from registry_client.backends.base import SCHEMA_INDEX_KEY, Backend, IndexEntry
from registry_client.errors import RegistryClientError, StoreUnreachable

RESOLVED_HEADER = "X-Registry-Resolved"


class HttpBackend(Backend):
    """The registry service's REST API, with a bearer token.

    Uses only the standard library, so pipelines need no HTTP dependency.
    """

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 10.0,
                 report_resolved: bool = True):
        super().__init__()
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        # Tell the service which version a selector resolved to (one header on the
        # document fetch, nothing else), so owners see who still reads an old lane.
        self.report_resolved = report_resolved

    def describe(self) -> str:
        return f"registry API at {self.base_url}"

    def _get(self, path: str, accept: str = "application/json", headers: dict[str, str] | None = None) -> bytes:
        request = urllib.request.Request(f"{self.base_url}/api/{path.lstrip('/')}",
                                         headers={"Accept": accept, **(headers or {})})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - configured URL
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            if exc.code in (401, 403):
                raise RegistryClientError(f"{self.describe()} refused the request ({exc.code}): {detail}") from exc
            raise StoreUnreachable(f"{self.describe()} answered {exc.code} for {path}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise StoreUnreachable(f"Could not reach {self.describe()}: {exc}") from exc

    def get_json(self, path: str, params: dict[str, str] | None = None) -> dict:
        """GET an API path with query parameters; the JSON answer (errors as _get raises them)."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return json.loads(self._get(f"{path}{query}"))

    def _load_index(self, key: str) -> list[IndexEntry]:
        # One request answers for both indexes: keep both.
        data = json.loads(self._get("contracts/index/"))
        self._schemas = [IndexEntry.from_row(row) for row in data["contracts"]]
        self._specs = [IndexEntry.from_row(row) for row in data["specs"]]
        return self._schemas if key == SCHEMA_INDEX_KEY else self._specs

    def read_document(self, entry: IndexEntry, selector: str = "") -> bytes:
        name, version = urllib.parse.quote(entry.name), urllib.parse.quote(entry.version)
        headers = {RESOLVED_HEADER: f"selector={selector or entry.version}; version={entry.version}"} \
            if self.report_resolved else None
        return self._get(f"contracts/{name}/versions/{version}/document/?format=yaml", accept="application/yaml",
                         headers=headers)

    def read_odcs(self, entry: IndexEntry) -> bytes:
        # the service adds what it knows beyond the document: team members, SLOs, consumers
        name, version = urllib.parse.quote(entry.name), urllib.parse.quote(entry.version)
        return self._get(f"contracts/{name}/versions/{version}/?format=odcs", accept="application/yaml")

    def read_spec(self, entry: IndexEntry) -> bytes:
        name, version = urllib.parse.quote(entry.name), urllib.parse.quote(entry.version)
        return self._get(f"contracts/{name}/versions/{version}/spec/?format=yaml", accept="application/yaml")
