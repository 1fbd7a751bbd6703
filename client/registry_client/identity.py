"""Who a contract is: SchemaInfo (identity) and SchemaMeta (queryable tags).

Both are frozen: they are stamped onto authored classes, rebuilt from published
documents and flattened into Parquet metadata, and must mean the same thing
everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .versions import InvalidVersionError, validate_version, version_to_folder

__all__ = [
    "SCHEMA_TYPES",
    "TIERS",
    "ALIGNMENTS",
    "CONTRACT_TYPES",
    "InvalidIdentityError",
    "SchemaInfo",
    "SchemaMeta",
]

SCHEMA_TYPES: tuple[str, ...] = ("dataframe", "event", "api")
TIERS: tuple[str, ...] = ("bronze", "silver", "gold")
ALIGNMENTS: tuple[str, ...] = ("source", "canonical", "denormalized")
CONTRACT_TYPES: tuple[str, ...] = ("ingress", "internal", "egress")

# These would corrupt the dotted name or the folder path it maps to.
_FORBIDDEN = (".", "/", "-", "\\")


class InvalidIdentityError(ValueError):
    """A SchemaInfo or SchemaMeta value that cannot be published."""


def _check_part(kind: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidIdentityError(f"{kind} must be a string, not {type(value).__name__} {value!r}")
    if not value:
        raise InvalidIdentityError(f"{kind} must not be empty")
    bad = [ch for ch in _FORBIDDEN if ch in value]
    if bad:
        raise InvalidIdentityError(
            f"{kind} {value!r} contains {', '.join(repr(ch) for ch in bad)}; "
            "name parts may not contain '.', '/' or '-' (use '_')"
        )
    if any(ch.isspace() for ch in value):
        raise InvalidIdentityError(f"{kind} {value!r} contains whitespace")
    return value


@dataclass(frozen=True, kw_only=True)
class SchemaInfo:
    """The identity of one contract version.

    ``name`` is derived: ``domain.sub1.sub2.entity``.
    """

    domain: str
    subdomains: tuple[str, ...] = ()
    entity: str
    version: str
    owner: str | None = None
    description: str = ""
    schema_type: str = "dataframe"
    name: str = field(init=False)

    def __post_init__(self) -> None:
        _check_part("domain", self.domain)
        subdomains = self.subdomains
        if isinstance(subdomains, str) or not isinstance(subdomains, Iterable):
            raise InvalidIdentityError(
                f"subdomains must be a list of strings, not {type(subdomains).__name__} {subdomains!r}"
            )
        subdomains = tuple(subdomains)
        for index, part in enumerate(subdomains):
            _check_part(f"subdomains[{index}]", part)
        object.__setattr__(self, "subdomains", subdomains)
        _check_part("entity", self.entity)
        try:
            validate_version(self.version)
        except InvalidVersionError as exc:
            raise InvalidIdentityError(str(exc)) from None
        if self.owner is not None and (not isinstance(self.owner, str) or not self.owner.strip()):
            raise InvalidIdentityError(f"owner must be a non-empty string (a team slug), not {self.owner!r}")
        if self.description is None:
            object.__setattr__(self, "description", "")
        if not isinstance(self.description, str):
            raise InvalidIdentityError(f"description must be a string, not {type(self.description).__name__}")
        if self.schema_type not in SCHEMA_TYPES:
            raise InvalidIdentityError(
                f"schema_type {self.schema_type!r} is not one of {', '.join(SCHEMA_TYPES)}"
            )
        object.__setattr__(self, "name", ".".join((self.domain, *subdomains, self.entity)))

    @property
    def parts(self) -> tuple[str, ...]:
        """The name's parts, which are also the folders under ``domains/``."""
        return (self.domain, *self.subdomains, self.entity)

    @property
    def folder(self) -> str:
        """The folder, relative to the contracts root: ``domains/lab/analytics/cell_count/v1_0``."""
        return "/".join(("domains", *self.parts, version_to_folder(self.version)))

    def to_dict(self) -> dict[str, Any]:
        """The ``schema`` section of a contract document, in its published key order."""
        return {
            "name": self.name,
            "domain": self.domain,
            "subdomains": list(self.subdomains),
            "entity": self.entity,
            "version": self.version,
            "owner": self.owner,
            "schema_type": self.schema_type,
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, section: Mapping[str, Any]) -> SchemaInfo:
        """Rebuild from a document's ``schema`` section; refuses a ``name`` that disagrees with its parts."""
        if not isinstance(section, Mapping):
            raise InvalidIdentityError("the schema section must be a mapping")
        missing = [key for key in ("domain", "entity", "version") if key not in section]
        if missing:
            raise InvalidIdentityError(f"the schema section is missing {', '.join(missing)}")
        info = cls(
            domain=section["domain"],
            subdomains=tuple(section.get("subdomains") or ()),
            entity=section["entity"],
            version=section["version"],
            owner=section.get("owner"),
            description=section.get("description") or "",
            schema_type=section.get("schema_type", "dataframe"),
        )
        declared = section.get("name")
        if declared is not None and declared != info.name:
            raise InvalidIdentityError(
                f"schema.name {declared!r} does not match its parts (domain, subdomains, entity) = {info.name!r}"
            )
        return info


