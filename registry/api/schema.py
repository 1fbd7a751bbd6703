"""What the OpenAPI document says about the core's authentication, so that
generated clients send the bearer token (drf-spectacular reads extensions
when this module is imported, from registry/api/urls.py, so only a process that
serves or writes the API loads drf-spectacular), and about the
errors every operation can answer (AutoSchema, the API's schema class)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import ResolvedComponent

from registry.hooks import hot_paths


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "registry.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API token (`dr_…`): `Authorization: Bearer <token>`. Admins issue them in the "
                               "Django admin or with `manage.py create_token` (docs/lineage.md, Tokens)."}


# --- Errors in the OpenAPI document ---------------------------------------------------

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error the API answers: what went wrong and where, and a stable snake_case code.",
    "properties": {
        "detail": {"type": "string", "description": "What was wrong and where, in a sentence."},
        "code": {"type": "string", "description": "A stable snake_case code (`not_found`, `token_missing`, "
                                                  "`database_unavailable`, …)."},
        "fields": {"type": "object", "additionalProperties": {},
                   "description": "On a 400 for a body that breaks its schema: each field's problems."},
    },
    "required": ["detail", "code"],
}

ERROR_DESCRIPTIONS = {
    400: "The request cannot be read or breaks a rule (a NUL character, a bad parameter or body): `detail` "
         "says what and where.",
    401: "No credentials, or a token that is malformed, unknown or revoked (`code` says which).",
    403: "The token lacks the scope this needs, or the person or team may not do this.",
    404: "No such object.",
    406: "No representation matches the Accept header.",
    409: "The object's current state does not allow it (`code` names the rule).",
    411: "A chunked body: send it with a Content-Length.",
    413: "The body is larger than the server accepts.",
    410: "What was asked for is gone (a contract lane past its sunset, `lane_sunset`): ask for an explicit "
         "version or a newer lane.",
    415: "The body's Content-Type is not one this operation reads.",
    422: "The body is well-formed but breaks its specification (`detail` says where); nothing was stored.",
    429: "The token has sent more request bytes than its budget (LINEAGE_TOKEN_BYTES_PER_SECOND): retry after "
         "Retry-After seconds; nothing was stored.",
    503: "The database is unavailable (down or restarting): retry after Retry-After seconds.",
}
UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
PAGING = ("limit", "offset", "after", "before")  # a page past the end is empty, not a 404


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema, with the errors every operation can answer
    (registry/errors.py, registry.api.errors) listed beside its own: each in the
    `Error` shape, which also replaces a free-form error body a view declared.

    Which ones, by what the operation takes:
    - every one: 400 (a NUL anywhere is refused before any view), 401, 403, 503;
    - through DRF (all but the ingest's hot path): 406, and 409 for a write
      (a domain rule about the object's state);
    - a path parameter, or a query parameter other than paging: 404 (the object
      or node it names is unknown);
    - a body: 413 and 415, and 411 outside the hot path."""

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        self.registry.register_on_missing(ResolvedComponent(
            name="Error", type=ResolvedComponent.SCHEMA, object="Error", schema=ERROR_SCHEMA))
        error_ref = {"$ref": "#/components/schemas/Error"}
        responses = operation["responses"]
        for status, response in responses.items():
            if status >= "400":
                response["description"] = response.get("description") or ERROR_DESCRIPTIONS.get(int(status), "")
                for media in response.get("content", {}).values():
                    if media.get("schema", {}).get("type") == "object" and "properties" not in media["schema"]:
                        media["schema"] = error_ref  # a view's free-form `dict` error: it is this shape
                if status == "429":
                    response["headers"] = {"Retry-After": {
                        "schema": {"type": "integer"}, "description": "Seconds until the token's budget allows a request."}}
        for status in sorted(self._errors_answered(operation, method)):
            response = responses.setdefault(str(status), {
                "content": {"application/json": {"schema": error_ref}}, "description": ERROR_DESCRIPTIONS[status]})
            if status == 503:
                response["headers"] = {"Retry-After": {
                    "schema": {"type": "integer"}, "description": "Seconds to wait before retrying."}}
            if status == 429:
                response["headers"] = {"Retry-After": {
                    "schema": {"type": "integer"}, "description": "Seconds until the token's budget allows a request."}}
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _errors_answered(self, operation: dict, method: str) -> set[int]:
        statuses = {400, 401, 403, 503}
        hot = self._is_hot_path(method)
        if not hot:
            statuses.add(406)
            if method in UNSAFE_METHODS:
                statuses.add(409)
        if any(p.get("in") == "path" or (p.get("in") == "query" and p.get("name") not in PAGING)
               for p in operation.get("parameters", [])):
            statuses.add(404)
        if "requestBody" in operation:
            statuses |= {413, 415} if hot else {411, 413, 415}
        if method in UNSAFE_METHODS:
            statuses.add(429)  # the token's budget of request bytes (registry.ratelimit)
        return statuses

    def _is_hot_path(self, method: str) -> bool:
        """The ingest's endpoints take the short way past DRF (registry.hooks.hot_path)."""
        for url_name, methods in hot_paths().items():
            if method in methods and reverse(url_name).rstrip("/") == self.path.rstrip("/"):
                return True
        return False
