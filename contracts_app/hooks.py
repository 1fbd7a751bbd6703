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
