"""What the OpenAPI document says about the core's authentication, so that
generated clients send the bearer token (drf-spectacular reads extensions
when this module is imported, from RegistryConfig.ready)."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "registry.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API token (`dr_…`): `Authorization: Bearer <token>`. Admins issue them in the "
                               "Django admin or with `manage.py create_token` (docs/lineage.md, Tokens)."}
