from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError

from freshness.evaluation import set_slo
from freshness.models import DatasetFreshness, EvaluatorState, FreshnessTransition
from registry.admin import AppendOnlyAdmin, AuditedDeleteAdmin, KeysetAdmin, ReadOnlyAdmin


@admin.register(DatasetFreshness)
class DatasetFreshnessAdmin(KeysetAdmin, AuditedDeleteAdmin):
    """The SLO is edited here; the save goes through set_slo, so it is validated,
    audited and re-evaluated like an edit on the page or through the API."""

    list_display = ["dataset", "status", "max_age", "warn_after", "empty_write_counts", "last_write_at", "next_check_at"]
    keyset = ("pk",)
    list_filter = ["status", "empty_write_counts"]
    search_fields = ["dataset__namespace", "dataset__name"]
    list_select_related = ["dataset"]
    autocomplete_fields = ["dataset"]
    fields = ["dataset", "max_age", "warn_after", "empty_write_counts", "status", "status_since",
              "last_write_at", "last_empty_write_at", "next_check_at", "task_eta", "evaluated_at"]
    readonly_fields = ["status", "status_since", "last_write_at", "last_empty_write_at", "next_check_at",
                       "task_eta", "evaluated_at"]

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "dataset"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        try:
            set_slo(obj.dataset, max_age=obj.max_age, warn_after=obj.warn_after,
                    empty_write_counts=obj.empty_write_counts, by=request.user)
        except (ValidationError, PermissionDenied) as exc:
            messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # remove an SLO by clearing max_age, so the change is recorded


@admin.register(FreshnessTransition)
class FreshnessTransitionAdmin(KeysetAdmin, AppendOnlyAdmin):
    """Newest first, by id (transitions are recorded as they happen): no date hierarchy,
    whose years and months would read every transition."""

    list_display = ["at", "dataset", "from_status", "to_status", "source", "due_at", "reason"]
    list_filter = ["to_status", "source"]
    search_fields = ["dataset__namespace", "dataset__name"]
    list_select_related = ["dataset"]
    keyset = ("-pk",)


@admin.register(EvaluatorState)
class EvaluatorStateAdmin(ReadOnlyAdmin):
    list_display = ["last_sweep_at", "last_sweep_seconds", "last_sweep_transitions"]
