"""Adopting the registry over the API: draft a contract from a dataset's observed schema,
and import a dbt project's artefacts (governance admins)."""

from __future__ import annotations

import json

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from registry_client.warehouse_types import DIALECTS
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from contracts_app.dbt import DbtArtefactError, import_project, read_project
from contracts_app.drafting import CannotDraft, draft_from_observed_schema
from registry.models import Dataset, acts_for, is_governance_admin


class DatasetDraft(APIView):
    @extend_schema(
        summary="Draft a contract from a dataset's observed schema",
        description=("For an owned dataset with a schema facet and no contract: a draft in its owner team's review "
                     "queue (201), or the existing draft when nothing changed (200). 409 names what cannot be drafted, "
                     "e.g. each warehouse type the type table cannot map."),
        request=inline_serializer("DatasetDraftRequest", {"dialect": serializers.ChoiceField(DIALECTS, required=False)}),
        responses={200: OpenApiTypes.OBJECT, 201: OpenApiTypes.OBJECT},
    )
    def post(self, request, pk: int):
        dataset = get_object_or_404(Dataset.objects.select_related("owner_team"), pk=pk)
        if dataset.owner_team_id is None or not (is_governance_admin(request.user)
                                                 or acts_for(request.user, dataset.owner_team)):
            raise PermissionDenied("Only a member of the dataset's owner team (or a governance admin) drafts its "
                                   "contract.")
        dialect = request.data.get("dialect") if isinstance(request.data, dict) else None
        if dialect is not None and dialect not in DIALECTS:
            raise ParseError(f"Unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}.")
        try:
            change = draft_from_observed_schema(dataset, by=request.user, dialect=dialect)
        except CannotDraft as exc:
            return Response({"detail": " ".join(exc.messages), "code": "cannot_draft"}, status=status.HTTP_409_CONFLICT)
        created = change.action == "created"
        return Response(change.to_dict(), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _artefact(request, key: str, required: bool) -> dict | None:
    value = request.data.get(key) if hasattr(request.data, "get") else None
    if value is None or value == "":
        if required:
            raise ParseError(f"Send dbt's {key}.json as the '{key}' part (a file) of a multipart body.")
        return None
    if hasattr(value, "read"):
        try:
            value = json.loads(value.read().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ParseError(f"{key}: not JSON ({exc}).") from None
    if not isinstance(value, dict):
        raise ParseError(f"{key}: a JSON object is expected (dbt's target/{key}.json).")
    return value


class DbtImport(APIView):
    @extend_schema(
        summary="Import a dbt project's manifest (and catalog): datasets, owners, consumers, draft contracts",
        description=("Governance admins. Multipart parts `manifest` and `catalog` (files: dbt's target/manifest.json "
                     "and target/catalog.json), `namespace` (as dbt-ol names it, e.g. postgres://host:5432; default: "
                     "the one lineage already has the project's datasets in), `dialect`, and `dry_run` (true: the "
                     "changes it would make, nothing stored). The answer lists what changed, what was left alone and "
                     "why, and each node that could not be drafted."),
        request={"multipart/form-data": inline_serializer("DbtImportRequest", {
            "manifest": serializers.FileField(), "catalog": serializers.FileField(required=False),
            "namespace": serializers.CharField(required=False), "dry_run": serializers.BooleanField(required=False),
            "dialect": serializers.ChoiceField(DIALECTS, required=False)})},
        responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request):
        if not is_governance_admin(request.user):
            raise PermissionDenied("Importing dbt artefacts is for governance admins.")
        if not hasattr(request.data, "get"):
            raise ParseError("Send a multipart body: the manifest and catalog files, namespace, dialect, dry_run.")
        manifest = _artefact(request, "manifest", required=True)
        catalog = _artefact(request, "catalog", required=False)
        dialect = request.data.get("dialect") or None
        namespace = request.data.get("namespace") or None
        if namespace is not None and not isinstance(namespace, str):
            raise ParseError("namespace: a string such as postgres://warehouse:5432.")
        if dialect is not None and dialect not in DIALECTS:
            raise ParseError(f"Unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}.")
        dry_run = str(request.data.get("dry_run", "")).lower() in ("1", "true", "yes", "on")
        try:
            project = read_project(manifest, catalog)
            report = import_project(project, namespace=namespace, dialect=dialect,
                                    by=request.user, dry_run=dry_run)
        except DbtArtefactError as exc:
            return Response({"detail": " ".join(exc.messages), "code": "bad_artefact"},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(report.to_dict())
