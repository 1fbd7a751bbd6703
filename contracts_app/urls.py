from django.urls import path, re_path

from contracts_app import review_views, views

urlpatterns = [
    path("contracts/", views.catalogue, name="contract-catalogue"),
    re_path(r"^contracts/browse/(?P<path>[A-Za-z0-9_/]*)$", views.catalogue, name="contract-browse"),
    # A contract name always has a dot (domain.entity at least), which keeps it apart from "browse".
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/$", views.contract_detail, name="contract-detail"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/diff/$", views.contract_diff, name="contract-diff"),
    path("change-requests/", review_views.change_request_list, name="change-request-list"),
    path("change-requests/new/", review_views.change_request_propose, name="change-request-propose"),
    path("change-requests/<int:pk>/", review_views.change_request_detail, name="change-request-detail"),
    path("change-requests/<int:pk>/review/", review_views.change_request_review, name="change-request-review"),
    path("change-requests/<int:pk>/publish/", review_views.change_request_publish, name="change-request-publish"),
    path("change-requests/<int:pk>/withdraw/", review_views.change_request_withdraw, name="change-request-withdraw"),
    path("change-requests/<int:pk>/reject/", review_views.change_request_reject, name="change-request-reject"),
    path("change-requests/<int:pk>/approve/", review_views.change_request_approve, name="change-request-approve"),
]
