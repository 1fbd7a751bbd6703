"""The API of job ownership (the rules file, jobs and their teams, jobs nobody
owns, team aliases) and of readers in bulk (a team confirms what its jobs read)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.jobs import DecidedBy, JobTeam, OwnershipRules, TeamAlias
from registry.models import Team
from registry.ownership import (
    UNOWNED_JOBS_KEY,
    declare_alias,
    remove_alias,
    save_ownership_rules,
    unowned_job_rows,
    unowned_jobs,
)
from registry.readings import confirm_readings, datasets_to_confirm, readings_of_datasets
from registry.usage import owner_annotations, owners_of


class RulesVersionSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = OwnershipRules
        fields = ["version", "text", "note", "created_at", "created_by"]


class RulesWriteSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=1_000_000,
                                 help_text="The whole rules file (CODEOWNERS syntax; docs/adopting.md).")
    note = serializers.CharField(allow_blank=True, required=False, default="", max_length=500,
                                 help_text="Why it changes, kept with the version and in the audit log.")
    dry_run = serializers.BooleanField(required=False, default=False,
                                       help_text="Only say which jobs would change team; store nothing.")


class ReattributedSerializer(serializers.Serializer):
    job = serializers.CharField()
    before = serializers.CharField(allow_null=True, help_text="The team slug the rules decided before.")
    after = serializers.CharField(allow_null=True)
    rule = serializers.ChoiceField(choices=DecidedBy.choices)
    detail = serializers.CharField()


class RulesSavedSerializer(serializers.Serializer):
    version = serializers.IntegerField(allow_null=True, help_text="The version in force after the call.")
    created = serializers.BooleanField(help_text="False: the same text as the version in force, or a dry run.")
    reattributed = ReattributedSerializer(many=True, help_text="Jobs whose team the new rules change.")


class OwnershipRulesView(APIView):
    """The ownership rules file in force (the highest version)."""

    @extend_schema(responses={200: RulesVersionSerializer, 404: OpenApiTypes.OBJECT})  # 404: no rules saved yet
    def get(self, request):
        latest = get_object_or_404(OwnershipRules.objects.select_related("created_by").order_by("-version")[:1])
        return Response(RulesVersionSerializer(latest).data)

    @extend_schema(request=RulesWriteSerializer, responses={200: RulesSavedSerializer, 201: RulesSavedSerializer},
                   description="A new version of the rules file, for governance admins: every stored job's team is "
                               "decided again at once (no re-ingest). A line that cannot be read refuses the file.")
    def put(self, request):
        body = RulesWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = save_ownership_rules(body.validated_data["text"], by=request.user, note=body.validated_data["note"],
                                     dry_run=body.validated_data["dry_run"])
        return Response(saved.to_dict(), status=status.HTTP_201_CREATED if saved.created else status.HTTP_200_OK)


class OwnershipRulesVersions(generics.ListAPIView):
    """Every version of the rules file, newest first."""

    serializer_class = RulesVersionSerializer
    queryset = OwnershipRules.objects.select_related("created_by").order_by("-version")
    keyset = ("-version",)


class JobOwnerSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    team = serializers.CharField(allow_null=True, help_text="The owner team's slug; null: nobody.")
    decided_by = serializers.ChoiceField(choices=DecidedBy.choices, help_text="The rule that decided the team.")
    decided_by_detail = serializers.CharField(help_text="Which owner, rules line, dbt node or namespace decided.")
    dbt_unique_id = serializers.CharField(allow_null=True)
    dbt_path = serializers.CharField(allow_null=True)
    owners = serializers.ListField(child=serializers.CharField(), help_text="The ownership facet's owner names.")


@extend_schema(parameters=[OpenApiParameter("namespace", str, description="Only this job namespace.")])
class JobOwners(generics.ListAPIView):
    """Every job with its team and the rule that decided it. A job no rule owns shows its
    namespace's team, else nobody here (the dataset readers also know its token's team)."""

    serializer_class = JobOwnerSerializer
    keyset = ("job_namespace", "job_name")  # job_team_unique

    def get_queryset(self):
        jobs = JobTeam.objects.annotate(**owner_annotations("job_namespace", "job_name")).order_by("job_namespace", "job_name")
        if self.request.query_params.get("namespace"):
            jobs = jobs.filter(job_namespace=self.request.query_params["namespace"])
        return jobs

    def list(self, request, *args, **kwargs):
        page = list(self.paginate_queryset(self.get_queryset()))
        for job in page:
            job.namespace = job.job_namespace
        rows = [{"namespace": j.job_namespace, "name": j.job_name, **owner.to_dict(),
                 "dbt_unique_id": j.dbt_unique_id or None, "dbt_path": j.dbt_path or None,
                 "owners": list(j.owners or [])}
                for j, owner in zip(page, owners_of(page), strict=True)]
        return self.get_paginated_response(rows)


class UnownedJobSerializer(serializers.Serializer):
    job = serializers.CharField()
    namespace = serializers.CharField()
    name = serializers.CharField()
    dbt_unique_id = serializers.CharField(allow_null=True)
    dbt_path = serializers.CharField(allow_null=True)
    owners = serializers.ListField(child=serializers.CharField())
    token_team = serializers.CharField(allow_null=True, help_text="The team whose token posted its latest reading.")
    decided_by = serializers.ChoiceField(choices=DecidedBy.choices)
    suggested_rule = serializers.CharField(help_text="A rules-file line that would claim the job.")


class UnownedJobs(generics.ListAPIView):
    """Jobs no ownership facet, rules file, dbt artefact or namespace mapping owns, each with a rule that would claim it."""

    serializer_class = UnownedJobSerializer
    keyset = UNOWNED_JOBS_KEY

    def get_queryset(self):
        return unowned_job_rows()

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([job.to_dict() for job in unowned_jobs(page)])


class TeamAliasSerializer(serializers.Serializer):
    alias = serializers.CharField(max_length=200, help_text='e.g. "team:finance" or "Finance Analytics".')


class TeamAliases(APIView):
    """The other names a team answers to in ownership facets, the rules file and dbt artefacts."""

    @extend_schema(responses=TeamAliasSerializer(many=True))
    def get(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        return Response([{"alias": a} for a in TeamAlias.objects.filter(team=owner).values_list("alias", flat=True)])

    @extend_schema(request=TeamAliasSerializer, responses={201: TeamAliasSerializer})
    def post(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        body = TeamAliasSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        alias = declare_alias(owner, body.validated_data["alias"], by=request.user)
        return Response({"alias": alias.alias}, status=status.HTTP_201_CREATED)


class TeamAliasDetail(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, team: str, alias: str):
        owner = get_object_or_404(Team, slug=team)
        if not remove_alias(owner, alias, by=request.user):
            return Response({"detail": f"Team {team} has no alias {alias}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReadingDatasetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    namespace = serializers.CharField()
    name = serializers.CharField()
    owner_team = serializers.CharField(allow_null=True)


class ReadingSerializer(serializers.Serializer):
    dataset = ReadingDatasetSerializer()
    columns = serializers.ListField(child=serializers.CharField(), allow_null=True,
                                    help_text="The columns its jobs read; null: all or unknown.")
    jobs = serializers.ListField(child=serializers.CharField())
    confirmable = serializers.BooleanField(help_text="False: the dataset has no owner yet, so no consumer.")


class ConfirmSerializer(serializers.Serializer):
    datasets = serializers.ListField(child=serializers.IntegerField(), required=False, allow_null=True, default=None,
                                     help_text="Dataset ids among those listed; default: all of them.")


class ConfirmedSerializer(serializers.Serializer):
    registered = serializers.ListField(child=serializers.CharField())
    waiting_for_owner = serializers.ListField(child=serializers.CharField())


class TeamReadings(generics.ListAPIView):
    """Datasets the team's jobs read that it neither owns nor consumes, with the columns read,
    by namespace and name, a page at a time."""

    serializer_class = ReadingSerializer
    keyset = ("namespace", "name")  # dataset_namespace_name_unique

    def get_queryset(self):
        self.reader = get_object_or_404(Team, slug=self.kwargs["team"])
        return datasets_to_confirm(self.reader)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([r.to_dict() for r in readings_of_datasets(self.reader, page)])


class TeamReadingsConfirm(APIView):
    """Register the team as a consumer of all those datasets (or the ones named) at once, declaring the columns read."""

    @extend_schema(request=ConfirmSerializer, responses=ConfirmedSerializer)
    def post(self, request, team: str):
        reader = get_object_or_404(Team, slug=team)
        body = ConfirmSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        done = confirm_readings(reader, by=request.user, dataset_ids=body.validated_data["datasets"])
        return Response(done.to_dict())
