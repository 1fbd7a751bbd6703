"""What the contracts side announces, for other apps to act on, and what it asks of
them (the emitter never imports its listeners).

`breaking_version_proposed` is sent by the publish gate when a new version breaks
its contract's compatibility mode. Nothing is recorded: the version waits. A
listener (change_requests) opens whatever makes it wait for the consumers and
returns `(handle, sentence)`: the object that now holds the version (a change
request) or None, and a sentence for the publisher.

Keyword arguments:
- contract: contracts_app.models.Contract
- document: the canonical document proposed (dict)
- report: registry_client.compat.CompatibilityReport for the contract's mode
- by: the acting user or token, or None for an operator's command

`versions_waiting` lets an app say which versions of a contract wait on someone (an
open change request waits for the consumer teams, an approved one for its owner to
publish, a draft for its owner team's review), so the catalogue and the contract page
show them with a link to the page where they are resolved. A provider adds what it
needs to the pages' contract queryset as annotations (subqueries), so a page of
contracts stays one query whatever its length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.dispatch import Signal
from registry_client.resolution import semantic_sort

breaking_version_proposed = Signal()

# `schema_compared` is sent when a written schema was compared with the contract
# bound to its dataset (contracts_app.drift), inside the ingest transaction,
# after the SchemaDriftCheck row is written. Keyword arguments: `check` (the
# SchemaDriftCheck: dataset_id, run_uuid, event_type, event_time, findings,
# drift_count, contract_name, version); end with `**kwargs`.
schema_compared = Signal()

NOBODY_LISTENS = ("Nothing waits for the consumer teams here (no app listens for breaking versions); "
                  "it was not published.")


def announce_breaking_version(contract, document: dict, report, *, by) -> tuple[Any, str]:
    """Send `breaking_version_proposed`; the first listener's answer, else (None, why nothing happened)."""
    for _receiver, answer in breaking_version_proposed.send(
        sender=type(contract), contract=contract, document=document, report=report, by=by,
    ):
        if answer is not None:
            return answer
    return None, NOBODY_LISTENS


# --- lanes -----------------------------------------------------------------------
#
# Every major version of a contract is a lane. The contracts side knows versions;
# an app that keeps lane dates (deprecation, sunset) answers `lane_dates_of`, so the
# store index and the API can carry them without importing it.

_lane_dates: list = []


def lane_dates(fn):
    """Register a keeper of lane dates: `fn(contract_ids)` returns {(contract id, major):
    {"deprecation_date": date | None, "sunset_date": date | None}} (the sunset in force,
    an extension included) for the lanes that have any; one query whatever the number."""
    if fn not in _lane_dates:
        _lane_dates.append(fn)
    return fn


def lane_dates_of(contract_ids) -> dict:
    found: dict = {}
    ids = list(contract_ids)
    for fn in _lane_dates:
        for key, dates in fn(ids).items():
            found.setdefault(key, {}).update(dates)
    return found


# Sent inside record_version's transaction once a version is recorded (keyword
# arguments: contract_version, document, by). A listener may raise a RegistryError to
# refuse the version (nothing is recorded then).
version_recorded = Signal()

# Sent by the document endpoint when a client fetched a version (keyword arguments:
# contract_version, selector: what the client asked for as its X-Registry-Resolved
# header said, or "" when it sent none; request: the DRF request, for its token or user).
version_fetched = Signal()


_contract_sections: list = []


def contract_page_section(fn):
    """Register `fn(request, contract, bindings)` -> HTML or None: a section of the
    contract page (other apps add what they know of its bound datasets)."""
    if fn not in _contract_sections:
        _contract_sections.append(fn)
    return fn


def contract_page_sections(request, contract, bindings) -> list:
    from django.utils.safestring import mark_safe

    rendered = (fn(request, contract, bindings) for fn in _contract_sections)
    return [mark_safe(html) for html in rendered if html]  # noqa: S308 - app templates, autoescaped


@dataclass(frozen=True)
class WaitingVersion:
    """A version of a contract that is not live yet because someone must act.

    - `version`: the version proposed or drafted;
    - `state`: a stable slug: "awaiting_acknowledgement" (a change request waits for
      the consumer teams), "awaiting_publication" (approved; its owner may publish),
      "awaiting_review" (a draft waits for its owner team);
    - `status`: the state in words, naming who must act ("waiting for Analytics to acknowledge");
    - `link_text` and `url`: the one page where it is resolved ("change request #10");
    - `due`: the deadline, when there is one."""

    version: str
    state: str
    status: str
    link_text: str
    url: str
    due: datetime | None = None

    @property
    def state_label(self) -> str:
        """The state as a tag says it, in few words."""
        return WAITING_STATES.get(self.state, self.state.replace("_", " "))


WAITING_STATES = {"awaiting_acknowledgement": "awaiting acknowledgement", "awaiting_publication": "approved, to publish",
                  "awaiting_review": "draft, to review"}


_waiting_providers: list[tuple[Callable, Callable]] = []


def versions_waiting(annotate: Callable, waiting: Callable) -> None:
    """Register a provider of waiting versions.

    `annotate(contracts)` adds what it needs to a Contract queryset as annotations
    (subqueries: no query of its own); `waiting(contract)` reads them back and returns
    the contract's WaitingVersions (an empty list when nothing waits)."""
    if all(existing is not annotate for existing, _ in _waiting_providers):
        _waiting_providers.append((annotate, waiting))


def with_waiting_versions(contracts):
    """The queryset with every provider's annotations (still one query)."""
    for annotate, _ in _waiting_providers:
        contracts = annotate(contracts)
    return contracts


def waiting_versions(contract) -> list[WaitingVersion]:
    """The contract's waiting versions, oldest version first, read from the annotations
    `with_waiting_versions` added."""
    found: list[WaitingVersion] = []
    for _, waiting in _waiting_providers:
        found.extend(waiting(contract))
    order = {version: i for i, version in enumerate(semantic_sort(w.version for w in found))}
    return sorted(found, key=lambda w: order[w.version])
