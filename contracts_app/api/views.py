"""The contract API: browse, fetch documents, diff versions, validate payloads;
set a contract's compatibility mode and bind or unbind its datasets."""

from __future__ import annotations

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from registry_client.dtypes import STRING_STORAGES
from registry_client.identity import META_KEYS
from registry_client.versions import lane_of
from rest_framework import generics, renderers, serializers, status
from rest_framework.exceptions import APIException, NotFound, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from contracts_app.api.serializers import (
    BindingSerializer,
    BindRequestSerializer,
    ContractDetailSerializer,
    ContractSerializer,
    ModeChangeSerializer,
    SpecSerializer,
    VersionSerializer,
)
from contracts_app.diff import structural_diff
from contracts_app.hooks import lane_dates_of, version_fetched
from contracts_app.models import Contract, ContractVersion, DatasetBinding, IntegrationSpec
from contracts_app.odcs import odcs_yaml
from contracts_app.publishing import check_in_required_modes, index_rows
from contracts_app.selectors import LanePastSunset, is_selector, lane_warning, resolve
from contracts_app.yamlio import dump_plain_yaml
from registry.constants import TokenScope
from registry.models import Dataset


class ValidationRefused(APIException):
    """A payload the validate endpoint cannot check against the contract (400, with a code)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "refused"




class YAMLRenderer(renderers.BaseRenderer):
    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode()
        return dump_plain_yaml(data).encode()


# The other names YAML goes by: a client asking for any of them gets YAML, labelled as asked.
class XYAMLRenderer(YAMLRenderer):
    media_type = "application/x-yaml"


class TextYAMLRenderer(YAMLRenderer):
    media_type = "text/yaml"


YAML_RENDERERS = [YAMLRenderer, XYAMLRenderer, TextYAMLRenderer]
# A YAML body is described by the structure it holds, as a JSON one is.
YAML_RESPONSES = {(200, "application/json"): OpenApiTypes.OBJECT,
                  **{(200, r.media_type): OpenApiTypes.OBJECT for r in YAML_RENDERERS}}


def contracts_with_versions():
    return Contract.objects.select_related("owner_team").prefetch_related(
        Prefetch("versions", queryset=ContractVersion.objects.only("id", "contract_id", "version"))
    )


class LaneGone(APIException):
    """A lane selector named a lane past its sunset (410 lane_sunset)."""

    status_code = status.HTTP_410_GONE
    default_code = "lane_sunset"


RESOLVED_HEADER = "X-Registry-Resolved"
LANE_GONE = {410: OpenApiTypes.OBJECT}
SELECTOR_NOTE = ("`version` is a version (`2.1.0`), `latest`, or a lane (`2` or `2.x`: the newest 2.y.z release); "
                 "a lane past its sunset answers 410 (`lane_sunset`), a deprecated one a `Warning` header.")


def get_version(name: str, version: str, warnings: list[str] | None = None) -> ContractVersion:
    """The version `version` names (a selector resolves; docs/lanes.md); a deprecated lane's
    warning is appended to `warnings`."""
    if is_selector(version):
        contract = Contract.objects.filter(name=name).first()
        try:
            resolved = resolve(contract, version) if contract is not None else None
        except LanePastSunset as exc:
            raise LaneGone(exc.messages[0]) from None
        if resolved is not None:
            if warnings is not None and resolved.warning:
                warnings.append(resolved.warning)
            return ContractVersion.objects.select_related("contract", "published_by").get(pk=resolved.version.pk)
    cv = ContractVersion.objects.select_related("contract", "published_by").filter(contract__name=name, version=version).first()
    if cv is not None and warnings is not None:
        dates = lane_dates_of([cv.contract_id]).get((cv.contract_id, lane_of(cv.version)))
        if warning := lane_warning(cv.contract, cv.version, dates, timezone.localdate()):
            warnings.append(warning)
    if cv is None:
        if not Contract.objects.filter(name=name).exists():
            raise NotFound(f"No contract named {name!r}.")
        known = ", ".join(ContractVersion.objects.filter(contract__name=name).values_list("version", flat=True))
        raise NotFound(f"Contract {name!r} has no version {version!r} (published: {known or 'none'}).")
    return cv


class IndexView(APIView):
    """What the thin client's HTTP backend reads: the versions in the store, as the index CSVs list them."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request):
        specs = IntegrationSpec.objects.filter(uploaded_at__isnull=False).select_related("contract_version__contract")
        return Response({
            "contracts": index_rows(),
            "specs": [
                {"name": s.contract_version.contract.name, "key": s.store_key, "version": s.version,
                 "date": s.published_at.date().isoformat()}
                for s in specs
            ],
        })


