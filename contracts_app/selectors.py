"""Version selectors on the service's side, with the thin client's rules.

A selector is an explicit version ("2.1.0"), "latest" (the newest release;
registry_client.versions.latest_release) or a lane ("2", "2.x": the newest 2.y.z
release; latest_in_lane). The lane dates come from whoever keeps them
(contracts_app.hooks.lane_dates): past its sunset, a lane no longer answers a
lane selector or "latest"; an explicit version still resolves, with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.utils import timezone
from registry_client.versions import lane_of, lane_selector, latest_in_lane, latest_release

from contracts_app.hooks import lane_dates_of
from contracts_app.models import Contract, ContractVersion, version_of
from registry.models import RegistryError

LATEST = "latest"


class LanePastSunset(RegistryError):
    """A lane selector named a lane past its sunset date (the API answers 410)."""

    def __init__(self, message: str):
        super().__init__(message, code="lane_sunset")


@dataclass(frozen=True)
class Resolved:
    version: ContractVersion
    warning: str = ""  # a deprecated lane, or an explicit version past its lane's sunset


def is_selector(text: str) -> bool:
    return text == LATEST or lane_selector(text) is not None


def resolve(contract: Contract, selector: str, *, today: date | None = None) -> Resolved | None:
    """The version `selector` names among the contract's versions, or None when none does.
    Raises LanePastSunset for a lane selector whose lane is past its sunset."""
    today = today or timezone.localdate()
    versions = list(contract.versions.all())
    dates = lane_dates_of([contract.pk])

    def sunset_of(major: int):
        return (dates.get((contract.pk, major)) or {}).get("sunset_date")

    def past_sunset(version: ContractVersion) -> bool:
        sunset = sunset_of(lane_of(version.version))
        return sunset is not None and today >= sunset

    if selector == LATEST:
        chosen = latest_release([v for v in versions if not past_sunset(v)], key=version_of)
    elif (major := lane_selector(selector)) is not None:
        chosen = latest_in_lane(versions, major, key=version_of)
        if chosen is not None and past_sunset(chosen):
            raise LanePastSunset(f"Lane {major}.x of {contract.name} reached its sunset on {sunset_of(major)}: "
                                 f"{selector!r} no longer resolves. Move to a newer lane, or name an explicit version.")
    else:
        chosen = next((v for v in versions if v.version == selector), None)
    if chosen is None:
        return None
    return Resolved(chosen, lane_warning(contract, chosen.version, dates.get((contract.pk, lane_of(chosen.version))), today))


def lane_warning(contract: Contract, version: str, dates: dict | None, today: date) -> str:
    if not dates:
        return ""
    major = lane_of(version)
    sunset, deprecated = dates.get("sunset_date"), dates.get("deprecation_date")
    if sunset and today >= sunset:
        return f"{contract.name} {version}: lane {major}.x reached its sunset on {sunset}; move to a newer lane."
    if deprecated and today >= deprecated:
        return (f"{contract.name} {version}: lane {major}.x is deprecated since {deprecated}; "
                + (f"its sunset is {sunset}." if sunset else "no sunset date is set yet."))
    return ""
