from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.api.serializers import (
    ClaimSerializer,
    ConsumerRegistrationSerializer,
    ConsumerSerializer,
    DatasetDetailSerializer,
    DatasetSerializer,
    JobNamespaceSerializer,
    TeamSerializer,
)
from registry.models import Consumer, Dataset, Team


class TeamList(generics.ListAPIView):
    queryset = Team.objects.all()
    serializer_class = TeamSerializer


@extend_schema(parameters=[
    OpenApiParameter("owner_team", str, description="Slug of the owning team."),
    OpenApiParameter("unowned", bool, description="Only datasets that no team owns yet."),
    OpenApiParameter("search", str, description="Text in the namespace, name or description."),
])
class DatasetList(generics.ListAPIView):
    serializer_class = DatasetSerializer

    def get_queryset(self):
        params = self.request.query_params
        datasets = Dataset.objects.for_listing()
        if params.get("owner_team"):
            datasets = datasets.filter(owner_team__slug=params["owner_team"])
        if params.get("unowned", "").lower() in {"1", "true", "yes"}:
            datasets = datasets.unowned()
        if params.get("search"):
            datasets = datasets.matching(params["search"])
        return datasets.order_by("namespace", "name")


def _consumers_prefetch() -> Prefetch:
    return Prefetch("consumers", queryset=Consumer.objects.select_related("team", "registered_by"))


class DatasetDetail(generics.RetrieveAPIView):
    serializer_class = DatasetDetailSerializer

    def get_queryset(self):
        return Dataset.objects.for_listing().prefetch_related(_consumers_prefetch())


class DatasetClaim(APIView):
    @extend_schema(request=ClaimSerializer, responses=DatasetSerializer)
    def post(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        body = ClaimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        dataset.claim(body.validated_data["team"], owner=body.validated_data["owner"], by=request.user)
        fresh = Dataset.objects.for_listing().get(pk=pk)
        return Response(DatasetSerializer(fresh, context={"request": request}).data)


class DatasetConsumers(APIView):
    @extend_schema(responses=ConsumerSerializer(many=True))
    def get(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        consumers = dataset.consumers.select_related("team", "registered_by")
        return Response(ConsumerSerializer(consumers, many=True).data)

    @extend_schema(request=ConsumerRegistrationSerializer, responses=ConsumerSerializer)
    def post(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        body = ConsumerRegistrationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        consumer = dataset.register_consumer(body.validated_data["team"], by=request.user,
                                             columns=body.validated_data["columns"])
        return Response(ConsumerSerializer(consumer).data, status=status.HTTP_201_CREATED)


class DatasetConsumerDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, pk: int, team: str):
        dataset = get_object_or_404(Dataset, pk=pk)
        consumer_team = get_object_or_404(Team, slug=team)
        if not dataset.unregister_consumer(consumer_team, by=request.user):
            return Response({"detail": f"Team {team} is not a consumer of {dataset}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamJobNamespaces(APIView):
    """The OpenLineage job namespaces whose jobs are this team's (so lineage's readers are attributed to it)."""

    @extend_schema(responses=JobNamespaceSerializer(many=True))
    def get(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        return Response(JobNamespaceSerializer(owner.job_namespaces.select_related("team"), many=True).data)

    @extend_schema(request=JobNamespaceSerializer, responses={201: JobNamespaceSerializer})
    def post(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        body = JobNamespaceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        mapping = owner.map_job_namespace(body.validated_data["namespace"], by=request.user)
        return Response(JobNamespaceSerializer(mapping).data, status=status.HTTP_201_CREATED)


class TeamJobNamespaceDetail(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, team: str, namespace: str):
        owner = get_object_or_404(Team, slug=team)
        if not owner.unmap_job_namespace(namespace, by=request.user):
            return Response({"detail": f"Team {team} has no job namespace {namespace}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)
