"""What the contracts side announces, for other apps to act on (the emitter never
imports its listeners).

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
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal

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
    """Register a fragment of the contract page: `fn(request, contract)` returns HTML or None."""
    if fn not in _contract_sections:
        _contract_sections.append(fn)
    return fn


def contract_page_sections(request, contract) -> list:
    from django.utils.safestring import mark_safe

    rendered = (fn(request, contract) for fn in _contract_sections)
    return [mark_safe(html) for html in rendered if html]  # noqa: S308 - app templates, autoescaped
