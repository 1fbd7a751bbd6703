from django.apps import AppConfig


class ContractsConfig(AppConfig):
    name = "contracts_app"
    verbose_name = "Contracts"

    def ready(self) -> None:
        # Each import registers something: the demo step, dataset-page sections, the
        # inbox's items, drafts as versions waiting on the contracts pages.
        from contracts_app import demo, inbox, views, waiting  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Contracts", "contract-catalogue", order=20)

        # Schema drift listens to lineage's dataset_written and adds a dataset-page section and a metric.
        from contracts_app import drift

        drift.register_collector()
        drift.register_dataset_flag()
