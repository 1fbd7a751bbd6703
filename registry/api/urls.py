from django.urls import path

from registry.api import views

urlpatterns = [
    path("teams/", views.TeamList.as_view(), name="api-team-list"),
    path("team-sync/", views.TeamSync.as_view(), name="api-team-sync"),
    path("teams/<slug:team>/", views.TeamDetail.as_view(), name="api-team-detail"),
    path("teams/<slug:team>/members/", views.TeamMembers.as_view(), name="api-team-members"),
    path("teams/<slug:team>/members/<str:username>/", views.TeamMemberDetail.as_view(), name="api-team-member"),
    path("teams/<slug:team>/job-namespaces/", views.TeamJobNamespaces.as_view(), name="api-team-job-namespaces"),
    path("teams/<slug:team>/job-namespaces/<path:namespace>/", views.TeamJobNamespaceDetail.as_view(),
         name="api-team-job-namespace"),
    path("datasets/", views.DatasetList.as_view(), name="api-dataset-list"),
    path("datasets/<int:pk>/", views.DatasetDetail.as_view(), name="api-dataset-detail"),
    path("datasets/<int:pk>/claim/", views.DatasetClaim.as_view(), name="api-dataset-claim"),
    path("datasets/<int:pk>/consumers/", views.DatasetConsumers.as_view(), name="api-dataset-consumers"),
    path("datasets/<int:pk>/consumers/<slug:team>/", views.DatasetConsumerDetail.as_view(), name="api-dataset-consumer"),
]
