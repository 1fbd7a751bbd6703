from freshness.api.urls import urlpatterns  # noqa: F401 - mounted at /api/ by registry.urls
