from django.apps import AppConfig


class FreshnessConfig(AppConfig):
    name = "freshness"
    verbose_name = "Freshness"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from freshness import demo, hooks, metrics, receivers, runner  # noqa: F401 - they register themselves
        from registry.hooks import nav_item

        nav_item("Freshness", "freshness-overview", order=40)
        metrics.register()
        runner.start_with_runserver()
