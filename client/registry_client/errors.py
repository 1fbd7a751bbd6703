"""What the thin client raises. Every message names the contract, version or store."""

from __future__ import annotations


class RegistryClientError(Exception):
    """Base class: catch this to handle any registry failure."""


class UnknownContract(RegistryClientError, KeyError):
    def __init__(self, name: str, known: list[str] | None = None):
        self.name = name
        hint = ""
        if known:
            import difflib

            close = difflib.get_close_matches(name, known, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
        super().__init__(f"No contract named {name!r} in the registry.{hint}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class UnknownVersion(RegistryClientError, KeyError):
    def __init__(self, name: str, version: str, available: list[str]):
        self.name, self.version, self.available = name, version, available
        listed = ", ".join(available) or "none"
        super().__init__(f"Contract {name!r} has no version {version!r} (published: {listed}).")

    def __str__(self) -> str:
        return self.args[0]


class StoreUnreachable(RegistryClientError):
    """The backend (S3, directory or HTTP API) could not be read."""


class InvalidContract(RegistryClientError):
    """A published document could not be turned into a model."""


class LaneSunset(UnknownVersion):
    """A lane selector ("2", "2.x") names a lane past its sunset date: it no longer
    resolves; pin an explicit version (it still resolves, with a warning) or move on."""

    def __init__(self, name: str, version: str, available: list[str], sunset_date: str):
        self.sunset_date = sunset_date
        super().__init__(name, version, available)
        self.args = (f"Lane {version!r} of contract {name!r} reached its sunset on {sunset_date}: it no longer "
                     f"resolves for {version!r}. Move to a newer lane, or pin an explicit version (published: "
                     f"{', '.join(available) or 'none'}).",)
