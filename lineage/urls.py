from django.urls import path

from lineage import claim_views, views

urlpatterns = [
    path("lineage/jobs/", views.job_list, name="lineage-job-list"),
    path("lineage/jobs/<int:pk>/", views.job_detail, name="lineage-job-detail"),
    path("lineage/jobs/<int:pk>/claim/", claim_views.job_claim, name="lineage-job-claim"),
    path("lineage/datasets/<int:pk>/columns/", views.dataset_columns, name="lineage-dataset-columns"),
]
