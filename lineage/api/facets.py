"""What producers say about a dataset, in the API: its current schema and kept
facets, its aliases, and its data-quality checks.

    GET /api/datasets/<pk>/schema/    the current schema, facets, aliases and quality state
    GET /api/datasets/<pk>/quality/   the dataset's checks, newest first
    GET /api/quality/?failing=true    each (dataset, testing job)'s latest check
"""

from __future__ import annotations

from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage.models import DatasetAlias, DatasetFacet, DatasetSchema, QualityCheck
from registry.models import Dataset


class QualityCheckSerializer(serializers.ModelSerializer):
    namespace = serializers.CharField(source="dataset.namespace", read_only=True)
    name = serializers.CharField(source="dataset.name", read_only=True)
    run_id = serializers.UUIDField(source="run_uuid", read_only=True, allow_null=True)
    failed_assertions = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = QualityCheck
        fields = ["dataset", "namespace", "name", "run_id", "job_namespace", "job_name", "event_type", "event_time",
                  "assertion_count", "failed_count", "failed_assertions", "assertions", "metrics"]


class ColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)


class CurrentSchemaSerializer(serializers.ModelSerializer):
    columns = ColumnSerializer(source="listed_columns", many=True, read_only=True)
    job = serializers.SerializerMethodField()
    run_id = serializers.UUIDField(source="run_uuid", read_only=True, allow_null=True)

    class Meta:
        model = DatasetSchema
        fields = ["columns", "complete", "origin", "job", "run_id", "event_time", "updated_at"]

    def get_job(self, schema: DatasetSchema) -> dict | None:
        return {"namespace": schema.job.namespace, "name": schema.job.name} if schema.job_id else None


class KeptFacetSerializer(serializers.ModelSerializer):
    run_id = serializers.UUIDField(source="run_uuid", read_only=True, allow_null=True)

    class Meta:
        model = DatasetFacet
        fields = ["name", "facet", "origin", "job_namespace", "job_name", "run_id", "event_time"]


class AliasSerializer(serializers.ModelSerializer):
    class Meta:
        model = DatasetAlias
        fields = ["namespace", "name", "kind"]


class DatasetProducerView(APIView):
    """The dataset's current schema (with where it came from), the facets producers
    sent (ownership beside the registry's owner, documentation, symlinks, lifecycle
    state, …), its aliases and its quality state. Six queries."""

    @extend_schema(responses={200: inline_serializer("DatasetProducerFacts", {
        "dataset": serializers.IntegerField(), "namespace": serializers.CharField(), "name": serializers.CharField(),
        "owner_team": serializers.CharField(allow_null=True), "schema": CurrentSchemaSerializer(allow_null=True),
        "facets": KeptFacetSerializer(many=True), "aliases": AliasSerializer(many=True),
        "alias_of": serializers.ListField(child=serializers.DictField()),
        "failed_assertions": serializers.IntegerField(), "quality": QualityCheckSerializer(many=True)})},
        summary="A dataset's current schema, producers' facets, aliases and quality state.")
    def get(self, request, pk: int):
        dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
        schema = DatasetSchema.objects.select_related("job").filter(dataset_id=pk).first()
        aliases = list(DatasetAlias.objects.filter(Q(dataset_id=pk) | Q(namespace=dataset.namespace, name=dataset.name))
                       .select_related("dataset"))
        quality = list(QualityCheck.objects.filter(dataset_id=pk).latest_per_job().select_related("dataset"))
        return Response({
            "dataset": dataset.pk, "namespace": dataset.namespace, "name": dataset.name,
            "owner_team": dataset.owner_team.slug if dataset.owner_team else None,
            "schema": CurrentSchemaSerializer(schema).data if schema else None,
            "facets": KeptFacetSerializer(DatasetFacet.objects.filter(dataset_id=pk), many=True).data,
            "aliases": AliasSerializer([a for a in aliases if a.dataset_id == pk], many=True).data,
            "alias_of": [{"dataset": a.dataset_id, "namespace": a.dataset.namespace, "name": a.dataset.name}
                         for a in aliases if a.dataset_id != pk],
            "failed_assertions": sum(c.failed_count for c in quality),
            "quality": QualityCheckSerializer(quality, many=True).data,
        })


class DatasetQualityList(ListAPIView):
    """The dataset's data-quality checks (one per run), newest first."""

    serializer_class = QualityCheckSerializer
    keyset = ("-event_time", "-id")  # lineage_quality_recent_idx, within the dataset

    def get_queryset(self):
        dataset = get_object_or_404(Dataset, pk=self.kwargs["pk"])
        return QualityCheck.objects.filter(dataset=dataset).select_related("dataset")


@extend_schema(parameters=[OpenApiParameter("failing", bool, description="Only checks with a failed assertion.")])
class LatestQualityList(ListAPIView):
    """Every dataset's quality state: the latest check of each job testing it."""

    serializer_class = QualityCheckSerializer
    keyset = ("dataset__namespace", "dataset__name", "job_namespace", "job_name")  # one check a (dataset, job)

    def get_queryset(self):
        checks = QualityCheck.objects.latest_per_job().select_related("dataset")
        if self.request.query_params.get("failing", "").lower() in {"1", "true", "yes"}:
            checks = checks.failing()
        return checks.order_by("dataset__namespace", "dataset__name", "job_namespace", "job_name")
