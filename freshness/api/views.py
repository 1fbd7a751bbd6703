from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from freshness.api.serializers import FreshnessSerializer, TransitionSerializer
from freshness.constants import FreshnessStatus
from freshness.evaluation import set_slo
from freshness.models import DatasetFreshness, FreshnessTransition
from registry.keyset import Segment
from registry.models import Dataset


def _row(dataset: Dataset) -> DatasetFreshness:
    """The stored row, or an unsaved one saying 'no SLO' (GET never writes)."""
    row = DatasetFreshness.objects.filter(dataset=dataset).first()
    if row is None:
        row = DatasetFreshness(dataset=dataset, status=FreshnessStatus.NO_SLO, status_since=None)
    row.dataset = dataset
    return row


class DatasetFreshnessView(APIView):
    """GET the SLO and status of a dataset; PUT sets the SLO (owner team or admin)."""

    @extend_schema(responses=FreshnessSerializer)
    def get(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        return Response(FreshnessSerializer(_row(dataset)).data)

    @extend_schema(request=FreshnessSerializer, responses=FreshnessSerializer)
    def put(self, request, pk: int):
        dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
        body = FreshnessSerializer(data=request.data)
        if not body.is_valid():
            raise ValidationError(body.errors)
        set_slo(dataset, by=request.user, **body.validated_data)
        return Response(FreshnessSerializer(_row(dataset)).data)


class DatasetTransitions(generics.ListAPIView):
    """The dataset's freshness timeline, newest first."""

    serializer_class = TransitionSerializer
    keyset = ("-at", "-id")  # freshness_transition_ds_idx, within the dataset

    def get_queryset(self):
        dataset = get_object_or_404(Dataset, pk=self.kwargs["pk"])
        return FreshnessTransition.objects.for_dataset(dataset).order_by("-at", "-id")


@extend_schema(parameters=[OpenApiParameter("status", str, enum=[s.value for s in FreshnessStatus])])
class FreshnessList(generics.ListAPIView):
    """Every dataset with an SLO or a recorded write, most urgent first."""

    serializer_class = FreshnessSerializer

    def get_queryset(self):
        rows = DatasetFreshness.objects.select_related("dataset").order_by("next_check_at", "dataset_id")
        status = self.request.query_params.get("status")
        if status:
            if status not in FreshnessStatus.values:
                raise ValidationError({"status": f"{status!r} is not one of {', '.join(FreshnessStatus.values)}."})
            rows = rows.filter(status=status)
        return rows

    def keyset_segments(self, rows) -> list[Segment]:
        """The rows with a next deadline, soonest first (freshness_next_check_idx), then
        those without one, by dataset: one seek a page, nulls last on every database."""
        return [Segment(rows.filter(next_check_at__isnull=False), ("next_check_at", "dataset_id")),
                Segment(rows.filter(next_check_at__isnull=True), ("dataset_id",))]