@dataclass(frozen=True)
class SchemaMeta:
    """Queryable tags: where the data sits in the platform.

    ``tier``, ``alignment`` and ``contract_type`` are closed sets; ``source_system``
    is one name or several; ``stage`` is free text.
    """

    tier: str | None = None
    alignment: str | None = None
    contract_type: str | None = None
    source_system: str | tuple[str, ...] | None = None
    stage: str | None = None

    def __post_init__(self) -> None:
        for key, allowed in (("tier", TIERS), ("alignment", ALIGNMENTS), ("contract_type", CONTRACT_TYPES)):
            value = getattr(self, key)
            if value is not None and value not in allowed:
                raise InvalidIdentityError(f"meta {key} {value!r} is not one of {', '.join(allowed)}")
        source = self.source_system
        if source is not None:
            if isinstance(source, str):
                if not source.strip():
                    raise InvalidIdentityError("meta source_system must not be empty")
            elif isinstance(source, Iterable):
                systems = tuple(source)
                if not systems or not all(isinstance(s, str) and s.strip() for s in systems):
                    raise InvalidIdentityError(
                        f"meta source_system must be a non-empty string or a non-empty list of them, not {source!r}"
                    )
                object.__setattr__(self, "source_system", systems)
            else:
                raise InvalidIdentityError(
                    f"meta source_system must be a string or a list of strings, not {type(source).__name__}"
                )
        if self.stage is not None and (not isinstance(self.stage, str) or not self.stage.strip()):
            raise InvalidIdentityError(f"meta stage must be a non-empty string, not {self.stage!r}")

    @property
    def source_systems(self) -> tuple[str, ...]:
        """``source_system`` as a tuple, whichever form it was given in."""
        if self.source_system is None:
            return ()
        if isinstance(self.source_system, str):
            return (self.source_system,)
        return tuple(self.source_system)

    def to_dict(self) -> dict[str, Any]:
        """The ``meta`` section: only the keys that are set, in a fixed order."""
        out: dict[str, Any] = {}
        for key in META_KEYS:
            value = getattr(self, key)
            if value is None:
                continue
            out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None) -> SchemaMeta:
        section = section or {}
        if not isinstance(section, Mapping):
            raise InvalidIdentityError("the meta section must be a mapping")
        unknown = sorted(set(section) - set(META_KEYS))
        if unknown:
            raise InvalidIdentityError(f"unknown meta keys: {', '.join(map(str, unknown))}")
        return cls(**dict(section))

    def matches(self, **wanted: Any) -> bool:
        """True when every given tag matches; ``source_system`` matches any of several systems."""
        for key, value in wanted.items():
            if value is None:
                continue
            if key == "source_system":
                if value not in self.source_systems:
                    return False
            elif getattr(self, key) != value:
                return False
        return True


# The meta section's keys, in the order they are written.
META_KEYS = tuple(f.name for f in fields(SchemaMeta))
