from django.urls import include, path

from lineage.api import views

urlpatterns = [
    path("v1/lineage", views.lineage_endpoint, name="api-lineage"),
    path("v1/lineage/batch", views.ingest_batch, name="api-lineage-batch"),
    path("v1/column-lineage", views.ColumnLineageView.as_view(), name="api-column-lineage"),
]

# --- Marquez's read API (lineage/marquez) --------------------------------------
# Marquez's Java client asks for /api/v1/lineage/ with the slash: the same
# endpoint (POST ingests, GET reads the graph).
urlpatterns += [
    path("v1/lineage/", views.lineage_endpoint, name="api-lineage-slash"),
    path("", include("lineage.marquez.urls")),
]
