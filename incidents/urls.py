from django.urls import path

from incidents import views

urlpatterns = [
    path("incidents/<int:pk>/acknowledge/", views.acknowledge_view, name="incidents-acknowledge"),
    path("incidents/<int:pk>/resolve/", views.resolve_view, name="incidents-resolve"),
    path("datasets/<int:pk>/quality-slo/", views.quality_slo_view, name="incidents-quality-slo"),
]
