"""Lineage in the admin: read-only, since events are the record and the rows
derived from them are rewritten by the next event."""

from django.contrib import admin

from lineage.models import Job, Run, RunEvent
from lineage.validation import EVENT_TYPES
from registry.admin import KeysetAdmin, ReadOnlyAdmin


@admin.register(Job)
class JobAdmin(KeysetAdmin, ReadOnlyAdmin):
    list_display = ["namespace", "name", "updated_at"]
    keyset = ("namespace", "name")
    search_fields = ["namespace", "name"]


@admin.register(Run)
class RunAdmin(KeysetAdmin, ReadOnlyAdmin):
    list_display = ["run_uuid", "job", "state", "state_at", "started_at", "ended_at"]
    # Newest run first, by its id: an index on state_at would cost every event's update.
    keyset = ("-pk",)
    list_filter = ["state"]
    list_select_related = ["job"]
    search_fields = ["run_uuid", "job__name"]


class EventTypeFilter(admin.SimpleListFilter):
    """OpenLineage's event types, named rather than read from the events: a DISTINCT over
    every raw event would read them all on every visit."""

    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request, model_admin):
        return [(kind, kind) for kind in EVENT_TYPES]

    def queryset(self, request, queryset):
        return queryset.filter(event_type=self.value()) if self.value() else queryset


@admin.register(RunEvent)
class RunEventAdmin(KeysetAdmin, ReadOnlyAdmin):
    list_display = ["event_type", "run_uuid", "job_namespace", "job_name", "event_time", "received_at"]
    keyset = ("-event_time", "-id")  # lineage_runevent_time_idx
    list_filter = [EventTypeFilter]
    search_fields = ["run_uuid", "job_name"]
    # By the partition key: a day or month picked reads only its partitions.
    date_hierarchy = "event_time"
