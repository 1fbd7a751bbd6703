from django.urls import path

from freshness import views

urlpatterns = [
    path("freshness/", views.overview, name="freshness-overview"),
    path("datasets/<int:pk>/freshness/", views.slo_edit, name="freshness-slo"),
]
