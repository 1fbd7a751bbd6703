from django.urls import path

from contracts_app import drift_api

urlpatterns: list = [
    path("datasets/<int:pk>/drift/", drift_api.DatasetDriftList.as_view(), name="api-dataset-drift"),
    path("drift/", drift_api.LatestDriftList.as_view(), name="api-drift-latest"),
]