class DomainList(APIView):
    @extend_schema(responses=inline_serializer("Domain", many=True, fields={
        "domain": serializers.CharField(), "contracts": serializers.IntegerField(),
        "subdomains": serializers.ListField(child=serializers.CharField())}))
    def get(self, request):
        domains: dict[str, dict] = {}
        for domain, subdomains in Contract.objects.values_list("domain", "subdomains"):
            entry = domains.setdefault(domain, {"domain": domain, "contracts": 0, "subdomains": set()})
            entry["contracts"] += 1
            if subdomains:
                entry["subdomains"].add(subdomains[0])
        return Response([{**d, "subdomains": sorted(d["subdomains"])} for _, d in sorted(domains.items())])


@extend_schema(parameters=[OpenApiParameter(k, str, description=f"meta.{k} equals (list-valued meta: any member)") for k in META_KEYS]
               + [OpenApiParameter("domain", str), OpenApiParameter("schema_type", str)])
class ContractList(generics.ListAPIView):
    serializer_class = ContractSerializer
    keyset = ("name",)  # unique

    def get_queryset(self):
        qs = contracts_with_versions()
        params = self.request.query_params
        if params.get("domain"):
            qs = qs.filter(domain=params["domain"])
        if params.get("schema_type"):
            qs = qs.filter(schema_type=params["schema_type"])
        for key in META_KEYS:
            value = params.get(key)
            if value:
                # meta.source_system may be a string or a list of strings.
                qs = qs.filter(**{f"meta__{key}": value}) | qs.filter(**{f"meta__{key}__contains": [value]})
        return qs.order_by("name").distinct()


def get_contract(name: str, *, with_details: bool = False) -> Contract:
    contracts = contracts_with_versions()
    if with_details:
        contracts = contracts.prefetch_related(Prefetch("bindings", queryset=DatasetBinding.objects.select_related("dataset")))
    contract = contracts.filter(name=name).first()
    if contract is None:
        raise NotFound(f"No contract named {name!r}.")
    return contract


class ContractDetail(APIView):
    """A contract; PATCH sets its compatibility mode (its owner team or a governance admin)."""

    @extend_schema(responses=ContractDetailSerializer)
    def get(self, request, name: str):
        return Response(ContractDetailSerializer(get_contract(name, with_details=True)).data)

    @extend_schema(request=ModeChangeSerializer, responses=ContractDetailSerializer)
    def patch(self, request, name: str):
        contract = get_contract(name)
        body = ModeChangeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        contract.set_mode(body.validated_data["compatibility_mode"], by=request.user)
        return Response(ContractDetailSerializer(get_contract(name, with_details=True)).data)


class ContractBindings(APIView):
    """The datasets bound to a contract; POST binds one (by id or by namespace and name)."""

    @extend_schema(responses=BindingSerializer(many=True))
    def get(self, request, name: str):
        contract = get_contract(name)
        bindings = contract.bindings.select_related("dataset").order_by("dataset__namespace", "dataset__name")
        return Response(BindingSerializer(bindings, many=True).data)

    @extend_schema(request=BindRequestSerializer, responses={201: BindingSerializer})
    def post(self, request, name: str):
        contract = get_contract(name)
        body = BindRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        binding = contract.bind(body.validated_data["dataset"], by=request.user)
        return Response(BindingSerializer(binding).data, status=status.HTTP_201_CREATED)


class ContractBindingDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, name: str, dataset: str):
        contract = get_contract(name)
        bound = get_object_or_404(Dataset, pk=dataset)
        if not contract.unbind(bound, by=request.user):
            raise NotFound(f"Dataset {bound} (id {bound.pk}) is not bound to {name}.")
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionList(generics.ListAPIView):
    serializer_class = VersionSerializer
    keyset = ("published_at", "id")  # within one contract

    def get_queryset(self):
        contract = get_object_or_404(Contract, name=self.kwargs["name"])
        return contract.versions.select_related("published_by").order_by("published_at", "id")


class OdcsRenderer(YAMLRenderer):
    format = "odcs"


class PanderaYAMLRenderer(YAMLRenderer):
    format = "pandera-yaml"


class PanderaJSONRenderer(renderers.JSONRenderer):
    # A media type of its own: the version's registry view is the application/json answer.
    media_type = "application/vnd.pandera+json"
    format = "pandera-json"


class JSONSchemaRenderer(renderers.JSONRenderer):
    media_type = "application/schema+json"
    format = "json-schema"


