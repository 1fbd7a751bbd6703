from django.apps import AppConfig


class ChangeRequestsConfig(AppConfig):
    name = "change_requests"
    verbose_name = "Change requests"

    def ready(self) -> None:
        # Each import registers something: admin pages, the demo step, the dataset-page
        # section, the listener that opens a request for a breaking version, and the keeper
        # of the teams' channels for teams files.
        from change_requests import admin, demo, inbox, receivers, team_channels, views  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Change requests", "change-request-list", order=30)
        nav_item("Drafts", "draft-queue", order=31)
