from django.urls import include, path

from lineage.api import facets, views

urlpatterns = [
    path("v1/lineage", views.lineage_endpoint, name="api-lineage"),
    path("v1/lineage/batch", views.ingest_batch, name="api-lineage-batch"),
    path("v1/column-lineage", views.ColumnLineageView.as_view(), name="api-column-lineage"),
    # Every Marquez path takes a trailing slash too (marquez-python's and the Java client's habits differ).
    path("v1/column-lineage/", views.ColumnLineageWithSlashView.as_view(), name="api-column-lineage-slash"),
    path("v1/lineage/batch/", views.ingest_batch_with_slash, name="api-lineage-batch-slash"),
    # What producers say about a dataset: current schema, facets, aliases, data quality.
    path("datasets/<int:pk>/schema/", facets.DatasetProducerView.as_view(), name="api-dataset-schema"),
    path("datasets/<int:pk>/quality/", facets.DatasetQualityList.as_view(), name="api-dataset-quality"),
    path("quality/", facets.LatestQualityList.as_view(), name="api-quality-latest"),
]

# --- Marquez's read API (lineage/marquez) --------------------------------------
# Marquez's Java client asks for /api/v1/lineage/ with the slash: the same
# endpoint (POST ingests, GET reads the graph).
urlpatterns += [
    path("v1/lineage/", views.lineage_endpoint_with_slash, name="api-lineage-slash"),
    path("", include("lineage.marquez.urls")),
]
