from django.apps import AppConfig


class LineageConfig(AppConfig):
    name = "lineage"
    verbose_name = "Lineage"

    def ready(self) -> None:
        from lineage import demo, views  # noqa: F401  (register the demo step and the dataset-page section)
        from registry.hooks import nav_item

        nav_item("Jobs", "lineage-job-list", order=30)
