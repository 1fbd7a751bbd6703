"""The consumer-facing registry.

    from registry_client import Registry, REGISTRY

    registry = Registry.from_url("s3://lakehouse/registry")      # or a directory, or https://registry.example
    Model = registry.get_pandera_model("lab.analytics.cell_count")  # version="latest"
    validated = Model.validate(df)
    odcs = registry.get_odcs("lab.analytics.cell_count", "1.0")     # the version as an ODCS contract

Versions: a specific one ("1.0"), "latest" (semantic order; never a
pre-release or dev release) or None (every version, as a dict oldest first).
Published versions are immutable, so documents and rebuilt models are cached
per instance; `refresh()` re-reads the index to see newly published versions.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from registry_client.backends import Backend, HttpBackend, IndexEntry, LocalBackend, S3Backend
from registry_client.errors import InvalidContract, UnknownContract, UnknownVersion
from registry_client.identity import META_KEYS
from registry_client.odcs import to_odcs
from registry_client.pandera_models import build_model
from registry_client.preflight import PreflightAnswer, ask
from registry_client.resolution import latest_release, semantic_sort
from registry_client.safeyaml import YamlInputError, load_yaml

LATEST = "latest"
ENV_URL = "REGISTRY_URL"
ENV_TOKEN = "REGISTRY_TOKEN"  # noqa: S105 - the variable's name, not a secret
ENV_S3_ENDPOINT = "REGISTRY_S3_ENDPOINT_URL"
DEFAULT_URL = "var/contract-store"


class Registry:
    def __init__(self, backend: Backend):
        self.backend = backend
        self._documents: dict[tuple[str, str], dict] = {}
        self._specs: dict[tuple[str, str], dict] = {}
        self._models: dict[tuple[str, str], type] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, *, token: str | None = None, s3_endpoint_url: str | None = None) -> Registry:
        """`s3://bucket/prefix`, `http(s)://host` (the service's API) or a directory path."""
        parts = urlsplit(url)
        if parts.scheme == "s3":
            return cls(S3Backend(parts.netloc, parts.path, endpoint_url=s3_endpoint_url))
        if parts.scheme in ("http", "https"):
            return cls(HttpBackend(url, token))
        if parts.scheme in ("", "file"):
            return cls(LocalBackend(parts.path if parts.scheme == "file" else url))
        raise ValueError(f"unsupported registry URL {url!r}: use s3://bucket/prefix, https://host or a directory")

    @classmethod
    def from_env(cls) -> Registry:
        return cls.from_url(
            os.environ.get(ENV_URL) or DEFAULT_URL, token=os.environ.get(ENV_TOKEN) or None,
            s3_endpoint_url=os.environ.get(ENV_S3_ENDPOINT) or None,
        )

    def __repr__(self) -> str:
        return f"<Registry over {self.backend.describe()}>"

    def preflight(self, name: str, columns: list[str] | None = None, *, namespace: str | None = None,
                  contract: str | None = None) -> PreflightAnswer:
        """May I read dataset `name` now (only what touches `columns` counting)? Fails
        closed: `safe` is True only when the registry service says so; an unreachable
        service or a registry that is a contract store answers `safe=False`."""
        return ask(self.backend, name, namespace=namespace, columns=columns, contract=contract)

    def refresh(self) -> None:
        """Re-read the index (newly published versions become visible)."""
        self.backend.refresh()

    # --- listing ---------------------------------------------------------------

    def _entries(self, name: str) -> dict[str, IndexEntry]:
        entries = {e.version: e for e in self.backend.schema_index() if e.name == name}
        if not entries:
            raise UnknownContract(name, self.list_names())
        return entries

    def list_names(self) -> list[str]:
        return sorted({e.name for e in self.backend.schema_index()})

    def list_domains(self) -> list[str]:
        return sorted({e.name.split(".", 1)[0] for e in self.backend.schema_index()})

    def versions(self, name: str) -> list[str]:
        """Every published version of `name`, oldest first in semantic order."""
        return semantic_sort(self._entries(name))

    def resolve(self, name: str, version: str = LATEST) -> str:
        entries = self._entries(name)
        if version == LATEST:
            chosen = latest_release(entries)
            if chosen is None:
                raise UnknownVersion(name, version, semantic_sort(entries))
            return chosen
        if version not in entries:
            raise UnknownVersion(name, version, semantic_sort(entries))
        return version

    # --- documents ---------------------------------------------------------------

    def get_schema(self, name: str, version: str | None = LATEST) -> Any:
        """The contract document; with version=None a dict of every version's document."""
        if version is None:
            return {v: self.get_schema(name, v) for v in self.versions(name)}
        resolved = self.resolve(name, version)
        key = (name, resolved)
        if key not in self._documents:
            entry = self._entries(name)[resolved]
            raw = self.backend.read_document(entry)
            try:
                document = load_yaml(raw, max_bytes=None)
            except YamlInputError as exc:
                raise InvalidContract(f"{name} {resolved} in {self.backend.describe()} is not valid YAML: {exc}") from exc
            self._documents[key] = document
        return self._documents[key]

    def get_pandera_model(self, name: str, version: str | None = LATEST) -> Any:
        """A live Pandera DataFrameModel; with version=None a dict of every version's model."""
        if version is None:
            return {v: self.get_pandera_model(name, v) for v in self.versions(name)}
        resolved = self.resolve(name, version)
        key = (name, resolved)
        model = self._models.get(key)
        if model is None:
            document = self.get_schema(name, resolved)
            with self._lock:
                model = self._models.get(key) or build_model(document)
                self._models[key] = model
        return model

    def get_odcs(self, name: str, version: str | None = LATEST) -> Any:
        """The version as an Open Data Contract Standard (v3.1.0) contract, a dict; with
        version=None a dict of every version's. Over the service's API it carries what the
        registry knows (team members, freshness SLOs, consumers); from a store, what the
        document says (registry_client.odcs.to_odcs). docs/odcs.md has the mapping."""
        if version is None:
            return {v: self.get_odcs(name, v) for v in self.versions(name)}
        resolved = self.resolve(name, version)
        raw = self.backend.read_odcs(self._entries(name)[resolved])
        if raw is None:
            return to_odcs(self.get_schema(name, resolved))
        try:
            return load_yaml(raw, max_bytes=None)
        except YamlInputError as exc:
            raise InvalidContract(f"{name} {resolved} from {self.backend.describe()} is not valid ODCS YAML: {exc}") from exc

    def get_spec(self, name: str, version: str | None = LATEST) -> Any:
        """The integration spec of a contract version (None: every version's spec)."""
        entries = {e.version: e for e in self.backend.spec_index() if e.name == name}
        if version is None:
            return {v: self.get_spec(name, v) for v in semantic_sort(entries)}
        if not entries:
            if name not in self.list_names():
                raise UnknownContract(name, self.list_names())
            raise UnknownVersion(name, str(version), [])
        resolved = latest_release(entries) if version == LATEST else version
        if resolved is None or resolved not in entries:
            raise UnknownVersion(name, str(version), semantic_sort(entries))
        key = (name, resolved)
        if key not in self._specs:
            try:
                self._specs[key] = load_yaml(self.backend.read_spec(entries[resolved]), max_bytes=None)
            except YamlInputError as exc:
                raise InvalidContract(f"the spec of {name} {resolved} in {self.backend.describe()} is not valid YAML: {exc}") from exc
        return self._specs[key]

    # --- metadata ------------------------------------------------------------------

    def _latest_documents(self) -> Iterable[tuple[str, dict]]:
        for name in self.list_names():
            try:
                yield name, self.get_schema(name, LATEST)
            except UnknownVersion:
                continue  # only pre-releases published so far

    def find_by_meta(self, **filters: Any) -> list[str]:
        """Names whose latest version's meta matches every filter.

        A list-valued source_system matches when any member equals the filter;
        string comparisons ignore case (LIMS == lims)."""
        unknown = set(filters) - set(META_KEYS)
        if unknown:
            raise ValueError(f"unknown meta key(s) {', '.join(sorted(unknown))}; expected {', '.join(META_KEYS)}")
        found = []
        for name, document in self._latest_documents():
            meta = document.get("meta") or {}
            if all(_meta_matches(meta.get(key), wanted) for key, wanted in filters.items()):
                found.append(name)
        return found

    def get_tiers(self) -> list[str]:
        return sorted({t for _, d in self._latest_documents() if (t := (d.get("meta") or {}).get("tier"))})


def _fold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def _meta_matches(actual: Any, wanted: Any) -> bool:
    actual_values = actual if isinstance(actual, list) else [actual]
    wanted_values = wanted if isinstance(wanted, list | tuple | set) else [wanted]
    return any(_fold(a) == _fold(w) for a in actual_values for w in wanted_values)


class _DefaultRegistry:
    """The module-level registry, configured from REGISTRY_URL on first use."""

    _instance: Registry | None = None

    def _get(self) -> Registry:
        if self._instance is None:
            self._instance = Registry.from_env()
        return self._instance

    def reset(self) -> None:
        """Forget the configured registry (the next use re-reads the environment)."""
        self._instance = None

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._get(), attr)

    def __repr__(self) -> str:
        return f"<default Registry from ${ENV_URL}: {self._instance!r}>"


REGISTRY = _DefaultRegistry()
