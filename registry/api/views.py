from django.contrib.auth import get_user_model
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import teamsync
from registry.api.parsers import BoundedJSONParser, TeamsYamlParser
from registry.api.serializers import (
    ClaimSerializer,
    ConsumerRegistrationSerializer,
    ConsumerSerializer,
    DatasetDetailSerializer,
    DatasetSerializer,
    JobNamespaceSerializer,
    TeamDetailSerializer,
    TeamMemberSerializer,
    TeamMemberWriteSerializer,
    TeamSerializer,
    TeamSyncSerializer,
    TeamWriteSerializer,
)
from registry.models import Consumer, Dataset, Membership, Team


def _sync_options(request) -> dict:
    """`?dry_run=`, `?prune=` and `?reason=` of a teams write (docs/teams.md)."""
    params = request.query_params
    return {"dry_run": _yes(params.get("dry_run")), "prune": _yes(params.get("prune")),
            "reason": params.get("reason", "")}


def _yes(value: str | None) -> bool:
    return (value or "").lower() in {"1", "true", "yes"}


_SYNC_PARAMETERS = [
    OpenApiParameter("dry_run", bool, description="Answer with the changes and write nothing."),
    OpenApiParameter("prune", bool, description="Listed members and channels are complete: remove the others "
                                               "(for a teams document, also the teams it leaves out)."),
    OpenApiParameter("reason", str, description="Why, kept in the audit log; needed to remove a team that owns "
                                                "or consumes datasets, or a member who is a dataset's named owner."),
]


def _sync_answer(plan: teamsync.Plan, *, dry_run: bool) -> dict:
    return {"applied": not dry_run, "changes": plan.lines(), "users_created": plan.users_created}


def _team_detail(request, slug: str) -> Response:
    team = get_object_or_404(Team.objects.select_related("parent").prefetch_related(
        Prefetch("memberships", queryset=Membership.objects.select_related("user").order_by("user__username"))),
        slug=slug)
    context = {"request": request, "channels": teamsync.channels_of(team)}
    return Response(TeamDetailSerializer(team, context=context).data)


class TeamList(generics.ListAPIView):
    """Every team. A governance admin creates one with POST (the shape of one team of a teams file)."""

    queryset = Team.objects.select_related("parent")
    serializer_class = TeamSerializer
    keyset = ("name",)  # unique

    @extend_schema(request=TeamWriteSerializer, responses={201: TeamDetailSerializer})
    def post(self, request):
        teamsync.check_may_manage_teams(request.user)
        spec = teamsync.parse_one_team(request.data)
        teamsync.create_team(spec, by=request.user)
        response = _team_detail(request, spec.slug)
        response.status_code = status.HTTP_201_CREATED
        return response


class TeamDetail(APIView):
    """A team with its members and channels; a governance admin changes it with PATCH."""

    @extend_schema(responses=TeamDetailSerializer)
    def get(self, request, team: str):
        return _team_detail(request, team)

    @extend_schema(request=TeamWriteSerializer, responses=TeamDetailSerializer, parameters=_SYNC_PARAMETERS[1:])
    def patch(self, request, team: str):
        """Change what the body names; `members` and `channels` are added to (with `prune`, made exact).
        POST /api/team-sync/?dry_run=true shows a change before it is made."""
        teamsync.check_may_manage_teams(request.user)
        get_object_or_404(Team, slug=team)
        spec = teamsync.parse_one_team(request.data, slug=team)
        options = _sync_options(request)
        teamsync.sync([spec], by=request.user, whole=False, prune=options["prune"], reason=options["reason"])
        return _team_detail(request, team)


class TeamMembers(APIView):
    """A team's members; a governance admin adds one, or changes their role, with POST."""

    @extend_schema(responses=TeamMemberSerializer(many=True))
    def get(self, request, team: str):
        found = get_object_or_404(Team, slug=team)
        members = found.memberships.select_related("user").order_by("user__username")
        return Response(TeamMemberSerializer(members, many=True).data)

    @extend_schema(request=TeamMemberWriteSerializer, responses={200: TeamMemberSerializer, 201: TeamMemberSerializer})
    def post(self, request, team: str):
        teamsync.check_may_manage_teams(request.user)
        found = get_object_or_404(Team, slug=team)
        member = teamsync.parse_one_member(request.data)
        plan = teamsync.sync([teamsync.TeamSpec(path="", slug=team, members=[member])], by=request.user, whole=False)
        users = get_user_model().objects.filter(
            **({"username": member.username} if member.username else {"email__iexact": member.email}))
        membership = found.memberships.select_related("user").get(user__in=users)
        added = any(line.startswith(f"+ {team}: member") for line in plan.lines())
        return Response(TeamMemberSerializer(membership).data,
                        status=status.HTTP_201_CREATED if added else status.HTTP_200_OK)


