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
