"""Admin: browse contracts and versions, bind datasets. Versions are published
by publish_contracts (or a change request), never edited here."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import CharField, Q
from django.db.models.functions import Cast

from contracts_app.models import (
    AuditAction,
    Contract,
    ContractVersion,
    DatasetBinding,
    Draft,
    IntegrationSpec,
)
from contracts_app.publishing import delete_spec, delete_version
from registry import admin as registry_admin
from registry.admin import AuditedDeleteAdmin, ReadOnlyAdmin
from registry.models import AuditEvent, Dataset, audit_type


def _keys(queryset):
    """The primary keys of `queryset` as the audit log's text object ids (a subquery)."""
    return queryset.order_by().annotate(key=Cast("pk", CharField())).values("key")


def rows_about_contract(contract: Contract) -> Q:
    """The audit rows about a contract: the contract itself, its versions and their specs,
    the rows of whatever points at it by a foreign key (change requests, from the app built
    on this one, without this app naming it), and the datasets bound to or unbound from it."""
    bindings = (Q(object_type=audit_type(Dataset), action__in=[AuditAction.DATASET_BOUND, AuditAction.DATASET_UNBOUND])
                & (Q(after__contract=contract.name) | Q(before__contract=contract.name)))
    about = (Q(object_type=audit_type(Contract), object_id=str(contract.pk))
             | Q(object_type=audit_type(IntegrationSpec),
                 object_id__in=_keys(IntegrationSpec.objects.filter(contract_version__contract=contract)))
             | bindings)
    for relation in Contract._meta.related_objects:
        if relation.many_to_many or relation.related_model is DatasetBinding:
            continue
        model = relation.related_model
        about |= Q(object_type=audit_type(model),
                   object_id__in=_keys(model._default_manager.filter(**{relation.field.name: contract})))
    return about


class ContractAuditFilter(admin.SimpleListFilter):
    title = "contract"
    parameter_name = "contract"

    def lookups(self, request, model_admin):
        return [(str(pk), name) for pk, name in Contract.objects.order_by("name").values_list("pk", "name")]

    def queryset(self, request, queryset):
        contract = Contract.objects.filter(pk=self.value()).first() if (self.value() or "").isdigit() else None
        if contract is None:
            return queryset
        return queryset.filter(rows_about_contract(contract))


admin.site.unregister(AuditEvent)


@admin.register(AuditEvent)
class AuditEventAdmin(registry_admin.AuditEventAdmin):
    """The core's audit log admin, filterable by contract as well."""

    list_filter = [*registry_admin.AuditEventAdmin.list_filter[:2], ContractAuditFilter,
                   *registry_admin.AuditEventAdmin.list_filter[2:]]


class VersionInline(admin.TabularInline):
    model = ContractVersion
    fields = ["version", "checksum", "published_at", "published_by", "uploaded_at", "upload_error"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Contract)
class ContractAdmin(AuditedDeleteAdmin):
    list_display = ["name", "schema_type", "owner_team", "domain"]
    list_filter = ["schema_type", "domain"]
    search_fields = ["name", "description"]
    readonly_fields = ["name", "domain", "subdomains", "entity", "schema_type", "meta", "owner_label", "description", "created_at"]
    fields = [*readonly_fields, "owner_team", "compatibility_mode"]
    inlines = [VersionInline]

    def save_model(self, request, obj: Contract, form, change) -> None:
        # The mode changes through the domain method, so it is audited (and a weakening named).
        mode = obj.compatibility_mode
        if change and "compatibility_mode" in form.changed_data:
            obj.compatibility_mode = form.initial["compatibility_mode"]
        super().save_model(request, obj, form, change)
        if change and mode != obj.compatibility_mode:
            obj.set_mode(mode, by=request.user)


@admin.register(ContractVersion)
class ContractVersionAdmin(ReadOnlyAdmin):
    list_display = ["contract", "version", "published_at", "published_by", "uploaded_at"]
    list_filter = ["contract__schema_type"]
    search_fields = ["contract__name", "version"]
    readonly_fields = ["contract", "version", "checksum", "published_at", "published_by", "store_key", "uploaded_at",
                       "upload_error", "yaml_text"]
    exclude = ["document"]

    def delete_model(self, request, obj: ContractVersion) -> None:
        # Audited, refused while something depends on it (the confirmation page lists why),
        # and taken out of the store's index after commit.
        delete_version(obj, by=request.user)


@admin.register(DatasetBinding)
class DatasetBindingAdmin(admin.ModelAdmin):
    list_display = ["dataset", "contract", "bound_at"]
    fields = ["dataset", "contract"]
    autocomplete_fields = ["dataset", "contract"]

    def save_model(self, request, obj: DatasetBinding, form, change) -> None:
        # Through the domain method, so the binding is audited.
        binding = obj.contract.bind(obj.dataset, by=request.user)
        obj.pk, obj.bound_at = binding.pk, binding.bound_at

    def delete_model(self, request, obj: DatasetBinding) -> None:
        obj.contract.unbind(obj.dataset, by=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for binding in queryset.select_related("contract", "dataset"):
            self.delete_model(request, binding)


@admin.register(IntegrationSpec)
class IntegrationSpecAdmin(ReadOnlyAdmin):
    list_display = ["contract_version", "source_schema", "source_table", "published_at", "uploaded_at"]
    readonly_fields = ["contract_version", "version", "source_schema", "source_table", "field_to_source",
                       "created_column", "modified_column", "checksum", "published_at", "store_key", "uploaded_at", "yaml_text"]
    exclude = ["document"]

    def delete_model(self, request, obj: IntegrationSpec) -> None:
        delete_spec(obj, by=request.user)  # audited, and out of the spec index after commit


@admin.register(Draft)
class DraftAdmin(ReadOnlyAdmin):
    """Drafts are reviewed on their page (/drafts/<id>/), where approving runs the publish gate."""

    list_display = ["contract_name", "version", "owner_team", "state", "origin", "source", "created_at", "reviewed_by"]
    list_filter = ["state", "origin", "owner_team"]
    search_fields = ["contract_name", "source"]
    list_select_related = ["owner_team", "reviewed_by"]
