from django.apps import AppConfig


class ContractsConfig(AppConfig):
    name = "contracts_app"
    verbose_name = "Contracts"

    def ready(self) -> None:
        # Schema drift listens to lineage's dataset_written and adds a dataset-page section and a metric.
        from contracts_app import drift

        drift.register_collector()
