import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse

from registry.constants import AuditAction
from registry.forms import ApiTokenForm
from registry.jobs import DbtOwner, JobTeam, OwnershipRules, TeamAlias
from registry.keyset import BadToken, keyset_page
from registry.models import (
    ApiToken,
    AuditEvent,
    Consumer,
    Dataset,
    Membership,
    Team,
    audit_type,
    is_governance_admin,
)
from registry.ownership import (
    declare_alias,
    normal_rules_text,
    parse_rules,
    remove_alias,
    save_ownership_rules,
)
from registry.usage import ColumnRead, InputSchema, NamespaceTeam

# Governance admins work here (SPEC.md, roles): the admin names the product, not Django.
admin.site.site_header = "Dataset registry administration"
admin.site.site_title = "Dataset registry"
admin.site.index_title = "Governance"

# Never copied into the audit log, wherever they appear in a deleted row.
_SECRET_WORDS = ("secret", "password", "hash", "token")


def _scrubbed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "(hidden)" if any(w in str(k).lower() for w in _SECRET_WORDS) else _scrubbed(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def last_values(obj: models.Model) -> dict[str, Any]:
    """A deleted row's column values, JSON-safe, with secrets hidden: the audit row's `before`."""
    values = {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}
    return _scrubbed(json.loads(json.dumps(values, cls=DjangoJSONEncoder)))


class AuditedDeleteAdmin(admin.ModelAdmin):
    """Every delete in the admin writes an audit row in the delete's transaction, and a
    delete that would drop what others depend on is refused on the confirmation page.

    A model says why one of its rows cannot go with `deletion_refusal() -> str`; the
    admin lists those sentences where Django lists protected objects, so neither
    the delete view nor the "delete selected" action goes ahead. A model with a
    delete of its own (`delete_unused(by=)`) is deleted through it."""

    def deletion_refusals(self, objs) -> list[str]:
        return [r for r in (getattr(o, "deletion_refusal", lambda: "")() for o in objs) if r]

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, perms_needed, [*self.deletion_refusals(objs), *protected]

    def delete_model(self, request, obj) -> None:
        with transaction.atomic():
            if hasattr(obj, "delete_unused"):
                obj.delete_unused(by=request.user)
                return
            refusals = self.deletion_refusals([obj])
            if refusals:
                raise PermissionDenied(refusals[0])  # the confirmation page refused already; a forged POST
            AuditEvent.record(request.user, AuditAction.DELETED_IN_ADMIN, obj, before=last_values(obj), after=None)
            obj.delete()

    def delete_queryset(self, request, queryset) -> None:
        # One row at a time, each with its audit row (a bulk DELETE would skip both).
        with transaction.atomic():
            for obj in queryset:
                self.delete_model(request, obj)

    def save_formset(self, request, form, formset, change) -> None:
        """Rows deleted in an inline (a team's memberships) are audited like any other delete."""
        instances = formset.save(commit=False)
        for obj in formset.deleted_objects:
            AuditEvent.record(request.user, AuditAction.DELETED_IN_ADMIN, obj, before=last_values(obj), after=None)
            obj.delete()
        for instance in instances:
            instance.save()
        formset.save_m2m()


class ReadOnlyAdmin(AuditedDeleteAdmin):
    """Rows the product writes itself: shown in the admin, never edited there."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class AppendOnlyAdmin(ReadOnlyAdmin):
    """A record of what happened (audit events, transitions): not even deleted."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class KeysetChangeList(ChangeList):
    """An admin list in keyset pages (registry.keyset) through the index of the admin's
    `keyset`: Next and Previous rather than page numbers, no COUNT and no OFFSET, so
    the latest rows and the oldest cost the same however long the list."""

    def get_results(self, request):
        after, before = getattr(request, "keyset_tokens", (None, None))
        key, size = self.model_admin.keyset, self.list_per_page
        try:
            page = keyset_page(self.queryset, key=key, size=size, after=after, before=before)
        except BadToken:
            page = keyset_page(self.queryset, key=key, size=size)
        self.result_list = page.rows
        self.result_count = len(page.rows)
        self.full_result_count = None
        self.show_full_result_count = False
        self.show_admin_actions = True
        self.can_show_all = False
        self.multi_page = page.has_next or page.has_previous
        self.paginator = NoPageNumbers()
        self.keyset_paged = True  # templates/admin/pagination.html: Next and Previous links
        self.next_url = self.get_query_string({"after": page.next_token}) if page.has_next else None
        self.previous_url = self.get_query_string({"before": page.previous_token}) if page.has_previous else None


class NoPageNumbers:
    """What the admin's pagination tag asks of a paginator, for a list without page numbers."""

    def get_elided_page_range(self, number):
        return []


class KeysetAdmin(admin.ModelAdmin):
    """A ModelAdmin whose list pages by keyset (KeysetChangeList) through `keyset`, its
    ordering's index; the columns do not re-sort it (an order no index holds)."""

    keyset: tuple[str, ...] = ("-pk",)
    show_full_result_count = False
    sortable_by: tuple[str, ...] = ()

    def get_changelist(self, request, **kwargs):
        return KeysetChangeList

    def changelist_view(self, request, extra_context=None):
        # The tokens are not lookups: the admin would refuse them as unknown filters.
        request.GET = request.GET.copy()
        request.keyset_tokens = (request.GET.pop("after", [None])[-1] or None,
                                 request.GET.pop("before", [None])[-1] or None)
        return super().changelist_view(request, extra_context)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(AuditedDeleteAdmin):
    list_display = ["name", "slug", "parent"]
    search_fields = ["name", "slug"]
    autocomplete_fields = ["parent"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(AuditedDeleteAdmin):
    list_display = ["team", "user", "role", "joined_at"]
    list_filter = ["team", "role"]
    autocomplete_fields = ["team", "user"]


class ConsumerInline(admin.TabularInline):
    model = Consumer
    extra = 0
    readonly_fields = ["team", "registered_by", "registered_at"]
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), max_length=2000,
        error_messages={"required": "Say why the ownership changes; the audit log keeps the reason."},
        help_text="Why, for the audit log: the teams involved read it there.")


