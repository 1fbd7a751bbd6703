from django.apps import AppConfig


class FreshnessConfig(AppConfig):
    name = "freshness"
    verbose_name = "Freshness"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # They register themselves: scheduling with evaluation's on_deadlines_moved, and
        # tasks with Celery, which scheduling publishes the deadline task through.
        from freshness import demo, hooks, inbox, metrics, receivers, runner, scheduling, tasks  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Freshness", "freshness-overview", order=40)
        metrics.register()
        runner.start_with_runserver()