def _pandera():
    """registry_client.pandera_models, imported when a pandera format is asked for:
    pandas and pandera load then, not with every process that loads the URLs."""
    from registry_client import pandera_models

    return pandera_models


# ?format= on a version: the registry's own view of it, or the version in another tool's format.
EXPORT_FORMATS = {
    "odcs": lambda cv, strings: odcs_yaml(cv),
    "pandera-yaml": lambda cv, strings: _pandera().pandera_yaml(cv.document, strings),
    "pandera-json": lambda cv, strings: _pandera().pandera_json(cv.document, strings),
    "json-schema": lambda cv, strings: _pandera().pandera_json_schema(cv.document),
}
DATAFRAME_ONLY = ("pandera-yaml", "pandera-json", "json-schema")


class VersionDetail(APIView):
    """A version; `?format=odcs` is it as an Open Data Contract Standard contract (docs/odcs.md),
    `?format=pandera-yaml`, `?format=pandera-json` and `?format=json-schema` pandera's own formats
    (dataframe contracts; docs/odcs.md says which pandera reader takes which)."""

    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer, OdcsRenderer, PanderaYAMLRenderer,
                        PanderaJSONRenderer, JSONSchemaRenderer]

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["json", *EXPORT_FORMATS]),
                               OpenApiParameter("strings", str, enum=list(STRING_STORAGES),
                                                description="pandera formats: the string dtype written, `str` "
                                                            "(python, the default: any pandera reads it) or "
                                                            "`string[pyarrow]` (readers need pyarrow)")],
                   responses={(200, "application/json"): VersionSerializer, (200, "application/yaml"): OpenApiTypes.OBJECT,
                              (200, "application/vnd.pandera+json"): OpenApiTypes.OBJECT,
                              (200, "application/schema+json"): OpenApiTypes.OBJECT, **LANE_GONE},
                   description=SELECTOR_NOTE)
    def get(self, request, name: str, version: str):
        warnings: list[str] = []
        cv = get_version(name, version, warnings)
        return with_warnings(self._get(request, name, cv), warnings)

    def _get(self, request, name: str, cv: ContractVersion) -> Response:
        wanted = request.accepted_renderer.format
        if wanted not in EXPORT_FORMATS:
            return Response(VersionSerializer(cv).data)
        if wanted in DATAFRAME_ONLY and cv.contract.schema_type != "dataframe":
            raise ValidationRefused(
                f"{name} is a {cv.contract.schema_type} contract; ?format={wanted} is pandera's format for dataframe "
                f"contracts. Its JSON Schema sections are in the document (document/?format=json); "
                f"?format=odcs works for every contract.", code="not_a_dataframe_contract")
        strings = request.query_params.get("strings", "python")
        if strings not in STRING_STORAGES:
            raise ValidationRefused(f"strings={strings!r}: give python (dtype str) or pyarrow (dtype string[pyarrow])",
                                    code="unknown_string_storage")
        return Response(EXPORT_FORMATS[wanted](cv, strings))


class VersionDocument(APIView):
    """The document of a version: YAML as published (?format=yaml) or JSON."""

    renderer_classes = [renderers.JSONRenderer, *YAML_RENDERERS]

    @extend_schema(responses={**YAML_RESPONSES, **LANE_GONE}, description=SELECTOR_NOTE, parameters=[
        OpenApiParameter(RESOLVED_HEADER, str, OpenApiParameter.HEADER, required=False,
                         description="The thin client's report of what it asked for and got, "
                                     "`selector=2.x; version=2.3.0`: counted per token or team (docs/lanes.md).")])
    def get(self, request, name: str, version: str):
        warnings: list[str] = []
        cv = get_version(name, version, warnings)
        version_fetched.send(sender=ContractVersion, contract_version=cv, request=request,
                             selector=reported_selector(request.headers.get(RESOLVED_HEADER, ""), version))
        if request.accepted_renderer.format == "yaml":
            return with_warnings(Response(cv.yaml_text or cv.document), warnings)
        return with_warnings(Response(cv.document), warnings)


