"""The change-request API: list, read, propose through the gate, and every action of the review page.

Errors use the project's shape {"detail", "code"}: 403 for acting outside your
teams, 409 for a rule about the current state (an unfinished request already
exists, the request is not open any more), 400 for a bad body.
"""

from __future__ import annotations

from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response
from rest_framework.views import APIView

from change_requests.impact import PreviewError, as_markdown, preview
from change_requests.models import ChangeRequest, ChangeRequestState, TeamAssessment, TeamReview
from change_requests.verify import ASSUMED_AFFECTED, KINDS, NOT_AFFECTED
from change_requests.workflows import submit_version, verify_change_request
from contracts_app.publishing import BREAKING, CONFLICT, FORBIDDEN, PUBLISHED, UNCHANGED
from registry.constants import TokenScope
from registry.models import Team


class TeamReviewSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    responded_by = serializers.CharField(source="responded_by_label", read_only=True)

    class Meta:
        model = TeamReview
        fields = ["team", "status", "comment", "responded_by", "responded_at", "migrating_by", "block_overridden_at",
                  "block_override_reason"]


class VerdictSerializer(serializers.Serializer):
    """A team's verdict and its kind (change_requests.verify)."""

    kind = serializers.ChoiceField(choices=list(KINDS), help_text=(
        "proven_broken: an expression of its job fails on the proposed shape (`error`, `job`, `by`: type check or "
        "EXPLAIN); assumed_affected: it reads what the change touches and nothing proves either way (`path`, "
        "`reason`); verified_safe: a structural change its jobs plan cleanly on (`reason`); not_affected: told, "
        "not asked (`reason`)."))
    reason = serializers.CharField(required=False)
    by = serializers.CharField(required=False, help_text="What proved it: \"type check\" or \"EXPLAIN\".")
    job = serializers.CharField(required=False, help_text="The job whose SQL fails (proven_broken).")
    error = serializers.CharField(required=False, help_text="The error that job would get (proven_broken).")
    errors = serializers.ListField(child=serializers.CharField(), required=False)
    path = serializers.ListField(child=serializers.CharField(), required=False,
                                 help_text="How the change reaches the team: dataset → job, and what it reads.")


class TeamAssessmentSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    verdict = serializers.SerializerMethodField()

    class Meta:
        model = TeamAssessment
        fields = ["team", "affected", "why", "verdict", "jobs", "declared", "assessed_at", "added_after_opening"]

    @extend_schema_field(VerdictSerializer)
    def get_verdict(self, obj: TeamAssessment) -> dict:
        """Assessments stored before verdicts had kinds say it by `affected`."""
        if obj.verdict:
            return obj.verdict
        if obj.affected:
            return {"kind": ASSUMED_AFFECTED, "reason": obj.why, "path": [f"{j.get('dataset')} → {j.get('job')}"
                                                                           for j in obj.jobs or []]}
        return {"kind": NOT_AFFECTED, "reason": obj.why}


class ChangeRequestSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api-change-request-detail")
    page = serializers.SerializerMethodField()
    contract = serializers.SlugRelatedField(slug_field="name", read_only=True)
    owner_team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    base_version = serializers.SlugRelatedField(slug_field="version", read_only=True)
    opened_by = serializers.CharField(source="opened_by_label", read_only=True)
    finished_by = serializers.CharField(source="finished_by_label", read_only=True)
    reviews = TeamReviewSerializer(many=True, read_only=True)

    class Meta:
        model = ChangeRequest
        fields = ["id", "url", "page", "contract", "state", "base_version", "proposed_version", "owner_team",
                  "summary", "opened_by", "opened_at", "deadline_at", "reminded_at", "escalated_at", "approved_at",
                  "finished_at", "finished_by", "closing_comment", "reviews", "report", "touched_columns",
                  "routing_note", "unregistered_readers", "verification"]

    def get_page(self, obj: ChangeRequest) -> str:
        request = self.context.get("request")
        path = obj.get_absolute_url()
        return request.build_absolute_uri(path) if request else path


