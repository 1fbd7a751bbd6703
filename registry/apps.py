from django.apps import AppConfig


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "Registry"

    def ready(self) -> None:
        from registry import checks  # noqa: F401  (registers the system checks)
        from registry.api import schema  # noqa: F401  (the bearer scheme in the OpenAPI document)