def reported_selector(header: str, asked: str) -> str:
    """The selector a client reported (`selector=2.x; version=2.3.0`), else "" (it opted out)."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == "selector" and value.strip():
            return value.strip()[:50]
    return ""


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """A deprecated lane says so in an HTTP Warning header (299: a miscellaneous persistent warning)."""
    if warnings:
        text = " ".join(warnings).replace('"', "'").encode("ascii", "replace").decode()
        response["Warning"] = f'299 - "{text}"'
    return response


class VersionSpec(APIView):
    renderer_classes = [renderers.JSONRenderer, *YAML_RENDERERS]

    @extend_schema(responses=YAML_RESPONSES)  # the spec's document, as published
    def get(self, request, name: str, version: str):
        cv = get_version(name, version)
        spec = cv.integration_specs.order_by("-published_at").first()
        if spec is None:
            raise NotFound(f"{name} {version} has no integration spec.")
        if request.accepted_renderer.format == "yaml":
            return Response(spec.yaml_text or spec.document)
        return Response(spec.document)


class SpecList(generics.ListAPIView):
    serializer_class = SpecSerializer
    keyset = ("published_at", "id")  # within one contract

    def get_queryset(self):
        get_object_or_404(Contract, name=self.kwargs["name"])
        return IntegrationSpec.objects.filter(contract_version__contract__name=self.kwargs["name"]).select_related(
            "contract_version__contract").order_by("published_at", "id")


class VersionDiff(APIView):
    """What changed from one version to another: the structural changes and the checker's verdict."""

    @extend_schema(parameters=[OpenApiParameter("from", str, required=True), OpenApiParameter("to", str, required=True)],
                   responses=OpenApiTypes.OBJECT)
    def get(self, request, name: str):
        old, new = request.query_params.get("from"), request.query_params.get("to")
        if not old or not new:
            raise ParseError("Give the two versions to compare: ?from=1.0&to=2.0")
        before, after = get_version(name, old), get_version(name, new)
        report = check_in_required_modes(before.contract, [before.document], after.document)
        return Response({
            "contract": name, "from": old, "to": new,
            "changes": [c.to_dict() for c in structural_diff(before.document, after.document)],
            "compatibility": report.to_dict() if report else None,
        })


def _section(document: dict, section: str | None) -> tuple[str, dict]:
    schema_type = document["schema"]["schema_type"]
    if schema_type == "dataframe":
        raise ValidationRefused(f"{document['schema']['name']} is a dataframe contract: it describes a table, not a JSON payload. "
                      "Validate frames with the client's get_pandera_model().", code="dataframe_contract")
    if schema_type == "event":
        if section not in (None, "", "payload"):
            raise ValidationRefused(f"an event contract has one section, 'payload', not {section!r}", code="unknown_section")
        return "payload", document["payload"]
    sections = {"request": document.get("request"), "response": document.get("response")}
    sections.update({f"callbacks.{k}": v for k, v in (document.get("callbacks") or {}).items()})
    if not section:
        raise ValidationRefused(f"name the section to validate against: ?section= one of {', '.join(sections)}", code="section_required")
    if section not in sections or sections[section] is None:
        raise ValidationRefused(f"{document['schema']['name']} has no section {section!r}; it has {', '.join(sections)}", code="unknown_section")
    return section, sections[section]



# What validating a payload answers: valid (200) or not, with each error (422).
PAYLOAD_VALIDATION = inline_serializer("PayloadValidation", {
    "contract": serializers.CharField(), "version": serializers.CharField(), "section": serializers.CharField(),
    "valid": serializers.BooleanField(),
    "errors": serializers.ListField(child=inline_serializer("PayloadError", {
        "path": serializers.CharField(), "message": serializers.CharField(), "validator": serializers.CharField()})),
})

class ValidatePayload(APIView):
    """Validate a JSON payload against an event contract or a named section of an api contract."""

    write_scope = TokenScope.READ  # a POST that checks a payload and stores nothing

    @extend_schema(parameters=[OpenApiParameter("section", str, description="api contracts: request, response or callbacks.<name>")],
                   request=OpenApiTypes.OBJECT,
                   responses={200: PAYLOAD_VALIDATION, 422: PAYLOAD_VALIDATION})  # 422: the payload breaks the contract
    def post(self, request, name: str, version: str):
        cv = get_version(name, version)
        section, schema = _section(cv.document, request.query_params.get("section"))
        try:
            validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            errors = sorted(validator.iter_errors(request.data), key=lambda e: list(e.absolute_path))
        except SchemaError as exc:
            return Response({"detail": f"the contract's {section} schema is invalid: {exc.message}", "code": "invalid_schema"},
                            status=status.HTTP_500_INTERNAL_SERVER_ERROR)
        body = {
            "contract": name, "version": version, "section": section, "valid": not errors,
            "errors": [{"path": "/" + "/".join(str(p) for p in e.absolute_path), "message": e.message,
                        "validator": e.validator} for e in errors],
        }
        return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY if errors else status.HTTP_200_OK)
