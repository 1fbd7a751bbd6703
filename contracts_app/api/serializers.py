from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contracts_app.models import Contract, ContractVersion, DatasetBinding, IntegrationSpec
from registry.constants import CompatibilityMode
from registry.models import Dataset


class VersionSerializer(serializers.ModelSerializer):
    published_by = serializers.SerializerMethodField()
    in_store = serializers.BooleanField(source="is_in_store")

    class Meta:
        model = ContractVersion
        fields = ["version", "checksum", "published_at", "published_by", "store_key", "in_store", "uploaded_at"]

    def get_published_by(self, obj: ContractVersion) -> str | None:
        return obj.published_by.get_username() if obj.published_by_id else None


class ContractSerializer(serializers.ModelSerializer):
    owner_team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    versions = serializers.SerializerMethodField()
    latest = serializers.SerializerMethodField()

    class Meta:
        model = Contract
        fields = ["name", "domain", "subdomains", "entity", "schema_type", "meta", "owner_team", "owner_label",
                  "description", "compatibility_mode", "versions", "latest"]

    def _ordered(self, obj: Contract) -> list[str]:
        from registry_client.resolution import semantic_sort

        return semantic_sort(v.version for v in obj.versions.all())

    def get_versions(self, obj: Contract) -> list[str]:
        return self._ordered(obj)

    def get_latest(self, obj: Contract) -> str | None:
        from registry_client.resolution import latest_release

        return latest_release(self._ordered(obj))


class BindingSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="dataset.pk")
    namespace = serializers.CharField(source="dataset.namespace")
    name = serializers.CharField(source="dataset.name")
    compatibility_mode = serializers.CharField(source="dataset.compatibility_mode",
                                               help_text="The dataset's own mode; a version must pass it too.")

    class Meta:
        model = DatasetBinding
        fields = ["id", "namespace", "name", "compatibility_mode", "bound_at"]


class ContractDetailSerializer(ContractSerializer):
    """One contract with the datasets bound to it and the modes a new version must pass."""

    datasets = BindingSerializer(source="bindings", many=True, read_only=True)
    required_modes = serializers.SerializerMethodField()

    class Meta(ContractSerializer.Meta):
        fields = [*ContractSerializer.Meta.fields, "datasets", "required_modes"]

    def get_required_modes(self, obj: Contract) -> list[str]:
        own = obj.compatibility_mode
        return [own, *sorted({b.dataset.compatibility_mode for b in obj.bindings.all()} - {own})]


class ModeChangeSerializer(serializers.Serializer):
    """PATCH body: only the mode changes here; the rest comes from the published documents."""

    compatibility_mode = serializers.ChoiceField(choices=CompatibilityMode.choices)

    def validate(self, attrs):
        others = sorted(set(self.initial_data) - {"compatibility_mode"}) if isinstance(self.initial_data, dict) else []
        if others:
            raise serializers.ValidationError(
                f"Only compatibility_mode can be changed here, not {', '.join(others)}: the rest of a contract "
                "comes from its published documents.")
        return attrs


@extend_schema_field({"oneOf": [
    {"type": "integer", "description": "the dataset's id"},
    {"type": "object", "required": ["namespace", "name"],
     "properties": {"namespace": {"type": "string"}, "name": {"type": "string"}}},
]})
class DatasetRefField(serializers.Field):
    """A dataset by id (`12`) or by OpenLineage identity (`{"namespace": "…", "name": "…"}`)."""

    default_error_messages = {
        "shape": 'Give the dataset as its id or as {{"namespace": "…", "name": "…"}}.',
        "missing": "No dataset {ref}. A dataset appears when lineage first sees it or when a published "
                   "contract document names it.",
    }

    def to_internal_value(self, data) -> Dataset:
        if isinstance(data, bool):
            self.fail("shape")
        if isinstance(data, int) or (isinstance(data, str) and data.isdigit()):
            found = Dataset.objects.filter(pk=int(data)).first()
            ref = f"with id {data}"
        elif isinstance(data, dict) and isinstance(data.get("namespace"), str) and isinstance(data.get("name"), str):
            found = Dataset.objects.filter(namespace=data["namespace"], name=data["name"]).first()
            ref = f"{data['namespace']}/{data['name']}"
        else:
            self.fail("shape")
        if found is None:
            self.fail("missing", ref=ref)
        return found

    def to_representation(self, value: Dataset):
        return value.pk


class BindRequestSerializer(serializers.Serializer):
    dataset = DatasetRefField()


class SpecSerializer(serializers.ModelSerializer):
    contract = serializers.CharField(source="contract_version.contract.name")
    contract_version = serializers.CharField(source="contract_version.version")

    class Meta:
        model = IntegrationSpec
        fields = ["contract", "contract_version", "version", "source_schema", "source_table", "field_to_source",
                  "created_column", "modified_column", "checksum", "published_at", "store_key", "document"]
