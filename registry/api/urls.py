from django.urls import path

from registry.api import inbox, ownership, schema, views  # noqa: F401  (schema: the bearer scheme in the OpenAPI document)

urlpatterns = [
    path("inbox/", inbox.InboxView.as_view(), name="api-inbox"),
    path("inbox/count/", inbox.InboxCount.as_view(), name="api-inbox-count"),
    path("teams/", views.TeamList.as_view(), name="api-team-list"),
    path("team-sync/", views.TeamSync.as_view(), name="api-team-sync"),
    path("teams/<slug:team>/", views.TeamDetail.as_view(), name="api-team-detail"),
    path("teams/<slug:team>/members/", views.TeamMembers.as_view(), name="api-team-members"),
    path("teams/<slug:team>/members/<str:username>/", views.TeamMemberDetail.as_view(), name="api-team-member"),
    path("teams/<slug:team>/job-namespaces/", views.TeamJobNamespaces.as_view(), name="api-team-job-namespaces"),
    path("teams/<slug:team>/job-namespaces/<path:namespace>/", views.TeamJobNamespaceDetail.as_view(),
         name="api-team-job-namespace"),
    path("teams/<slug:team>/aliases/", ownership.TeamAliases.as_view(), name="api-team-aliases"),
    path("teams/<slug:team>/aliases/<path:alias>/", ownership.TeamAliasDetail.as_view(), name="api-team-alias"),
    path("teams/<slug:team>/readings/", ownership.TeamReadings.as_view(), name="api-team-readings"),
    path("teams/<slug:team>/readings/confirm/", ownership.TeamReadingsConfirm.as_view(), name="api-team-readings-confirm"),
    path("ownership/rules/", ownership.OwnershipRulesView.as_view(), name="api-ownership-rules"),
    path("ownership/rules/versions/", ownership.OwnershipRulesVersions.as_view(), name="api-ownership-rules-versions"),
    path("ownership/jobs/", ownership.JobOwners.as_view(), name="api-job-owners"),
    path("ownership/unowned-jobs/", ownership.UnownedJobs.as_view(), name="api-unowned-jobs"),
    path("datasets/", views.DatasetList.as_view(), name="api-dataset-list"),
    path("datasets/<int:pk>/", views.DatasetDetail.as_view(), name="api-dataset-detail"),
    path("datasets/<int:pk>/claim/", views.DatasetClaim.as_view(), name="api-dataset-claim"),
    path("datasets/<int:pk>/consumers/", views.DatasetConsumers.as_view(), name="api-dataset-consumers"),
    path("datasets/<int:pk>/consumers/<slug:team>/", views.DatasetConsumerDetail.as_view(), name="api-dataset-consumer"),
]
