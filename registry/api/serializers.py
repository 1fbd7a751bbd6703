from django.contrib.auth import get_user_model
from rest_framework import serializers

from registry.models import Consumer, Dataset, Team


class TeamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Team
        fields = ["id", "name", "slug", "description"]


class DatasetSerializer(serializers.ModelSerializer):
    owner_team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    consumer_count = serializers.IntegerField(read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-dataset-detail")

    class Meta:
        model = Dataset
        fields = ["id", "url", "namespace", "name", "description", "owner_team", "owner",
                  "compatibility_mode", "consumer_count", "created_at"]


class ConsumerSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    registered_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Consumer
        fields = ["team", "registered_by", "registered_at"]


class DatasetDetailSerializer(DatasetSerializer):
    consumers = ConsumerSerializer(many=True, read_only=True)

    class Meta(DatasetSerializer.Meta):
        fields = DatasetSerializer.Meta.fields + ["consumers"]


class ClaimSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
    owner = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())


class ConsumerRegistrationSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