class OwnerForm(ReasonForm):
    team = forms.ModelChoiceField(queryset=Team.objects.all(), help_text="The team that will own the datasets.")
    owner = forms.TypedChoiceField(
        coerce=int, empty_value=None, required=False,
        help_text="The owner person: a member of the chosen team (the list is grouped by team).")
    field_order = ["team", "owner", "reason"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only people who may own a dataset are offered: active members, under the team
        # they belong to, so an admin picks "Checkout: alice", not any account in the database.
        groups: dict[str, list[tuple[int, str]]] = {}
        members = (Membership.objects.filter(user__is_active=True).select_related("team", "user")
                   .order_by("team__name", "user__username"))
        for membership in members:
            groups.setdefault(membership.team.name, []).append((membership.user_id, membership.user.get_username()))
        self.fields["owner"].choices = [("", "— nobody in particular —"), *groups.items()]

    def clean_owner(self):
        pk = self.cleaned_data.get("owner")
        return get_user_model().objects.filter(pk=pk, is_active=True).first() if pk else None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        team, owner = cleaned.get("team"), cleaned.get("owner")
        if team and owner and not Membership.objects.filter(team=team, user=owner).exists():
            self.add_error("owner", f"{owner.get_username()} is not a member of team {team.slug}; "
                                    "the owner must belong to the owning team.")
        return cleaned


@dataclass(frozen=True)
class OwnershipAction:
    """One of the admin's ownership actions: which datasets it applies to and what it asks."""

    title: str
    verb: str
    form: type[ReasonForm]
    wants_owned: bool
    refusal: str


ASSIGN = OwnershipAction(
    "Assign an owner", "Assign", OwnerForm, wants_owned=False,
    refusal="Dataset {dataset} is already owned by team {team}: transfer it instead.")
TRANSFER = OwnershipAction(
    "Transfer to another owner", "Transfer", OwnerForm, wants_owned=True,
    refusal="Dataset {dataset} has no owner to transfer from: assign one instead.")
UNCLAIM = OwnershipAction(
    "Unclaim (leave without an owner)", "Unclaim", ReasonForm, wants_owned=True,
    refusal="Dataset {dataset} has no owner already.")


@admin.register(Dataset)
class DatasetAdmin(KeysetAdmin, AuditedDeleteAdmin):
    """Ownership changes only through the assign, transfer and unclaim actions: each asks
    for a reason and goes through Dataset.assign_owner, so it is audited with it."""

    list_display = ["namespace", "name", "owner_team", "owner", "compatibility_mode"]
    keyset = ("namespace", "name")
    list_filter = ["owner_team", "compatibility_mode"]
    search_fields = ["namespace", "name"]
    list_select_related = ["owner_team", "owner"]
    readonly_fields = ["owner_team", "owner"]
    inlines = [ConsumerInline]
    actions = ["assign_owner", "transfer_owner", "unclaim"]
    ownership_template = "admin/registry/dataset/ownership_action.html"

    def has_governance_permission(self, request) -> bool:
        return is_governance_admin(request.user) and self.has_change_permission(request)

    @admin.action(description="Assign an owner to the selected unowned datasets", permissions=["governance"])
    def assign_owner(self, request, queryset):
        return self._change_ownership(request, queryset, ASSIGN)

    @admin.action(description="Transfer the selected datasets to another owner", permissions=["governance"])
    def transfer_owner(self, request, queryset):
        return self._change_ownership(request, queryset, TRANSFER)

    @admin.action(description="Unclaim the selected datasets (leave them without an owner)",
                  permissions=["governance"])
    def unclaim(self, request, queryset):
        return self._change_ownership(request, queryset, UNCLAIM)

    def _change_ownership(self, request, queryset, action: OwnershipAction):
        """1. Refuse the whole selection if one dataset does not fit the action (an owned one
        to assign, an unowned one to transfer or unclaim): nothing changes half-way.
        2. Without a submitted form, show the form page (the selection rides along).
        3. With a valid form, change every dataset through assign_owner in one transaction."""
        datasets = list(queryset.select_related("owner_team", "owner").order_by("namespace", "name"))
        misfits = [d for d in datasets if d.is_owned != action.wants_owned]
        if misfits:
            for d in misfits:
                self.message_user(request, action.refusal.format(
                    dataset=d, team=d.owner_team.slug if d.owner_team_id else ""), messages.ERROR)
            return None
        form = action.form(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            team, owner = form.cleaned_data.get("team"), form.cleaned_data.get("owner")
            try:
                with transaction.atomic():
                    for dataset in datasets:
                        dataset.assign_owner(team, owner=owner, by=request.user, reason=form.cleaned_data["reason"])
            except (ValidationError, PermissionDenied) as exc:
                form.add_error(None, " ".join(getattr(exc, "messages", [str(exc)])))
            else:
                outcome = f"now owned by team {team.slug}" if team else "now without an owner"
                self.message_user(request, f"{len(datasets)} dataset{pluralize(len(datasets))} {outcome}: "
                                           f"{', '.join(map(str, datasets))}.", messages.SUCCESS)
                return None
        return TemplateResponse(request, self.ownership_template, {
            **self.admin_site.each_context(request),
            "title": action.title, "verb": action.verb, "form": form, "datasets": datasets,
            "action_name": request.POST.get("action"), "opts": self.model._meta,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        })


@admin.register(ApiToken)
class ApiTokenAdmin(AuditedDeleteAdmin):
    form = ApiTokenForm
    list_display = ["name", "user", "team", "scopes", "key_prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    fields = ["name", "user", "team", "scopes", "key_prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            # A token's scopes are fixed: for other rights, issue another token (audited).
            return [*self.readonly_fields, "user", "team", "name", "scopes"]
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        token, secret = ApiToken.issue(obj.name, user=obj.user, team=obj.team, by=request.user,
                                       scopes=obj.scopes.split())
        obj.pk = token.pk
        messages.warning(request, f"The secret of token '{token.name}' is {secret} — copy it now, it is shown only once.")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.active():
            token.revoke(by=request.user)


# The audit log's filters offer what its latest rows name: a DISTINCT over the whole log
# would read every row on every visit. Older actors and datasets are one search away.
RECENT_AUDIT_ROWS = 10_000


def recent_audit_rows():
    """The latest RECENT_AUDIT_ROWS rows' ids (a backward walk of the `at` index)."""
    return AuditEvent.objects.order_by("-at", "-id").values("id")[:RECENT_AUDIT_ROWS]


class ActorFilter(admin.SimpleListFilter):
    """Who acted, by the label the row keeps (people, team tokens and "system" alike,
    and people since removed), among the latest rows."""

    title = "actor"
    parameter_name = "actor"

    def lookups(self, request, model_admin):
        labels = (AuditEvent.objects.filter(id__in=recent_audit_rows()).order_by("actor_label")
                  .values_list("actor_label", flat=True).distinct())
        return [(label, label) for label in labels]

    def queryset(self, request, queryset):
        return queryset.filter(actor_label=self.value()) if self.value() else queryset


class ActionFilter(admin.SimpleListFilter):
    title = "action"
    parameter_name = "action"

    def lookups(self, request, model_admin):
        actions = (AuditEvent.objects.filter(id__in=recent_audit_rows()).order_by("action")
                   .values_list("action", flat=True).distinct())
        return [(action, action) for action in actions]

    def queryset(self, request, queryset):
        return queryset.filter(action=self.value()) if self.value() else queryset


class DatasetFilter(admin.SimpleListFilter):
    """The rows about one dataset: its ownership, consumers, SLO, bindings and deletion
    (each recorded on the dataset itself). Deleted datasets stay listed: the log outlives
    them; those the latest rows name are offered (`?dataset=<id>` finds any)."""

    title = "dataset"
    parameter_name = "dataset"

    def lookups(self, request, model_admin):
        rows = AuditEvent.objects.filter(id__in=recent_audit_rows(), object_type=audit_type(Dataset)).order_by(
            ).values_list("object_id", "object_repr").distinct()
        names = dict(rows)  # one name per dataset, should its namespace or name have been edited
        return sorted(names.items(), key=lambda item: item[1])

    def queryset(self, request, queryset):
        if not self.value():
            return queryset
        return queryset.filter(object_type=audit_type(Dataset), object_id=self.value())


class ObjectTypeFilter(admin.SimpleListFilter):
    title = "object type"
    parameter_name = "object_type"

    def lookups(self, request, model_admin):
        types = (AuditEvent.objects.filter(id__in=recent_audit_rows()).order_by("object_type")
                 .values_list("object_type", flat=True).distinct())
        return [(t, t) for t in types]

    def queryset(self, request, queryset):
        return queryset.filter(object_type=self.value()) if self.value() else queryset


@admin.register(AuditEvent)
class AuditEventAdmin(KeysetAdmin, AppendOnlyAdmin):
    """The audit log: append-only in the database, read-only here. The apps built on the
    core add filters of their own (contracts_app.admin adds the contract). Newest first,
    in keyset pages through the `at` index; no date hierarchy (its years and months are
    a DISTINCT over every row)."""

    list_display = ["at", "actor_label", "action", "object_type", "object_repr"]
    list_filter = [ActorFilter, DatasetFilter, ActionFilter, ObjectTypeFilter]
    search_fields = ["object_repr", "actor_label"]
    keyset = ("-at", "-id")
    readonly_fields = ["at", "actor", "actor_label", "action", "object_type", "object_id", "object_repr",
                       "before", "after"]


@admin.register(NamespaceTeam)
class NamespaceTeamAdmin(AuditedDeleteAdmin):
    """Which team's jobs an OpenLineage job namespace holds (attributes observed readers to teams)."""

    list_display = ["namespace", "team", "created_at"]
    search_fields = ["namespace", "team__name", "team__slug"]
    autocomplete_fields = ["team"]


@admin.register(ColumnRead)
class ColumnReadAdmin(KeysetAdmin, ReadOnlyAdmin):
    """What lineage showed each job reading (written by the ingest), newest rows first."""

    keyset = ("-pk",)
    list_display = ["dataset", "job_namespace", "job_name", "column", "kind", "source", "last_seen_at"]
    list_filter = ["kind", "source"]
    search_fields = ["job_name", "job_namespace", "column", "dataset__name"]
    list_select_related = ["dataset"]


@admin.register(InputSchema)
class InputSchemaAdmin(KeysetAdmin, ReadOnlyAdmin):
    """The schema each job's events gave its inputs (written by the ingest; lanes match it)."""

    keyset = ("-pk",)
    list_display = ["dataset", "job_namespace", "job_name", "fingerprint", "complete", "last_seen_at"]
    search_fields = ["job_name", "job_namespace", "dataset__name"]
    list_select_related = ["dataset"]


class OwnershipRulesForm(forms.ModelForm):
    class Meta:
        model = OwnershipRules
        fields = ["text", "note"]
        widgets = {"text": forms.Textarea(attrs={"rows": 24, "cols": 100, "class": "vLargeTextField"})}
        help_texts = {"text": "CODEOWNERS syntax, the last matching line winning: `models/finance/** @finance` "
                              "(dbt's original_file_path), `ns:dbt_shop job:*.finance_* @finance` (job-name globs), "
                              "`@owner` a team slug or alias."}

    def clean_text(self) -> str:
        text = normal_rules_text(self.cleaned_data["text"])
        problems = parse_rules(text).problems
        if problems:
            raise ValidationError(problems)
        return text


@admin.register(OwnershipRules)
class OwnershipRulesAdmin(admin.ModelAdmin):
    """The job ownership rules file, one version per change: "Add" starts from the version in
    force; saving makes a new version (audited) and decides every job's team again."""

    form = OwnershipRulesForm
    list_display = ["version", "created_at", "created_by", "note"]
    readonly_fields = ["version", "created_at", "created_by"]

    def get_changeform_initial_data(self, request) -> dict:
        latest = OwnershipRules.objects.order_by("-version").first()
        return {"text": latest.text if latest else ""}

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a version is never edited: a change is a new version

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        saved = save_ownership_rules(form.cleaned_data["text"], by=request.user, note=form.cleaned_data["note"])
        stored = OwnershipRules.objects.get(version=saved.version)
        obj.pk, obj.version, obj.created_at = stored.pk, stored.version, stored.created_at
        n = len(saved.reattributed)
        self.message_user(request, f"Version {saved.version} in force; {n} job{pluralize(n)} changed team."
                          if saved.created else f"Same text as version {saved.version}: nothing changed.")

    def log_addition(self, request, obj, message):
        return None  # the audit log has the row (registry.ownership.save_ownership_rules)


@admin.register(TeamAlias)
class TeamAliasAdmin(admin.ModelAdmin):
    """Other names a team answers to in ownership facets, the rules file and dbt artefacts."""

    list_display = ["alias", "team", "created_at"]
    search_fields = ["alias", "team__name", "team__slug"]
    autocomplete_fields = ["team"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        stored = declare_alias(obj.team, obj.alias, by=request.user)
        obj.pk = stored.pk

    def delete_model(self, request, obj) -> None:
        remove_alias(obj.team, obj.alias, by=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for alias in queryset.select_related("team"):
            remove_alias(alias.team, alias.alias, by=request.user)


@admin.register(JobTeam)
class JobTeamAdmin(KeysetAdmin, ReadOnlyAdmin):
    """Each job's ownership facts (from its events) and the team the rules decided."""

    keyset = ("job_namespace", "job_name")
    list_display = ["job_namespace", "job_name", "team", "rule", "rule_detail", "dbt_path"]
    list_filter = ["rule"]
    search_fields = ["job_namespace", "job_name", "dbt_unique_id", "dbt_path"]
    list_select_related = ["team"]


@admin.register(DbtOwner)
class DbtOwnerAdmin(ReadOnlyAdmin):
    """Owner teams read from dbt artefacts (registry.ownership.record_dbt_owners)."""

    list_display = ["unique_id", "team", "original_file_path", "source", "recorded_at"]
    search_fields = ["unique_id", "original_file_path", "team__slug"]
    list_select_related = ["team"]
