from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = "Incidents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # They register themselves with the hooks they listen to (lineage, contracts,
        # freshness's signals and deadlines, the core's pages and inbox). The tasks are
        # found by the worker's autodiscovery.
        from incidents import hooks, metrics, pending, quality_slo, receivers  # noqa: F401
        from registry.hooks import hot_path

        receivers.register_dataset_flag()
        # Pipelines ask before every run: the preflight takes the short way (a bearer token, no session).
        hot_path("api-preflight", ("GET",))
        metrics.register()
