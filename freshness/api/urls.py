from django.urls import path

from freshness.api import views

urlpatterns = [
    path("freshness/", views.FreshnessList.as_view(), name="api-freshness-list"),
    path("datasets/<int:pk>/freshness/", views.DatasetFreshnessView.as_view(), name="api-dataset-freshness"),
    path("datasets/<int:pk>/freshness/transitions/", views.DatasetTransitions.as_view(),
         name="api-dataset-freshness-transitions"),
]
