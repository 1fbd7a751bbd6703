"""Schema drift in the API: /api/datasets/<pk>/drift/ and /api/drift/."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.generics import ListAPIView

from contracts_app.models import SchemaDriftCheck
from registry.models import Dataset


class DriftFindingSerializer(serializers.Serializer):
    kind = serializers.CharField()
    field = serializers.CharField(allow_blank=True)
    severity = serializers.ChoiceField(choices=["drift", "note"])
    expected = serializers.JSONField(allow_null=True)
    actual = serializers.JSONField(allow_null=True)
    message = serializers.CharField()


class SchemaDriftCheckSerializer(serializers.ModelSerializer):
    namespace = serializers.CharField(source="dataset.namespace", read_only=True)
    name = serializers.CharField(source="dataset.name", read_only=True)
    run_id = serializers.UUIDField(source="run_uuid", read_only=True)
    contract = serializers.CharField(source="contract_name", read_only=True)
    drifted = serializers.BooleanField(read_only=True)
    findings = DriftFindingSerializer(many=True, read_only=True)

    class Meta:
        model = SchemaDriftCheck
        fields = ["dataset", "namespace", "name", "run_id", "job_namespace", "job_name", "event_type", "event_time",
                  "contract", "version", "drifted", "drift_count", "findings", "checked_at"]


class DatasetDriftList(generics.ListAPIView):
    """Schema checks of one dataset's runs, newest first."""

    serializer_class = SchemaDriftCheckSerializer
    keyset = ("-id",)  # drift_dataset_recent_idx: checks are recorded in time order

    def get_queryset(self):
        dataset = get_object_or_404(Dataset, pk=self.kwargs["pk"])
        return SchemaDriftCheck.objects.filter(dataset=dataset).select_related("dataset")


@extend_schema(parameters=[OpenApiParameter("drifted", bool, description="Only datasets whose latest check drifted.")])
class LatestDriftList(ListAPIView):
    """The latest schema check of every dataset bound to a contract."""

    serializer_class = SchemaDriftCheckSerializer
    keyset = ("dataset__namespace", "dataset__name")  # one check a dataset

    def get_queryset(self):
        checks = SchemaDriftCheck.objects.latest_per_dataset().select_related("dataset")
        if self.request.query_params.get("drifted", "").lower() in {"1", "true", "yes"}:
            checks = checks.drifted()
        return checks.order_by("dataset__namespace", "dataset__name")
