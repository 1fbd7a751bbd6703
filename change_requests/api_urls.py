from django.urls import path, re_path

from change_requests.api import drafts, views

urlpatterns = [
    path("change-requests/", views.ChangeRequestList.as_view(), name="api-change-request-list"),
    path("change-requests/<int:pk>/", views.ChangeRequestDetail.as_view(), name="api-change-request-detail"),
    path("change-requests/<int:pk>/acknowledge/", views.Acknowledge.as_view(), name="api-change-request-acknowledge"),
    path("change-requests/<int:pk>/object/", views.Object.as_view(), name="api-change-request-object"),
    path("change-requests/<int:pk>/migrating/", views.Migrating.as_view(), name="api-change-request-migrating"),
    path("change-requests/<int:pk>/override-block/", views.OverrideBlock.as_view(),
         name="api-change-request-override-block"),
    path("change-requests/<int:pk>/publish/", views.Publish.as_view(), name="api-change-request-publish"),
    path("change-requests/<int:pk>/verify/", views.Verify.as_view(), name="api-change-request-verify"),
    path("change-requests/<int:pk>/withdraw/", views.Withdraw.as_view(), name="api-change-request-withdraw"),
    path("change-requests/<int:pk>/reject/", views.Reject.as_view(), name="api-change-request-reject"),
    path("change-requests/<int:pk>/approve/", views.ApproveOverSilence.as_view(), name="api-change-request-approve"),
    path("drafts/", drafts.DraftList.as_view(), name="api-draft-list"),
    path("drafts/<int:pk>/", drafts.DraftDetail.as_view(), name="api-draft-detail"),
    path("drafts/<int:pk>/approve/", drafts.DraftApprove.as_view(), name="api-draft-approve"),
    # Names are dotted, so [^/]+ (as the contract API's own routes).
    re_path(r"^contracts/(?P<name>[^/]+)/impact/$", views.ImpactPreview.as_view(), name="api-contract-impact"),
]
