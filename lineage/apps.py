from django.apps import AppConfig


class LineageConfig(AppConfig):
    name = "lineage"
    verbose_name = "Lineage"

    def ready(self) -> None:
        from lineage import views  # noqa: F401  (registers the dataset-page section)
        from registry.hooks import nav_item

        nav_item("Jobs", "lineage-job-list", order=30)
