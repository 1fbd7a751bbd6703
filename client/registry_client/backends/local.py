from __future__ import annotations

from pathlib import Path

from registry_client.backends.base import Backend
from registry_client.errors import StoreUnreachable


class LocalBackend(Backend):
    """A directory laid out like the S3 store (the embedded default)."""

    def __init__(self, root: str | Path):
        super().__init__()
        self.root = Path(root)

    def describe(self) -> str:
        return f"directory {self.root}"

    def has_key(self, key: str) -> bool:
        if not self.root.is_dir():
            raise StoreUnreachable(f"The contract store directory {self.root} does not exist.")
        return (self.root / key).is_file()

    def read_bytes(self, key: str) -> bytes:
        try:
            return (self.root / key).read_bytes()
        except OSError as exc:
            raise StoreUnreachable(f"Could not read {key} from {self.describe()}: {exc}") from exc
