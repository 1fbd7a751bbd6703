from __future__ import annotations

import csv
import io
from dataclasses import dataclass

SCHEMA_INDEX_KEY = "contracts/index/schema_index.csv"
SPEC_INDEX_KEY = "integrations/index/spec_index.csv"


@dataclass(frozen=True)
class IndexEntry:
    name: str
    version: str
    key: str
    date: str = ""
    schema_type: str = ""
    # The lane's lifecycle (ISO dates, "" when unset): from the deprecation date the
    # client warns; from the sunset date the lane no longer resolves for "2" / "2.x".
    deprecation_date: str = ""
    sunset_date: str = ""

    @property
    def lane(self) -> int:
        return int(self.version.split(".", 1)[0])

    @classmethod
    def from_row(cls, row: dict) -> IndexEntry:
        """An entry from an index row (a CSV row of the store, or the API's JSON)."""
        return cls(name=row["name"], version=row["version"], key=row["key"], date=row.get("date", ""),
                   schema_type=row.get("schema_type", ""), deprecation_date=row.get("deprecation_date") or "",
                   sunset_date=row.get("sunset_date") or "")


class Backend:
    """Reads an index once per instance and caches it until `refresh()`."""

    def __init__(self) -> None:
        self._schemas: list[IndexEntry] | None = None
        self._specs: list[IndexEntry] | None = None

    def describe(self) -> str:
        raise NotImplementedError

    # Subclasses implement these two.
    def read_bytes(self, key: str) -> bytes:
        raise NotImplementedError

    def has_key(self, key: str) -> bool:
        raise NotImplementedError

    def schema_index(self) -> list[IndexEntry]:
        if self._schemas is None:
            self._schemas = self._load_index(SCHEMA_INDEX_KEY)
        return self._schemas

    def spec_index(self) -> list[IndexEntry]:
        if self._specs is None:
            self._specs = self._load_index(SPEC_INDEX_KEY)
        return self._specs

    def read_document(self, entry: IndexEntry, selector: str = "") -> bytes:
        """The document behind `entry`; `selector` is what the caller asked for ("2.x",
        "latest", or the version itself), which the HTTP backend reports to the service."""
        return self.read_bytes(entry.key)

    def read_spec(self, entry: IndexEntry) -> bytes:
        return self.read_bytes(entry.key)

    def read_odcs(self, entry: IndexEntry) -> bytes | None:
        """The version as ODCS YAML, when the backend can say more than its document (None: it cannot)."""
        return None

    def refresh(self) -> None:
        self._schemas = self._specs = None

    def _load_index(self, key: str) -> list[IndexEntry]:
        if not self.has_key(key):
            # A store nobody has published to yet is empty, not broken.
            return []
        text = self.read_bytes(key).decode()
        return [IndexEntry.from_row(row) for row in csv.DictReader(io.StringIO(text))]
