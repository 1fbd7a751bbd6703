from django.apps import AppConfig


class ChangeRequestsConfig(AppConfig):
    name = "change_requests"
    verbose_name = "Change requests"

    def ready(self) -> None:
        # Each import registers something: admin pages, the demo step, the dataset-page
        # section, and the listener that opens a request for a breaking version.
        from change_requests import admin, demo, receivers, views  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Change requests", "change-request-list", order=30)
        nav_item("Drafts", "draft-queue", order=31)
