from __future__ import annotations

from rest_framework import serializers

from contracts_app.models import Contract, ContractVersion, IntegrationSpec


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
                  "description", "versions", "latest"]

    def _ordered(self, obj: Contract) -> list[str]:
        from registry_client.resolution import semantic_sort

        return semantic_sort(v.version for v in obj.versions.all())

    def get_versions(self, obj: Contract) -> list[str]:
        return self._ordered(obj)

    def get_latest(self, obj: Contract) -> str | None:
        from registry_client.resolution import latest_release

        return latest_release(self._ordered(obj))


class SpecSerializer(serializers.ModelSerializer):
    contract = serializers.CharField(source="contract_version.contract.name")
    contract_version = serializers.CharField(source="contract_version.version")

    class Meta:
        model = IntegrationSpec
        fields = ["contract", "contract_version", "version", "source_schema", "source_table", "field_to_source",
                  "created_column", "modified_column", "checksum", "published_at", "store_key", "document"]
