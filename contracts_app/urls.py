from django.urls import path, re_path

from contracts_app import views

urlpatterns = [
    path("contracts/", views.catalogue, name="contract-catalogue"),
    re_path(r"^contracts/browse/(?P<path>[A-Za-z0-9_/]*)$", views.catalogue, name="contract-browse"),
    # A contract name always has a dot (domain.entity at least), which keeps it apart from "browse".
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/$", views.contract_detail, name="contract-detail"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/diff/$", views.contract_diff, name="contract-diff"),
]
