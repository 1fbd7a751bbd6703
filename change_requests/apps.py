from django.apps import AppConfig


class ChangeRequestsConfig(AppConfig):
    name = "change_requests"
    verbose_name = "Change requests"

    def ready(self) -> None:
        # Each import registers something: admin pages, the demo step, the dataset-page
        # section, the listener that opens a request for a breaking version, the keeper
        # of the teams' channels for teams files, and the versions waiting in a request
        # for the contracts pages.
        from change_requests import admin, demo, inbox, receivers, team_channels, views, waiting  # noqa: F401
        from registry.hooks import nav_item

        nav_item("Change requests", "change-request-list", order=30)
        nav_item("Drafts", "draft-queue", order=31)
