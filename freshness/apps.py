from django.apps import AppConfig


class FreshnessConfig(AppConfig):
    name = "freshness"
    verbose_name = "Freshness"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # They register themselves: scheduling with evaluation's on_deadlines_moved. The
        # tasks are found by the worker's autodiscovery; scheduling sends them by name.
        from freshness import demo, hooks, inbox, metrics, receivers, runner, scheduling  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Freshness", "freshness-overview", order=40)
        metrics.register()
        runner.start_with_runserver()
