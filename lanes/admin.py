from django.contrib import admin

from lanes.models import Lane, LaneRead


@admin.register(Lane)
class LaneAdmin(admin.ModelAdmin):
    """Read-only here: dates are set on the lane page or the API, where they are audited."""

    list_display = ["contract", "major", "deprecation_date", "sunset_date", "extended_until"]
    readonly_fields = ["contract", "major", "deprecation_date", "sunset_date", "extended_until", "extension_reason",
                       "updated_at"]

    def has_add_permission(self, request):
        return False


@admin.register(LaneRead)
class LaneReadAdmin(admin.ModelAdmin):
    list_display = ["contract", "reader_label", "team", "major", "version", "selector", "fetches", "last_seen_at"]
    list_select_related = ["contract", "team"]
    readonly_fields = [f.name for f in LaneRead._meta.fields]

    def has_add_permission(self, request):
        return False
