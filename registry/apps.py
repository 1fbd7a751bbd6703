from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate

from registry.db import read_json_with_orjson, read_out_of_range_times


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "Registry"

    def ready(self) -> None:
        from registry import checks  # noqa: F401  (registers the system checks)

        # Once per `migrate` (sent for this app after every app's migrations ran).
        post_migrate.connect(grant_serving_role_after_migrate, sender=self)
        # Timestamps outside Python's range read as its nearest (registry/db.py).
        connection_created.connect(read_out_of_range_times)
        # json values (the lineage walk's payloads) decoded by orjson (registry/db.py).
        connection_created.connect(read_json_with_orjson)


def grant_serving_role_after_migrate(sender, using: str = "default", **kwargs) -> None:
    """After migrations (run as the owner role), give DATABASE_SERVING_ROLE its grants:
    new tables are reachable, the audit table stays SELECT/INSERT only (registry/dbroles.py)."""
    from django.conf import settings
    from django.db import connections

    from registry.dbroles import grant_serving_role

    role = settings.DATABASE_SERVING_ROLE
    if role and connections[using].vendor == "postgresql":
        grant_serving_role(connections[using], role)
