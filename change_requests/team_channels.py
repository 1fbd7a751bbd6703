"""The teams' channels, as a teams file or the teams API writes them (registry.teamsync
plans and audits; this module reads and writes the TeamChannel rows for it)."""

from __future__ import annotations

from typing import Any

from change_requests.notifications import TeamChannel
from change_requests.transports import TRANSPORTS, transport_for
from registry.hooks import TeamChannels, channel_sender, team_channels
from registry.models import Team


def problems(kind: str, settings: dict[str, Any]) -> list[str]:
    return transport_for(kind).settings_problems(settings)


def recipient(kind: str, settings: dict[str, Any]) -> str:
    return transport_for(kind).recipient(settings)


def current(team_ids: list[int]) -> dict[int, list[tuple[int, str, dict]]]:
    found: dict[int, list[tuple[int, str, dict]]] = {}
    for channel in TeamChannel.objects.filter(team_id__in=team_ids).order_by("id"):
        found.setdefault(channel.team_id, []).append((channel.pk, channel.kind, channel.settings))
    return found


def save(team: Team, kind: str, settings: dict[str, Any], channel_id: int | None) -> None:
    if channel_id is None:
        TeamChannel.objects.add(team, kind, **settings)
        return
    channel = TeamChannel.objects.get(pk=channel_id, team=team)
    channel.settings = settings
    channel.full_clean()
    channel.save(update_fields=["settings"])


def remove(channel_id: int) -> None:
    TeamChannel.objects.filter(pk=channel_id).delete()


team_channels(TeamChannels(kinds=tuple(TRANSPORTS), problems=problems, recipient=recipient, current=current,
                           save=save, remove=remove))


@channel_sender
def send(kind: str, settings: dict[str, Any], message) -> None:
    """Send another app's outbox row through the transport of `kind` (incidents use it)."""
    transport_for(kind).send(message, settings)
