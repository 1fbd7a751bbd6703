"""The API: the preflight, a dataset's contract status, incidents and the owner's actions."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from incidents import preflight
from incidents.handling import acknowledge, resolve
from incidents.models import ContractStatus, Incident, IncidentState
from registry.constants import TokenScope
from registry.models import Dataset


class IncidentEventSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    actor = serializers.CharField(source="actor_label")
    text = serializers.CharField()
    detail = serializers.JSONField()


class IncidentSerializer(serializers.ModelSerializer):
    dataset = serializers.SerializerMethodField()
    events = IncidentEventSerializer(many=True, read_only=True)
    teams = serializers.SerializerMethodField()
    # Plain strings: their choices are in docs/incidents.md (enum names would clash with other "state"s).
    state = serializers.CharField(help_text="open, acknowledged or resolved.")
    cause = serializers.CharField(help_text="stale, drift, check_failed or check_late.")
    resolution = serializers.CharField(help_text="owner, automatic, or empty while unresolved.")

    class Meta:
        model = Incident
        fields = ["id", "dataset", "cause", "key", "column", "state", "summary", "evidence", "opened_at",
                  "acknowledged_at", "resolved_at", "resolution", "teams", "events"]

    def get_dataset(self, incident: Incident) -> dict:
        d = incident.dataset
        return {"id": d.pk, "namespace": d.namespace, "name": d.name}

    def get_teams(self, incident: Incident) -> list[dict]:
        return [{"team": t.team.slug, "owner": t.owner, "paths": t.paths} for t in incident.teams.all()]


class CheckSerializer(serializers.Serializer):
    column = serializers.CharField()
    kind = serializers.CharField()
    declared = serializers.BooleanField()
    verdict = serializers.CharField()
    name = serializers.CharField()
    run_id = serializers.CharField(allow_null=True)
    job = serializers.CharField()
    at = serializers.CharField(allow_null=True)
    running = serializers.BooleanField()


class ContractStatusSerializer(serializers.ModelSerializer):
    contract = serializers.CharField(source="contract.name")
    checks = CheckSerializer(many=True)
    conditions = serializers.JSONField(source="facts")

    class Meta:
        model = ContractStatus
        fields = ["contract", "version", "status", "running", "reasons", "checks", "conditions", "evaluated_at"]


class PreflightSerializer(serializers.Serializer):
    safe = serializers.BooleanField()
    status = serializers.CharField(help_text="passing, failing, unverified, no_contract or unknown.")
    reasons = serializers.ListField(child=serializers.CharField())
    incidents = serializers.ListField(child=serializers.DictField())
    as_of = serializers.CharField()
    running = serializers.BooleanField()
    dataset = serializers.DictField(allow_null=True)
    contract = serializers.DictField(allow_null=True)


@extend_schema(
    summary="May I read this dataset now? (fails closed)",
    parameters=[
        OpenApiParameter("namespace", str, description="The dataset's namespace (with name)."),
        OpenApiParameter("name", str, description="The dataset's name; alone, it must be unique across namespaces."),
        OpenApiParameter("dataset", int, description="The dataset's id, instead of namespace and name."),
        OpenApiParameter("columns", str, description="Comma-separated: only incidents and checks touching these count."),
        OpenApiParameter("contract", str, description="The contract version range the reader expects, e.g. 1.x."),
    ],
    responses={200: PreflightSerializer},
)
class Preflight(APIView):
    """Answers 200 whatever the verdict: unknown, unbound or never evaluated is `safe: false` with a reason.
    A hot path (registry.middleware.HotPathMiddleware): a bearer token, no session."""

    def finalize_response(self, request, response, *args, **kwargs):
        # The hot path hands the response straight back, past the handler that would render it.
        response = super().finalize_response(request, response, *args, **kwargs)
        return response.render() if hasattr(response, "render") else response

    def get(self, request):
        params = request.query_params
        # The hot path skips the middleware that refuses NULs; the database cannot hold one.
        if any("\x00" in value for values in params.lists() for value in values[1]):
            raise ValidationError({"detail": "A NUL character is not allowed in the query string."})
        columns = [c.strip() for c in params.get("columns", "").split(",") if c.strip()] or None
        if params.get("dataset"):
            try:
                dataset_id = int(params["dataset"])
            except ValueError:
                raise ValidationError({"dataset": "A dataset id is an integer."}) from None
            found, why = preflight.find(dataset_id=dataset_id)
        elif params.get("name"):
            found, why = preflight.find(namespace=params.get("namespace") or None, name=params["name"])
        else:
            raise ValidationError({"name": "Give name (and namespace), or dataset=<id>."})
        return Response(preflight.answer(found, why, columns=columns, contract=params.get("contract") or None))


@extend_schema(responses={200: ContractStatusSerializer})
class DatasetContractStatus(APIView):
    """The status of the dataset's binding, its reasons and each check's latest final verdict."""

    def get(self, request, pk: int):
        status = ContractStatus.objects.select_related("contract").filter(dataset_id=pk).first()
        if status is None:
            if not Dataset.objects.filter(pk=pk).exists():
                raise NotFound(f"No dataset #{pk}.")
            raise NotFound(f"Dataset #{pk} is not bound to a contract.")
        return Response(ContractStatusSerializer(status).data)


def _incidents():
    return Incident.objects.select_related("dataset").prefetch_related("events", "teams__team")


@extend_schema(parameters=[
    OpenApiParameter("state", str, description="open, acknowledged, resolved, or unresolved (open or acknowledged)."),
    OpenApiParameter("dataset", int, description="Only this dataset's incidents."),
])
class IncidentList(generics.ListAPIView):
    """Incidents, newest first."""

    serializer_class = IncidentSerializer
    keyset = ("-opened_at", "-id")  # incidents_opened_idx

    def get_queryset(self):
        rows = _incidents().order_by("-opened_at", "-id")
        state = self.request.query_params.get("state", "")
        if state == "unresolved":
            rows = rows.unresolved()
        elif state:
            if state not in IncidentState.values:
                raise ValidationError({"state": f"{state!r} is not one of {', '.join(IncidentState.values)}, unresolved."})
            rows = rows.filter(state=state)
        dataset = self.request.query_params.get("dataset")
        if dataset:
            if not dataset.isdigit():
                raise ValidationError({"dataset": "A dataset id is an integer."})
            rows = rows.filter(dataset_id=int(dataset))
        return rows


def _get(pk: int) -> Incident:
    incident = _incidents().select_related("dataset__owner_team").filter(pk=pk).first()
    if incident is None:
        raise NotFound(f"No incident #{pk}.")
    return incident


class IncidentDetail(APIView):
    @extend_schema(responses={200: IncidentSerializer})
    def get(self, request, pk: int):
        return Response(IncidentSerializer(_get(pk)).data)


class _Action(APIView):
    write_scope = TokenScope.WRITE

    def act(self, incident: Incident, request) -> None:
        raise NotImplementedError

    @extend_schema(request=None, responses={200: IncidentSerializer})
    def post(self, request, pk: int):
        incident = _get(pk)
        try:
            self.act(incident, request)
        except PermissionDenied as exc:
            raise ApiPermissionDenied(str(exc)) from exc
        return Response(IncidentSerializer(_get(pk)).data)


class Acknowledge(_Action):
    """The owner team acknowledges the incident (audited); 409 once resolved."""

    def act(self, incident: Incident, request) -> None:
        acknowledge(incident, by=request.user)


class Resolve(_Action):
    """The owner team resolves the incident (audited); 409 once resolved."""

    def act(self, incident: Incident, request) -> None:
        resolve(incident, by=request.user, note=str(request.data.get("note", ""))[:2000] if hasattr(request.data, "get") else "")
