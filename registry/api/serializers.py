from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from registry.constants import MembershipRole
from registry.models import Consumer, Dataset, Membership, Team
from registry.usage import readers_of


class TeamSerializer(serializers.ModelSerializer):
    parent = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True,
                                          help_text="The slug of the team this one belongs to, if any.")

    class Meta:
        model = Team
        fields = ["id", "name", "slug", "description", "parent"]


class TeamMemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    email = serializers.EmailField(source="user.email", read_only=True)

    class Meta:
        model = Membership
        fields = ["username", "email", "role", "joined_at"]


class TeamChannelSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="The transport: email, webhook, …")
    recipient = serializers.CharField(help_text="Where it sends: an address, a URL.")
    settings = serializers.DictField(help_text="The transport's settings; secrets shown as \"(hidden)\".")


class TeamDetailSerializer(TeamSerializer):
    members = TeamMemberSerializer(source="memberships", many=True, read_only=True)
    channels = serializers.SerializerMethodField()

    class Meta(TeamSerializer.Meta):
        fields = TeamSerializer.Meta.fields + ["members", "channels"]

    @extend_schema_field(TeamChannelSerializer(many=True))
    def get_channels(self, team: Team) -> list[dict]:
        return self.context.get("channels", [])


class TeamMemberWriteSerializer(serializers.Serializer):
    """A person in a team, as a teams file names them (docs/teams.md)."""

    username = serializers.CharField(required=False, help_text="Their username; created if missing.")
    email = serializers.EmailField(required=False, help_text="Their e-mail; finds them when no username is given.")
    role = serializers.ChoiceField(choices=MembershipRole.choices, default=MembershipRole.MEMBER)


class TeamWriteSerializer(serializers.Serializer):
    """One team as a teams file writes it (docs/teams.md). A key left out is left as it is."""

    slug = serializers.SlugField(help_text="Required to create; the URL's when updating.")
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    parent = serializers.SlugField(required=False, allow_null=True, help_text="The parent team's slug, or null.")
    channels = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text='Where the team hears of change requests: {"kind": "email", "address": …} or '
                  '{"kind": "webhook", "url": …, "secret": …}.')
    members = TeamMemberWriteSerializer(many=True, required=False)


class TeamSyncSerializer(serializers.Serializer):
    """What a teams sync changed (or, dry, would change)."""

    applied = serializers.BooleanField(help_text="False for a dry run.")
    changes = serializers.ListField(child=serializers.CharField(),
                                    help_text='One line per change: "+ …" added, "~ …" changed, "- …" removed.')
    users_created = serializers.ListField(child=serializers.CharField(),
                                          help_text="Usernames of people created, with an unusable password.")


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
