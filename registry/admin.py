from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError

from registry.models import ApiToken, AuditEvent, Consumer, Dataset, Membership, Team
from registry.usage import ColumnRead, NamespaceTeam


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the product writes itself: shown in the admin, never edited there."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class AppendOnlyAdmin(ReadOnlyAdmin):
    """A record of what happened (audit events, transitions): not even deleted."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["team", "user", "joined_at"]
    list_filter = ["team"]
    autocomplete_fields = ["team", "user"]


class ConsumerInline(admin.TabularInline):
    model = Consumer
    extra = 0
    readonly_fields = ["team", "registered_by", "registered_at"]
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    """Admins assign ownership here; the change goes through Dataset.assign_owner
    so it is audited like any other."""

    list_display = ["namespace", "name", "owner_team", "owner", "compatibility_mode"]
    list_filter = ["owner_team", "compatibility_mode"]
    search_fields = ["namespace", "name"]
    list_select_related = ["owner_team", "owner"]
    autocomplete_fields = ["owner_team", "owner"]
    inlines = [ConsumerInline]

    def save_model(self, request, obj, form, change):
        ownership_changed = change and ({"owner_team", "owner"} & set(form.changed_data))
        if not ownership_changed:
            super().save_model(request, obj, form, change)
            return
        team, owner = obj.owner_team, obj.owner
        original = Dataset.objects.get(pk=obj.pk)
        obj.owner_team, obj.owner = original.owner_team, original.owner
        super().save_model(request, obj, form, change)
        try:
            obj.assign_owner(team, owner=owner, by=request.user)
        except (ValidationError, PermissionDenied) as exc:
            messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "team", "key_prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    fields = ["name", "user", "team", "can_write_lineage", "key_prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return [*self.readonly_fields, "user", "team", "name"]
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        token, secret = ApiToken.issue(obj.name, user=obj.user, team=obj.team, by=request.user,
                                       can_write_lineage=obj.can_write_lineage)
        obj.pk = token.pk
        messages.warning(request, f"The secret of token '{token.name}' is {secret} — copy it now, it is shown only once.")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.active():
            token.revoke(by=request.user)


@admin.register(AuditEvent)
class AuditEventAdmin(AppendOnlyAdmin):
    list_display = ["at", "actor_label", "action", "object_type", "object_repr"]
    list_filter = ["action", "object_type"]
    search_fields = ["object_repr", "actor_label"]
    date_hierarchy = "at"


@admin.register(NamespaceTeam)
class NamespaceTeamAdmin(admin.ModelAdmin):
    """Which team's jobs an OpenLineage job namespace holds (attributes observed readers to teams)."""

    list_display = ["namespace", "team", "created_at"]
    search_fields = ["namespace", "team__name", "team__slug"]
    autocomplete_fields = ["team"]


@admin.register(ColumnRead)
class ColumnReadAdmin(ReadOnlyAdmin):
    """What lineage showed each job reading (written by the ingest)."""

    list_display = ["dataset", "job_namespace", "job_name", "column", "kind", "source", "last_seen_at"]
    list_filter = ["kind", "source"]
    search_fields = ["job_name", "job_namespace", "column", "dataset__name"]
    list_select_related = ["dataset"]
