from django.apps import AppConfig


class ContractsConfig(AppConfig):
    name = "contracts_app"
    verbose_name = "Contracts"

    def ready(self) -> None:
        from registry.hooks import nav_item

        nav_item("Change requests", "change-request-list", order=30)
