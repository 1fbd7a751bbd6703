from django.urls import path

from lineage.api import views

urlpatterns = [
    path("v1/lineage", views.lineage_endpoint, name="api-lineage"),
    path("v1/lineage/batch", views.ingest_batch, name="api-lineage-batch"),
    path("v1/column-lineage", views.ColumnLineageView.as_view(), name="api-column-lineage"),
]
