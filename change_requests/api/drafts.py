"""The draft review API: the owner team's queue, a draft with its gate verdict and
impact preview, and its approval (which hands it to the publish gate)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from change_requests.impact import PreviewError, preview
from contracts_app.drafting import approve_draft, gate_verdict
from contracts_app.models import Draft, DraftState
from registry.constants import TokenScope
from registry.models import Team


class DraftSerializer(serializers.ModelSerializer):
    owner_team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    dataset = serializers.SerializerMethodField()
    edited_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    reviewed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    page = serializers.SerializerMethodField()
    # Plain strings: their choices are listed in the docs (their names would clash with other "state"/"origin" enums).
    state = serializers.CharField(read_only=True, help_text="pending, published, change_requested or discarded")
    origin = serializers.CharField(read_only=True, help_text="dbt, observed or person")

    class Meta:
        model = Draft
        fields = ["id", "page", "contract_name", "version", "schema_type", "owner_team", "state", "origin", "source",
                  "dataset", "notes", "created_at", "edited_by", "edited_at", "reviewed_by", "reviewed_at", "outcome",
                  "change_request_id"]

    def get_dataset(self, obj: Draft) -> dict[str, Any] | None:
        if obj.dataset is None:
            return None
        return {"id": obj.dataset.pk, "namespace": obj.dataset.namespace, "name": obj.dataset.name}

    def get_page(self, obj: Draft) -> str:
        request = self.context.get("request")
        url = obj.get_absolute_url()
        return request.build_absolute_uri(url) if request is not None else url


def review_of(draft: Draft, user) -> dict[str, Any]:
    """What a reviewer sees beside the document: the gate's verdict and, when it passes,
    the impact preview (who the version would wait for)."""
    errors = gate_verdict(draft)
    impact = None
    if not errors:
        try:
            impact = preview(draft.document)
        except (PreviewError, ValueError) as exc:
            errors = getattr(exc, "errors", None) or [str(exc)]
    return {"gate": {"passes": not errors, "errors": errors}, "impact": impact,
            "can_approve": draft.is_pending and draft.can_be_reviewed_by(user)}


def _draft(pk: int) -> Draft:
    draft = Draft.objects.select_related("owner_team", "dataset", "edited_by", "reviewed_by").filter(pk=pk).first()
    if draft is None:
        raise NotFound(f"No draft {pk}.")
    return draft


class DraftList(generics.ListAPIView):
    serializer_class = DraftSerializer
    keyset = ("owner_team__slug", "created_at", "pk")

    @extend_schema(
        summary="Drafts waiting for review",
        parameters=[OpenApiParameter("team", str, description="an owner team's slug (default: your teams', or all "
                                                             "for a governance admin)"),
                    OpenApiParameter("state", str, description="pending (default), published, change_requested, "
                                                              "discarded or all")],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        drafts = Draft.objects.select_related("owner_team", "dataset", "edited_by", "reviewed_by")
        slug = self.request.query_params.get("team")
        if slug:
            team = Team.objects.filter(slug=slug).first()
            if team is None:
                raise NotFound(f"No team {slug!r}.")
            drafts = drafts.filter(owner_team=team)
        else:
            drafts = drafts.reviewable_by(self.request.user)
        state = self.request.query_params.get("state", DraftState.PENDING)
        if state != "all":
            if state not in DraftState.values:
                raise ValidationError({"detail": f"Unknown state {state!r}; choose one of "
                                                 f"{', '.join(DraftState.values)} or all."})
            drafts = drafts.filter(state=state)
        return drafts.order_by("owner_team__slug", "created_at", "pk")


class DraftDetail(APIView):
    @extend_schema(summary="A draft, its document, the gate's verdict and the impact preview",
                   responses={200: OpenApiTypes.OBJECT})
    def get(self, request, pk: int):
        draft = _draft(pk)
        return Response({**DraftSerializer(draft, context={"request": request}).data, "document": draft.document,
                         **review_of(draft, request.user)})


    @extend_schema(
        summary="Replace a pending draft's document (a member of its owner team)",
        description=("The body is the whole document ({\"document\": …} or the document itself), with the draft's "
                     "schema.name and schema.version. Audited; from then on re-running the generator leaves the draft "
                     "as it is."),
        request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT},
    )
    def put(self, request, pk: int):
        draft = _draft(pk)
        document = request.data
        if isinstance(document, dict) and isinstance(document.get("document"), dict):
            document = document["document"]
        if not isinstance(document, dict) or not isinstance(document.get("schema"), dict):
            raise ValidationError({"detail": "Send the whole contract document (schema:, columns: …) as the body."})
        draft.edit(dict(document), by=request.user)
        return self.get(request, pk)


class DraftApprove(APIView):
    write_scope = TokenScope.CONTRACTS_PUBLISH

    @extend_schema(
        summary="Approve a draft (a member of its owner team); the publish gate then decides",
        description=("Published at once when compatible; breaking: a change request opens and waits for the "
                     "consumer teams. 403 for anyone outside the owner team; 409 when the gate refuses it (nothing "
                     "is recorded) or it is no longer pending."),
        request=None, responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request, pk: int):
        draft = _draft(pk)
        outcome = approve_draft(draft, by=request.user)
        draft.refresh_from_db()
        return Response({**DraftSerializer(draft, context={"request": request}).data, "outcome": outcome.to_dict()})