class TeamMemberDetail(APIView):
    @extend_schema(request=None, responses={204: None}, parameters=_SYNC_PARAMETERS[2:])
    def delete(self, request, team: str, username: str):
        teamsync.check_may_manage_teams(request.user)
        found = get_object_or_404(Team, slug=team)
        user = get_object_or_404(get_user_model(), username=username)
        if not teamsync.remove_member(found, user, by=request.user, reason=request.query_params.get("reason", "")):
            return Response({"detail": f"{username} is not a member of team {team}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamSync(APIView):
    """Make every team match a teams document (JSON, or the YAML of a teams file with
    Content-Type application/yaml), as `manage.py sync_teams` does: one transaction."""

    parser_classes = [BoundedJSONParser, TeamsYamlParser]

    @extend_schema(request={"application/json": OpenApiTypes.OBJECT, "application/yaml": OpenApiTypes.STR},
                   responses=TeamSyncSerializer, parameters=_SYNC_PARAMETERS)
    def post(self, request):
        teamsync.check_may_manage_teams(request.user)
        options = _sync_options(request)
        plan = teamsync.sync_document(request.data, by=request.user, **options)
        return Response(_sync_answer(plan, dry_run=options["dry_run"]))


@extend_schema(parameters=[
    OpenApiParameter("owner_team", str, description="Slug of the owning team."),
    OpenApiParameter("unowned", bool, description="Only datasets that no team owns yet."),
    OpenApiParameter("search", str, description=(
        "Words in the namespace, name or description (docs/operations.md, \"Search\"): the last "
        "anywhere inside a word, the others ending one; any substring of them matches.")),
])
class DatasetList(generics.ListAPIView):
    serializer_class = DatasetSerializer
    # A million datasets: every page seeks through the (namespace, name) unique index.
    keyset = ("namespace", "name")

    def get_queryset(self):
        params = self.request.query_params
        datasets = Dataset.objects.for_listing()
        if params.get("owner_team"):
            datasets = datasets.filter(owner_team__slug=params["owner_team"])
        if params.get("unowned", "").lower() in {"1", "true", "yes"}:
            datasets = datasets.unowned()
        if params.get("search"):
            datasets = datasets.matching(params["search"])
        return datasets


def _consumers_prefetch() -> Prefetch:
    return Prefetch("consumers", queryset=Consumer.objects.select_related("team", "registered_by"))


class DatasetDetail(generics.RetrieveAPIView):
    serializer_class = DatasetDetailSerializer

    def get_queryset(self):
        return Dataset.objects.for_listing().prefetch_related(_consumers_prefetch())


class DatasetClaim(APIView):
    @extend_schema(request=ClaimSerializer, responses=DatasetSerializer)
    def post(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        body = ClaimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        dataset.claim(body.validated_data["team"], owner=body.validated_data["owner"], by=request.user)
        fresh = Dataset.objects.for_listing().get(pk=pk)
        return Response(DatasetSerializer(fresh, context={"request": request}).data)


class DatasetConsumers(APIView):
    @extend_schema(responses=ConsumerSerializer(many=True))
    def get(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        consumers = dataset.consumers.select_related("team", "registered_by")
        return Response(ConsumerSerializer(consumers, many=True).data)

    @extend_schema(request=ConsumerRegistrationSerializer, responses=ConsumerSerializer)
    def post(self, request, pk: int):
        dataset = get_object_or_404(Dataset, pk=pk)
        body = ConsumerRegistrationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        consumer = dataset.register_consumer(body.validated_data["team"], by=request.user,
                                             columns=body.validated_data["columns"])
        return Response(ConsumerSerializer(consumer).data, status=status.HTTP_201_CREATED)


class DatasetConsumerDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, pk: int, team: str):
        dataset = get_object_or_404(Dataset, pk=pk)
        consumer_team = get_object_or_404(Team, slug=team)
        if not dataset.unregister_consumer(consumer_team, by=request.user):
            return Response({"detail": f"Team {team} is not a consumer of {dataset}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamJobNamespaces(APIView):
    """The OpenLineage job namespaces whose jobs are this team's (so lineage's readers are attributed to it)."""

    @extend_schema(responses=JobNamespaceSerializer(many=True))
    def get(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        return Response(JobNamespaceSerializer(owner.job_namespaces.select_related("team"), many=True).data)

    @extend_schema(request=JobNamespaceSerializer, responses={201: JobNamespaceSerializer})
    def post(self, request, team: str):
        owner = get_object_or_404(Team, slug=team)
        body = JobNamespaceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        mapping = owner.map_job_namespace(body.validated_data["namespace"], by=request.user)
        return Response(JobNamespaceSerializer(mapping).data, status=status.HTTP_201_CREATED)


class TeamJobNamespaceDetail(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, team: str, namespace: str):
        owner = get_object_or_404(Team, slug=team)
        if not owner.unmap_job_namespace(namespace, by=request.user):
            return Response({"detail": f"Team {team} has no job namespace {namespace}.", "code": "not_found"}, status=404)
        return Response(status=status.HTTP_204_NO_CONTENT)
