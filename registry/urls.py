from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from registry import views

urlpatterns = [
    path("", views.dataset_list, name="dataset-list"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset-detail"),
    path("datasets/<int:pk>/claim/", views.dataset_claim, name="dataset-claim"),
    path("datasets/<int:pk>/consume/", views.dataset_consume, name="dataset-consume"),
    path("datasets/<int:pk>/unconsume/", views.dataset_unconsume, name="dataset-unconsume"),
    path("teams/sync/", views.teams_sync_page, name="teams-sync"),
    path("readings/", views.readings, name="readings-to-confirm"),
    path("readings/confirm/", views.readings_confirm, name="readings-confirm"),
    path("inbox/", views.inbox_page, name="inbox"),
    path("inbox/teams/<slug:slug>/", views.team_inbox_page, name="team-inbox"),
    path("jobs/unowned/", views.unowned_jobs_page, name="unowned-jobs"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The docs pages' own inline styles and Redoc's start-up script and worker need a looser policy.
    path("api/docs/", views.docs_csp(SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    path("api/redoc/", views.docs_csp(SpectacularRedocView.as_view(url_name="api-schema")), name="api-redoc"),
    # The apps built on the core are named by string: the core imports none of them.
    # Lineage ingest comes first: it is the hot path, and resolving a URL tries
    # every pattern listed before the one that matches.
    path("api/", include("lineage.api_urls")),
    path("api/", include("registry.api.urls")),
    path("api/", include("contracts_app.api_urls")),
    path("api/", include("change_requests.api_urls")),
    path("api/", include("lanes.api_urls")),
    path("api/", include("freshness.api_urls")),
    path("api/", include("incidents.api_urls")),
    path("", include("contracts_app.urls")),
    path("", include("change_requests.urls")),
    path("", include("lanes.urls")),
    path("", include("lineage.urls")),
    path("", include("freshness.urls")),
    path("", include("incidents.urls")),
    path("metrics", views.metrics, name="prometheus-django-metrics"),
]

# Errors answer JSON under /api/ and pages elsewhere (registry/errors.py).
handler400 = "registry.errors.bad_request"
handler403 = "registry.errors.permission_denied"
handler404 = "registry.errors.page_not_found"
handler500 = "registry.errors.server_error"
