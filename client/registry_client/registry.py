"""The consumer-facing registry.

    from registry_client import Registry, REGISTRY

    registry = Registry.from_url("s3://lakehouse/registry")      # or a directory, or https://registry.example
    Model = registry.get_pandera_model("lab.analytics.cell_count")  # version="latest"
    validated = Model.validate(df)
    odcs = registry.get_odcs("lab.analytics.cell_count", "1.0")     # the version as an ODCS contract

Versions: a specific one ("1.0"), "latest" (semantic order; never a
pre-release or dev release), a lane ("2" or "2.x": the newest 2.y.z release)
or None (every version, as a dict oldest first). A lane past its deprecation
date logs a warning naming its sunset date; past its sunset, a lane selector no
longer resolves (LaneSunset) and "latest" skips it, while an explicit version
still does, with a warning. Over the service's API, the document fetch says
which version a selector resolved to (opt out: report_resolved=False or
REGISTRY_REPORT_RESOLVED=0), so owners see who still reads an old lane.
Published versions are immutable, so documents and rebuilt models are cached
per instance; `refresh()` re-reads the index to see newly published versions.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from registry_client.backends import Backend, HttpBackend, IndexEntry, LocalBackend, S3Backend
from registry_client.errors import InvalidContract, LaneSunset, UnknownContract, UnknownVersion
from registry_client.identity import META_KEYS
from registry_client.odcs import to_odcs
from registry_client.pandera_models import build_model
from registry_client.preflight import PreflightAnswer, ask
from registry_client.resolution import latest_release, semantic_sort
from registry_client.safeyaml import YamlInputError, load_yaml
from registry_client.versions import lane_selector, latest_in_lane

log = logging.getLogger("registry_client")

LATEST = "latest"
ENV_URL = "REGISTRY_URL"
ENV_TOKEN = "REGISTRY_TOKEN"  # noqa: S105 - the variable's name, not a secret
ENV_S3_ENDPOINT = "REGISTRY_S3_ENDPOINT_URL"
ENV_REPORT = "REGISTRY_REPORT_RESOLVED"
DEFAULT_URL = "var/contract-store"


class Registry:
    def __init__(self, backend: Backend, *, today: Callable[[], date] = date.today):
        self.backend = backend
        self.today = today  # the clock the lane dates are read against
        self._grouped: dict[str, dict[str, IndexEntry]] = {}
        self._grouped_from: object = None
        self._warned: set[tuple[str, str]] = set()
        self._documents: dict[tuple[str, str], dict] = {}
        self._specs: dict[tuple[str, str], dict] = {}
        self._models: dict[tuple[str, str], type] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, *, token: str | None = None, s3_endpoint_url: str | None = None,
                 report_resolved: bool = True) -> Registry:
        """`s3://bucket/prefix`, `http(s)://host` (the service's API) or a directory path.
        `report_resolved=False`: the API is not told which version a selector resolved to."""
        parts = urlsplit(url)
        if parts.scheme == "s3":
            return cls(S3Backend(parts.netloc, parts.path, endpoint_url=s3_endpoint_url))
        if parts.scheme in ("http", "https"):
            return cls(HttpBackend(url, token, report_resolved=report_resolved))
        if parts.scheme in ("", "file"):
            return cls(LocalBackend(parts.path if parts.scheme == "file" else url))
        raise ValueError(f"unsupported registry URL {url!r}: use s3://bucket/prefix, https://host or a directory")

    @classmethod
    def from_env(cls) -> Registry:
        return cls.from_url(
            os.environ.get(ENV_URL) or DEFAULT_URL, token=os.environ.get(ENV_TOKEN) or None,
            s3_endpoint_url=os.environ.get(ENV_S3_ENDPOINT) or None,
            report_resolved=os.environ.get(ENV_REPORT, "1").strip().lower() not in ("0", "false", "no", "off"),
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
        index = self.backend.schema_index()
        if index is not self._grouped_from:  # grouped once per index read, not per call
            grouped: dict[str, dict[str, IndexEntry]] = {}
            for entry in index:
                grouped.setdefault(entry.name, {})[entry.version] = entry
            self._grouped, self._grouped_from = grouped, index
        entries = self._grouped.get(name)
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
        """The version `version` names: itself, the newest release ("latest"), or the
        newest release of a lane ("2", "2.x"). Lane dates apply (see the module)."""
        entries = self._entries(name)
        if version == LATEST:
            chosen = latest_release(entries)
            if chosen is not None and self._past_sunset(entries[chosen]):
                # a sunset lane no longer answers "latest": the newest release of a live lane does
                chosen = latest_release(v for v, e in entries.items() if not self._past_sunset(e))
            if chosen is None:
                raise UnknownVersion(name, version, semantic_sort(entries))
        elif (major := lane_selector(version)) is not None:
            chosen = latest_in_lane(entries, major)
            if chosen is None:
                raise UnknownVersion(name, version, semantic_sort(entries))
            if self._past_sunset(entries[chosen]):
                raise LaneSunset(name, version, semantic_sort(entries), entries[chosen].sunset_date)
        elif version not in entries:
            raise UnknownVersion(name, version, semantic_sort(entries))
        else:
            chosen = version
        self._warn_about_lane(name, entries[chosen])
        return chosen

    def _past_sunset(self, entry: IndexEntry) -> bool:
        return bool(entry.sunset_date) and self.today().isoformat() >= entry.sunset_date

    def _warn_about_lane(self, name: str, entry: IndexEntry) -> None:
        """Once per version and instance: a deprecated lane names its sunset date; a
        version past it (only an explicit one gets here) says so."""
        if not (entry.deprecation_date or entry.sunset_date) or (name, entry.version) in self._warned:
            return
        today = self.today().isoformat()
        lane = f"{entry.lane}.x"
        if entry.sunset_date and today >= entry.sunset_date:
            log.warning("%s %s: lane %s reached its sunset on %s; only explicit versions still resolve. "
                        "Move to a newer lane.", name, entry.version, lane, entry.sunset_date)
        elif entry.deprecation_date and today >= entry.deprecation_date:
            sunset = f"its sunset is {entry.sunset_date}" if entry.sunset_date else "no sunset date is set yet"
            log.warning("%s %s: lane %s is deprecated since %s; %s. Move to a newer lane.",
                        name, entry.version, lane, entry.deprecation_date, sunset)
        else:
            return
        self._warned.add((name, entry.version))

    def lanes(self, name: str) -> dict[int, dict[str, str | None]]:
        """Every lane of `name`: {major: {"latest": newest release or None, "deprecation_date", "sunset_date"}}."""
        entries = self._entries(name)
        found: dict[int, dict[str, str | None]] = {}
        for entry in entries.values():
            found.setdefault(entry.lane, {"deprecation_date": entry.deprecation_date or None,
                                          "sunset_date": entry.sunset_date or None})
        for major, lane in found.items():
            lane["latest"] = latest_in_lane(entries, major)
        return dict(sorted(found.items()))

    # --- documents ---------------------------------------------------------------

    def get_schema(self, name: str, version: str | None = LATEST) -> Any:
        """The contract document; with version=None a dict of every version's document."""
        if version is None:
            return {v: self.get_schema(name, v) for v in self.versions(name)}
        return self._document(name, self.resolve(name, version), version)

    def _document(self, name: str, resolved: str, selector: str) -> dict:
        key = (name, resolved)
        if key not in self._documents:
            entry = self._entries(name)[resolved]
            raw = self.backend.read_document(entry, selector)
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
            document = self._document(name, resolved, version)
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
