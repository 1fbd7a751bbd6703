from django.apps import AppConfig


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "Registry"

    def ready(self) -> None:
        from registry import checks  # noqa: F401  (registers the system checks)
