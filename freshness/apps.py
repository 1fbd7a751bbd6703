from django.apps import AppConfig


class FreshnessConfig(AppConfig):
    name = "freshness"
    verbose_name = "Freshness"
