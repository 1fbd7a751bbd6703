"""Reading settings from the environment, loudly.

Every helper raises ImproperlyConfigured naming the variable and the bad value,
so a typo in a deployment fails at start-up instead of at 3 a.m.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def read_env_file(path: Path) -> dict[str, str]:
    """The KEY=VALUE lines of a local settings file (`.env`, written by `make demo`).

    Blank lines and `# comments` are skipped; `export KEY=VALUE` and a value in
    matching single or double quotes are accepted, as shells write them. Any other
    line stops start-up naming the file and line, like a bad variable would."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.isidentifier():
            raise ImproperlyConfigured(f"{path}:{number}: {raw!r} is not a KEY=VALUE line")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values


def load_env_file(path: Path) -> list[str]:
    """Set the variables of `path` that the environment does not set already (the real
    environment always wins); return their names. A missing file sets nothing."""
    if not path.is_file():
        return []
    loaded = []
    for key, value in read_env_file(path).items():
        if key not in os.environ:
            os.environ[key] = value
            loaded.append(key)
    return loaded


def load_local_settings(base_dir: Path) -> list[str]:
    """The checkout's local settings, for `manage.py`: `ENV_FILE` (default `.env` in
    `base_dir`; empty: none), only under the project's own settings module. The test
    settings bring their own environment, and the Docker image sets ENV_FILE empty."""
    if os.environ.get("DJANGO_SETTINGS_MODULE") != "registry.settings":
        return []
    name = os.environ.get("ENV_FILE", ".env")
    return load_env_file(base_dir / name) if name else []


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list; blanks dropped."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_networks(name: str, default: str = "") -> list[str]:
    """A comma-separated list of IP networks (10.0.0.0/8) or addresses (127.0.0.1), normalized."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not an IP network or address (e.g. 10.20.0.0/16 or 127.0.0.1)") from None
    return networks


_LOCKOUT_PARAMETERS = {"username", "ip_address", "user_agent"}


def env_lockout_parameters(name: str, default: str) -> list:
    """django-axes lockout parameters: comma-separated alternatives, each one parameter
    or several joined by + ("username+ip_address,ip_address")."""
    alternatives: list = []
    for item in env_list(name, default):
        parts = [p.strip() for p in item.split("+")]
        unknown = [p for p in parts if p not in _LOCKOUT_PARAMETERS]
        if unknown:
            raise ImproperlyConfigured(
                f"{name}: {unknown[0]!r} is not a lockout parameter; use {', '.join(sorted(_LOCKOUT_PARAMETERS))}, "
                "joined by + for a combination (username+ip_address)")
        alternatives.append(parts[0] if len(parts) == 1 else parts)
    if not alternatives:
        raise ImproperlyConfigured(f"{name} is empty; e.g. username+ip_address")
    return alternatives


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
# Longer than any SLO, deadline or lockout means; beyond it timedelta overflows
# (99999999999999999d, 1e300) and the database's interval columns with it.
MAX_DURATION = timedelta(days=36500)


def parse_duration(text: str) -> timedelta:
    """Parse '30d', '15s', '2h' or a bare number of seconds, up to MAX_DURATION."""
    value = text.strip().lower()
    if not value:
        raise ValueError("empty duration")
    unit = value[-1]
    number = value[:-1] if unit in _UNITS else value
    factor = _UNITS.get(unit, 1)
    try:
        amount = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a duration such as 15s, 10m, 2h, 7d or 1w") from None
    return duration_of_seconds(amount * factor, text)


def duration_of_seconds(seconds: float, text: str | None = None) -> timedelta:
    """`seconds` as a timedelta, refused (ValueError) when negative, not a number or above MAX_DURATION."""
    shown = repr(text) if text is not None else repr(seconds)
    if seconds != seconds:  # NaN
        raise ValueError(f"{shown} is not a number of seconds")
    if seconds < 0:
        raise ValueError(f"{shown} is negative")
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"{shown} is longer than the longest duration accepted, {MAX_DURATION.days}d")
    return timedelta(seconds=seconds)


def env_duration(name: str, default: str) -> timedelta:
    raw = os.environ.get(name, default)
    try:
        return parse_duration(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}: {exc}") from None


_ENGINES = {
    "postgres": "django.db.backends.postgresql",
    "postgresql": "django.db.backends.postgresql",
    "sqlite": "django.db.backends.sqlite3",
}


def parse_database_url(url: str, *, base_dir: Path) -> dict:
    """Turn postgres://user:pass@host:port/name or sqlite:///path into DATABASES['default']."""
    parts = urlsplit(url)
    engine = _ENGINES.get(parts.scheme)
    if engine is None:
        raise ImproperlyConfigured(
            f"DATABASE_URL scheme {parts.scheme!r} is not supported; use postgres:// or sqlite:///"
        )
    if engine.endswith("sqlite3"):
        # sqlite:///relative.db and sqlite:////absolute.db, as in most tools.
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if not path:
            raise ImproperlyConfigured("DATABASE_URL for sqlite needs a file path: sqlite:///var/db.sqlite3")
        name = Path(path) if Path(path).is_absolute() else base_dir / path
        name.parent.mkdir(parents=True, exist_ok=True)
        return {"ENGINE": engine, "NAME": str(name), "OPTIONS": {"timeout": 20}}
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured(f"DATABASE_URL {url!r} names no database")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"DATABASE_URL {url!r} has a bad port") from None
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    conn_max_age = int(options.pop("conn_max_age", 0) or 0)
    return {
        "ENGINE": engine,
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(port or ""),
        "CONN_MAX_AGE": conn_max_age,
        "OPTIONS": options,
    }


@dataclass(frozen=True)
class ContractStore:
    """Where published contracts go: an S3 bucket + prefix, or a local directory."""

    kind: str  # "s3" or "local"
    bucket: str = ""
    prefix: str = ""
    path: str = ""

    @property
    def is_s3(self) -> bool:
        return self.kind == "s3"


def parse_contract_store(value: str, *, base_dir: Path) -> ContractStore:
    if value.startswith("s3://"):
        parts = urlsplit(value)
        if not parts.netloc:
            raise ImproperlyConfigured(f"CONTRACT_STORE {value!r} names no bucket: use s3://bucket/prefix")
        return ContractStore(kind="s3", bucket=parts.netloc, prefix=parts.path.strip("/"))
    if "://" in value:
        raise ImproperlyConfigured(
            f"CONTRACT_STORE {value!r}: only s3://bucket/prefix or a local directory are supported"
        )
    path = Path(value)
    return ContractStore(kind="local", path=str(path if path.is_absolute() else base_dir / path))
