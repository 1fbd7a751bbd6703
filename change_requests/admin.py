"""Django admin for change requests: governance admins read them, set per-dataset review
periods and watch notifications. State changes go through the review page or the API,
so every transition keeps its permission rule and its audit row."""

from django.contrib import admin

from change_requests.models import (
    ChangeRequest,
    Notification,
    ReviewPolicy,
    TeamChannel,
    TeamReview,
)
from registry.admin import AuditedDeleteAdmin


class TeamReviewInline(admin.TabularInline):
    model = TeamReview
    extra = 0
    can_delete = False
    fields = ["team", "status", "comment", "responded_by_label", "responded_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ChangeRequest)
class ChangeRequestAdmin(admin.ModelAdmin):
    list_display = ["id", "contract", "proposed_version", "state", "deadline_at", "escalated_at", "opened_by_label"]
    list_filter = ["state"]
    search_fields = ["contract__name", "proposed_version"]
    list_select_related = ["contract"]
    inlines = [TeamReviewInline]
    readonly_fields = [f.name for f in ChangeRequest._meta.concrete_fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReviewPolicy)
class ReviewPolicyAdmin(AuditedDeleteAdmin):
    list_display = ["dataset", "review_period"]
    search_fields = ["dataset__namespace", "dataset__name"]
    autocomplete_fields = ["dataset"]


@admin.register(Notification)
class NotificationAdmin(AuditedDeleteAdmin):
    list_display = ["id", "change_request", "event", "channel", "recipient", "sent_at", "attempts", "gave_up_at"]
    list_filter = ["event", "channel"]
    search_fields = ["recipient"]
    readonly_fields = [f.name for f in Notification._meta.concrete_fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(TeamChannel)
class TeamChannelAdmin(AuditedDeleteAdmin):
    """Where each team hears about change requests besides its members' e-mail."""

    list_display = ["team", "kind", "recipient", "created_at"]
    list_filter = ["kind"]
    search_fields = ["team__name", "team__slug"]
    autocomplete_fields = ["team"]
