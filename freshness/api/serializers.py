from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from freshness.constants import FreshnessStatus
from freshness.models import DatasetFreshness, FreshnessTransition
from registry.env import duration_of_seconds, parse_duration


@extend_schema_field({"oneOf": [{"type": "number", "minimum": 0, "exclusiveMinimum": True},
                                 {"type": "string", "example": "6h"}],
                       "nullable": True, "description": "Seconds, or a duration such as 15m, 6h, 2d, 1w."})
class DurationField(serializers.Field):
    """A duration: a number of seconds, or text such as 15m, 6h, 2d; read back as seconds."""

    default_error_messages = {"invalid": "{detail}"}

    def to_internal_value(self, data) -> timedelta:
        if isinstance(data, bool):
            self.fail("invalid", detail="Expected a number of seconds or a duration such as 6h.")
        if isinstance(data, int | float):
            if data <= 0:
                self.fail("invalid", detail=f"{data} must be a positive number of seconds.")
            try:
                return duration_of_seconds(data)
            except ValueError as exc:
                self.fail("invalid", detail=str(exc))
        try:
            return parse_duration(str(data))
        except ValueError as exc:
            self.fail("invalid", detail=str(exc))

    def to_representation(self, value: timedelta) -> float:
        return value.total_seconds()


class TransitionSerializer(serializers.ModelSerializer):
    lag_s = serializers.SerializerMethodField()

    class Meta:
        model = FreshnessTransition
        fields = ["from_status", "to_status", "at", "due_at", "lag_s", "source", "reason"]

    def get_lag_s(self, obj) -> float | None:
        return None if obj.lag is None else obj.lag.total_seconds()


class FreshnessSerializer(serializers.Serializer):
    """The SLO and the current status of one dataset."""

    dataset = serializers.IntegerField(source="dataset_id", read_only=True)
    namespace = serializers.CharField(source="dataset.namespace", read_only=True)
    name = serializers.CharField(source="dataset.name", read_only=True)
    max_age = DurationField(allow_null=True, help_text="Seconds, or text such as 6h. null removes the SLO.")
    warn_after = DurationField(allow_null=True, required=False, default=None)
    empty_write_counts = serializers.BooleanField(required=False, default=False)
    status = serializers.ChoiceField(choices=FreshnessStatus.choices, read_only=True)
    # null until the dataset is written, or while it has no SLO
    status_since = serializers.DateTimeField(read_only=True, allow_null=True)
    last_write_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_empty_write_at = serializers.DateTimeField(read_only=True, allow_null=True)
    age_s = serializers.SerializerMethodField()
    next_deadline = serializers.DateTimeField(source="next_check_at", read_only=True, allow_null=True)
    stale_at = serializers.DateTimeField(read_only=True, allow_null=True)

    def get_age_s(self, obj: DatasetFreshness) -> float | None:
        age = obj.age_at(timezone.now())
        return None if age is None else age.total_seconds()
