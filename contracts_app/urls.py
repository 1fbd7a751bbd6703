from django.urls import path

from contracts_app import review_views

urlpatterns: list = [
    path("change-requests/", review_views.change_request_list, name="change-request-list"),
    path("change-requests/<int:pk>/", review_views.change_request_detail, name="change-request-detail"),
    path("change-requests/<int:pk>/review/", review_views.change_request_review, name="change-request-review"),
    path("change-requests/<int:pk>/publish/", review_views.change_request_publish, name="change-request-publish"),
    path("change-requests/<int:pk>/withdraw/", review_views.change_request_withdraw, name="change-request-withdraw"),
    path("change-requests/<int:pk>/reject/", review_views.change_request_reject, name="change-request-reject"),
    path("change-requests/<int:pk>/approve/", review_views.change_request_approve, name="change-request-approve"),
]
