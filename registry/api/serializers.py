from django.contrib.auth import get_user_model
from rest_framework import serializers

from registry.models import Consumer, Dataset, Team
from registry.usage import readers_of


class TeamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Team
        fields = ["id", "name", "slug", "description"]


class DatasetSerializer(serializers.ModelSerializer):
    # null for an unowned dataset: the OpenAPI document says so, and clients expect it.
    owner_team = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    consumer_count = serializers.IntegerField(read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-dataset-detail")

    class Meta:
        model = Dataset
        fields = ["id", "url", "namespace", "name", "description", "owner_team", "owner",
                  "compatibility_mode", "consumer_count", "created_at"]


class ConsumerSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    registered_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = Consumer
        fields = ["team", "registered_by", "registered_at", "declared_columns"]


class DatasetDetailSerializer(DatasetSerializer):
    consumers = ConsumerSerializer(many=True, read_only=True)
    readers = serializers.SerializerMethodField(
        help_text="Jobs seen in lineage reading the dataset: team, registered or not, whether it is the owner team, the columns they read "
                  "(null: all or unknown), any read beyond what the team declared, and the rule that decided the job's team "
                  "(decided_by: ownership_facet, rules_file, dbt_artefacts, namespace, token or \"\"; decided_by_detail).")

    class Meta(DatasetSerializer.Meta):
        fields = DatasetSerializer.Meta.fields + ["consumers", "readers"]

    def get_readers(self, obj: Dataset) -> list[dict]:
        return [reader.to_dict() for reader in readers_of(obj, obj.consumers.all())]


class ClaimSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
    owner = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())


class ConsumerRegistrationSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
    columns = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, allow_null=True, default=None,
        help_text="The columns the team's jobs read; a breaking change to other columns then only tells it. "
                  "Registering again with columns updates the declaration.")


class JobNamespaceSerializer(serializers.Serializer):
    namespace = serializers.CharField(max_length=500, help_text="An OpenLineage job namespace, e.g. analytics-airflow.")
    team = serializers.CharField(source="team.slug", read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
