from django.urls import path

from change_requests import draft_views, views

urlpatterns = [
    path("change-requests/", views.change_request_list, name="change-request-list"),
    path("change-requests/new/", views.change_request_propose, name="change-request-propose"),
    path("change-requests/new/start/", views.change_request_start, name="change-request-start"),
    path("change-requests/new/preview/", views.change_request_preview, name="change-request-preview"),
    path("change-requests/<int:pk>/", views.change_request_detail, name="change-request-detail"),
    path("change-requests/<int:pk>/review/", views.change_request_review, name="change-request-review"),
    path("change-requests/<int:pk>/override-block/", views.change_request_override_block,
         name="change-request-override-block"),
    path("change-requests/<int:pk>/publish/", views.change_request_publish, name="change-request-publish"),
    path("change-requests/<int:pk>/verify/", views.change_request_verify, name="change-request-verify"),
    path("change-requests/<int:pk>/withdraw/", views.change_request_withdraw, name="change-request-withdraw"),
    path("change-requests/<int:pk>/reject/", views.change_request_reject, name="change-request-reject"),
    path("change-requests/<int:pk>/approve/", views.change_request_approve, name="change-request-approve"),
    path("drafts/", draft_views.draft_queue, name="draft-queue"),
    path("drafts/<int:pk>/", draft_views.draft_detail, name="draft-detail"),
    path("drafts/<int:pk>/approve/", draft_views.draft_approve, name="draft-approve"),
    path("drafts/<int:pk>/discard/", draft_views.draft_discard, name="draft-discard"),
]
