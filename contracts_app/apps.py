from django.apps import AppConfig


class ContractsConfig(AppConfig):
    name = "contracts_app"
    verbose_name = "Contracts"

    def ready(self) -> None:
        from contracts_app import change_request_admin, review_views, views  # noqa: F401  (register admin and page sections)
        from registry.hooks import nav_item

        nav_item("Contracts", "contract-catalogue", order=20)
        nav_item("Change requests", "change-request-list", order=30)
