from django.apps import AppConfig


class ContractsConfig(AppConfig):
    name = "contracts_app"
    verbose_name = "Contracts"
