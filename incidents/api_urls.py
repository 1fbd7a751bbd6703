from django.urls import path

from incidents import api

urlpatterns = [
    path("preflight", api.Preflight.as_view(), name="api-preflight"),
    path("datasets/<int:pk>/contract-status/", api.DatasetContractStatus.as_view(), name="api-contract-status"),
    path("incidents/", api.IncidentList.as_view(), name="api-incident-list"),
    path("incidents/<int:pk>/", api.IncidentDetail.as_view(), name="api-incident-detail"),
    path("incidents/<int:pk>/acknowledge/", api.Acknowledge.as_view(), name="api-incident-acknowledge"),
    path("incidents/<int:pk>/resolve/", api.Resolve.as_view(), name="api-incident-resolve"),
]
