from django.apps import AppConfig


class LanesConfig(AppConfig):
    name = "lanes"
    verbose_name = "Lanes"

    def ready(self) -> None:
        # Each import registers something: the keeper of lane dates and the listeners
        # for recorded and fetched versions, the inbox provider, admin pages, the demo step.
        from lanes import admin, demo, inbox, receivers  # noqa: F401