class ChangeRequestDetailSerializer(ChangeRequestSerializer):
    assessments = TeamAssessmentSerializer(many=True, read_only=True)

    class Meta(ChangeRequestSerializer.Meta):
        fields = ChangeRequestSerializer.Meta.fields + ["assessments", "proposed_document"]


class ProposeSerializer(serializers.Serializer):
    document = serializers.DictField(help_text="The whole contract document (schema, meta, and its sections).")
    summary = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class TeamAnswerSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class AcknowledgeSerializer(TeamAnswerSerializer):
    on_behalf = serializers.BooleanField(
        required=False, default=False,
        help_text="A governance admin acknowledges for a team that cannot answer (not for a request they opened); "
                  "the comment must say why, and the audit log records it as an override.")


class MigratingAnswerSerializer(TeamAnswerSerializer):
    migrating_by = serializers.DateField(help_text="The team stays on the old lane until this date (today or later).")


class OverrideBlockSerializer(serializers.Serializer):
    team = serializers.SlugRelatedField(slug_field="slug", queryset=Team.objects.all())
    reason = serializers.CharField(max_length=5000, help_text="Why; recorded and shown to the blocking team.")


class CommentSerializer(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


def _requests():
    return ChangeRequest.objects.select_related("contract", "owner_team", "base_version").prefetch_related(
        Prefetch("reviews", queryset=TeamReview.objects.select_related("team")),
        Prefetch("assessments", queryset=TeamAssessment.objects.select_related("team")),
    )


def _get(pk: int) -> ChangeRequest:
    cr = _requests().filter(pk=pk).first()
    if cr is None:
        raise NotFound(f"No change request #{pk}.")
    return cr


@extend_schema(parameters=[
    OpenApiParameter("state", str, description="open, approved, published, rejected, withdrawn, or unfinished."),
    OpenApiParameter("contract", str, description="A contract's dotted name."),
])
class ChangeRequestList(generics.ListAPIView):
    """Change requests, open first (soonest deadline first), then approved, then finished."""

    write_scope = TokenScope.CONTRACTS_PUBLISH  # its POST publishes a version through the gate

    serializer_class = ChangeRequestSerializer

    def get_queryset(self):
        requests = ChangeRequest.objects.for_listing().prefetch_related(
            Prefetch("reviews", queryset=TeamReview.objects.select_related("team"))
        ).select_related("base_version")
        state = self.request.query_params.get("state", "")
        if state == "unfinished":
            requests = requests.unfinished()
        elif state:
            if state not in ChangeRequestState.values:
                raise serializers.ValidationError(
                    {"state": f"{state!r} is not a state; use unfinished or one of {', '.join(ChangeRequestState.values)}."})
            requests = requests.filter(state=state)
        if self.request.query_params.get("contract"):
            requests = requests.filter(contract__name=self.request.query_params["contract"])
        return requests

    def keyset_segments(self, requests) -> list:
        return requests.in_listing_order()

    @extend_schema(
        request=ProposeSerializer,
        responses={201: ChangeRequestDetailSerializer, 200: inline_serializer("PublishOutcome", {
            "name": serializers.CharField(), "version": serializers.CharField(), "status": serializers.CharField(),
            "message": serializers.CharField()})},
    )
    def post(self, request):
        """Publish a version through the gate. Compatible: 200 with the publish outcome.
        Breaking: 201 with the change request it opened. 409 when an unfinished request blocks it,
        when the version is already published with other content, or when another publish of the
        contract got in first (publish again); 403 when a concurrent publish handed it to another team."""
        body = ProposeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        outcome = submit_version(body.validated_data["document"], by=request.user, summary=body.validated_data["summary"])
        if outcome.status in (PUBLISHED, UNCHANGED):
            return Response(outcome.to_dict(), status=status.HTTP_200_OK)
        if outcome.status == BREAKING and outcome.change_request is not None:
            cr = _get(outcome.change_request.pk)
            data = ChangeRequestDetailSerializer(cr, context={"request": request}).data
            created = getattr(outcome.change_request, "just_opened", False)
            return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
        if outcome.status == BREAKING:
            return Response({"detail": outcome.message, "code": "change_request_blocked", "outcome": outcome.to_dict()},
                            status=status.HTTP_409_CONFLICT)
        if outcome.code == CONFLICT:
            return Response({"detail": outcome.message, "code": "version_conflict", "errors": outcome.errors},
                            status=status.HTTP_409_CONFLICT)
        if outcome.code == FORBIDDEN:
            return Response({"detail": outcome.message, "code": "permission_denied"}, status=status.HTTP_403_FORBIDDEN)
        return Response({"detail": outcome.message, "code": "refused", "errors": outcome.errors},
                        status=status.HTTP_400_BAD_REQUEST)


class ChangeRequestDetail(APIView):
    @extend_schema(responses=ChangeRequestDetailSerializer)
    def get(self, request, pk: int):
        return Response(ChangeRequestDetailSerializer(_get(pk), context={"request": request}).data)


class _Action(APIView):
    body_class: type[serializers.Serializer] = CommentSerializer

    def act(self, cr: ChangeRequest, request, data: dict) -> None:
        raise NotImplementedError

    def post(self, request, pk: int):
        cr = _get(pk)
        body = self.body_class(data=request.data)
        body.is_valid(raise_exception=True)
        self.act(cr, request, body.validated_data)
        return Response(ChangeRequestDetailSerializer(_get(pk), context={"request": request}).data)


class Acknowledge(_Action):
    body_class = AcknowledgeSerializer

    @extend_schema(request=AcknowledgeSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """Acknowledge for one of your teams (the last required team approves the request). The request's
        author cannot, even for a team they belong to; a governance admin may, with `on_behalf`."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.acknowledge(data["team"], by=request.user, comment=data["comment"], on_behalf=data["on_behalf"])


class Object(_Action):
    body_class = TeamAnswerSerializer

    @extend_schema(request=TeamAnswerSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """Object for one of your teams; the comment is required and visible to everyone."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.object(data["team"], by=request.user, comment=data["comment"])


class Migrating(_Action):
    body_class = MigratingAnswerSerializer

    @extend_schema(request=MigratingAnswerSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """Answer "migrating by DATE" for one of your teams: the request may publish, and your team stays on
        the old lane until DATE (its sunset may not come earlier without an audited override)."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.migrate_by(data["team"], by=request.user, date=data["migrating_by"], comment=data["comment"])


class OverrideBlock(_Action):
    body_class = OverrideBlockSerializer

    @extend_schema(request=OverrideBlockSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """A governance admin overrides one team's block (audited; the reason is shown to the team)."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.override_block(data["team"], by=request.user, reason=data["reason"])


class Publish(_Action):
    write_scope = TokenScope.CONTRACTS_PUBLISH
    @extend_schema(request=None, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """The owner team publishes an approved request."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.publish(by=request.user)


class Withdraw(_Action):
    @extend_schema(request=CommentSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """The owner team withdraws an open or approved request."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.withdraw(by=request.user, comment=data["comment"])


class Reject(_Action):
    @extend_schema(request=CommentSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """A governance admin rejects an open or approved request, saying why."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.reject(by=request.user, comment=data["comment"])


class ApproveOverSilence(_Action):
    @extend_schema(request=CommentSerializer, responses=ChangeRequestDetailSerializer)
    def post(self, request, pk: int):
        """After the deadline, a governance admin approves over teams that never answered."""
        return super().post(request, pk)

    def act(self, cr, request, data):
        cr.approve_over_silence(by=request.user, comment=data["comment"])


class Verify(APIView):
    """Look for a proof per team of an unfinished request."""

    @extend_schema(
        summary="Verify a change request on a scratch schema",
        description=("EXPLAINs each affected team's compiled SQL on a scratch PostgreSQL schema holding the proposed "
                     "shape of the changed dataset and the current shapes of what else it reads (empty tables, never "
                     "the warehouse), then stores each team's verdict: proven_broken with the error its job would "
                     "get, verified_safe, or assumed_affected with the reason no proof was possible. Nobody is added "
                     "or removed. On SQLite it is unavailable and `verification.reason` says so. 403: not the owner "
                     "team, a team it waits for or a governance admin; 409: the request is finished."),
        request=None,
        responses={200: ChangeRequestDetailSerializer},
    )
    def post(self, request, pk: int):
        cr = _get(pk)
        if not cr.is_unfinished:
            return Response({"detail": f"Change request #{cr.pk} is {cr.state}: there is nothing left to verify.",
                             "code": "change_request_finished"}, status=status.HTTP_409_CONFLICT)
        my_team_ids = set(Team.objects.of_user(request.user).values_list("pk", flat=True))
        if not cr.permitted_actions(request.user, my_team_ids)["verify"]:
            return Response({"detail": "Only the owner team, a team this request waits for or a governance admin "
                                       "can verify it.", "code": "permission_denied"},
                            status=status.HTTP_403_FORBIDDEN)
        verify_change_request(cr)
        return Response(ChangeRequestDetailSerializer(_get(pk), context={"request": request}).data)


class MarkdownInJson(DefaultContentNegotiation):
    """`?format=markdown` asks for a markdown block inside the JSON answer; DRF would
    otherwise read `format` as a renderer's name and answer 404 for want of one."""

    def select_renderer(self, request, renderers, format_suffix=None):
        if request.query_params.get("format") == "markdown":
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)


class ImpactPreview(APIView):
    content_negotiation_class = MarkdownInJson
    """What proposing a version would do, opening nothing."""

    write_scope = TokenScope.READ  # a POST that changes nothing

    @extend_schema(
        summary="Preview a proposed version's impact",
        description=("The checker's verdicts, the suggested version, and the consumer teams that would have to "
                     "acknowledge (with their jobs and the columns they read) or would be told they are not "
                     "affected. Each team carries a `verdict` whose `kind` is proven_broken (with `error`, `job`, "
                     "`by`), assumed_affected (with `path` and the `reason` no proof was possible), verified_safe or "
                     "not_affected (with `reason`); a retype is type-checked per expression of each consumer's SQL. "
                     "`?verify=1` also EXPLAINs the affected teams' SQL on a scratch PostgreSQL schema holding the "
                     "proposed shape (`verification` says what ran, or why it could not). The body is the whole "
                     "proposed contract document. Nothing is stored."),
        parameters=[OpenApiParameter("verify", bool, description="Prove per team on a scratch schema (PostgreSQL)."),
                    OpenApiParameter("format", str, enum=["markdown"],
                                     description="`markdown` adds a block fit for a pull-request comment.")],
        request=inline_serializer("ImpactRequest", {"schema": serializers.DictField()}),
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request, name: str):
        document = request.data
        if isinstance(document, dict) and isinstance(document.get("document"), dict):
            document = document["document"]  # {"document": …} as the change-request API takes it
        if not isinstance(document, dict) or not isinstance(document.get("schema"), dict):
            return Response({"detail": "Send the whole proposed contract document as the JSON body "
                                       "(schema:, meta: and its sections).", "code": "bad_document"},
                            status=status.HTTP_400_BAD_REQUEST)
        if str(document["schema"].get("name")) != name:
            return Response({"detail": f"The document is for {document['schema'].get('name')!r}, not {name!r}.",
                             "code": "name_mismatch"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            answer = preview(document, by=request.user,
                             verify=request.query_params.get("verify", "") in ("1", "true", "yes"))
        except PreviewError as exc:
            return Response({"detail": f"{exc}: {'; '.join(exc.errors)}", "code": "gate_refused",
                             "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        if request.query_params.get("format") == "markdown":
            return Response({**answer, "markdown": as_markdown(answer)})
        return Response(answer)
