"""The lanes API: a contract's lanes with their dates and who still reads each; the owner
team sets a lane's dates, a governance admin extends its sunset."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from contracts_app.models import Contract
from lanes.answers import migrating_off
from lanes.evidence import LaneUsage, lane_usage
from lanes.models import Lane


class ReaderSerializer(serializers.Serializer):
    who = serializers.CharField()
    team = serializers.CharField(allow_null=True)
    source = serializers.ChoiceField(choices=["thin client", "lineage"])
    detail = serializers.CharField()
    last_seen = serializers.DateTimeField(allow_null=True)


class LaneMigratingSerializer(serializers.Serializer):
    team = serializers.CharField()
    by = serializers.DateField()


class LaneSerializer(serializers.Serializer):
    major = serializers.IntegerField()
    label = serializers.CharField()
    latest = serializers.CharField(allow_null=True, help_text="The newest release of the lane (what \"2.x\" resolves to).")
    versions = serializers.ListField(child=serializers.CharField())
    newest = serializers.BooleanField(help_text="The newest lane (the one \"latest\" resolves in).")
    deprecation_date = serializers.DateField(allow_null=True)
    sunset_date = serializers.DateField(allow_null=True, help_text="The owner team's sunset date.")
    extended_until = serializers.DateField(allow_null=True, help_text="A governance admin's extension of the sunset.")
    deprecated = serializers.BooleanField()
    past_sunset = serializers.BooleanField()
    summary = serializers.CharField(help_text='e.g. "3 teams, 7 jobs still on 2.x".')
    teams = serializers.ListField(child=serializers.CharField())
    readers = ReaderSerializer(many=True)
    undecided = ReaderSerializer(many=True, help_text="Jobs whose input schema fits this lane and another alike: "
                                                      "shown, counted on neither.")
    migrating = LaneMigratingSerializer(many=True, help_text='Teams that answered "migrating by DATE" off this lane.')


class DatesSerializer(serializers.Serializer):
    deprecation_date = serializers.DateField(allow_null=True, required=False)
    sunset_date = serializers.DateField(allow_null=True, required=False)
    override_reason = serializers.CharField(required=False, allow_blank=True, default="",
                                            help_text="A governance admin's reason to set a sunset before a team's migration date.")


class ExtendSerializer(serializers.Serializer):
    until = serializers.DateField()
    reason = serializers.CharField()


def lane_data(u: LaneUsage, contract_id: int) -> dict:
    today = timezone.localdate()
    lane = u.lane
    return {
        "major": u.major, "label": u.label, "latest": u.latest, "versions": u.versions, "newest": u.newest,
        "deprecation_date": lane.deprecation_date if lane else None, "sunset_date": lane.sunset_date if lane else None,
        "extended_until": lane.extended_until if lane else None,
        "deprecated": bool(lane and lane.is_deprecated(today)), "past_sunset": bool(lane and lane.is_past_sunset(today)),
        "summary": u.summary, "teams": [team for team, _ in u.teams],
        "readers": [_reader(r) for r in u.readers], "undecided": [_reader(r) for r in u.undecided],
        "migrating": [{"team": team, "by": day} for day, team in migrating_off(contract_id, u.major)],
    }


def _reader(r) -> dict:
    return {"who": r.who, "team": r.team, "source": r.source, "detail": r.detail, "last_seen": r.last_seen}


def _contract(name: str) -> Contract:
    contract = Contract.objects.select_related("owner_team").filter(name=name).first()
    if contract is None:
        raise NotFound(f"No contract named {name!r}.")
    return contract


def _lane(contract: Contract, major: int) -> Lane:
    if not contract.versions.filter(version__startswith=f"{major}.").exists():
        raise NotFound(f"{contract.name} has no version in lane {major}.x.")
    return Lane.of(contract, major)


def _answer(contract: Contract, major: int) -> Response:
    found = next(u for u in lane_usage([contract])[contract.pk] if u.major == major)
    return Response(LaneSerializer(lane_data(found, contract.pk)).data)


class LaneList(APIView):
    """A contract's lanes, newest first: dates, and who still reads each (docs/lanes.md)."""

    @extend_schema(responses=LaneSerializer(many=True))
    def get(self, request, name: str):
        contract = _contract(name)
        usage = lane_usage([contract])[contract.pk]
        return Response(LaneSerializer([lane_data(u, contract.pk) for u in reversed(usage)], many=True).data)


class LaneDetail(APIView):
    """One lane; PATCH sets its deprecation and sunset dates (the owner team; audited)."""

    @extend_schema(responses=LaneSerializer)
    def get(self, request, name: str, major: int):
        contract = _contract(name)
        _lane(contract, int(major))
        return _answer(contract, int(major))

    @extend_schema(request=DatesSerializer, responses=LaneSerializer)
    def patch(self, request, name: str, major: int):
        contract = _contract(name)
        lane = _lane(contract, int(major))
        body = DatesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        lane.set_dates(deprecation_date=data.get("deprecation_date", lane.deprecation_date),
                       sunset_date=data.get("sunset_date", lane.sunset_date), by=request.user,
                       override_reason=data.get("override_reason", ""))
        return _answer(contract, int(major))


class LaneExtend(APIView):
    """A governance admin extends a lane's sunset (audited): it keeps resolving until then."""

    @extend_schema(request=ExtendSerializer, responses=LaneSerializer)
    def post(self, request, name: str, major: int):
        contract = _contract(name)
        lane = _lane(contract, int(major))
        body = ExtendSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        lane.extend(until=body.validated_data["until"], by=request.user, reason=body.validated_data["reason"])
        return _answer(contract, int(major))
