from django.urls import path, re_path

from contracts_app import views

urlpatterns = [
    path("contracts/", views.catalogue, name="contract-catalogue"),
    re_path(r"^contracts/browse/(?P<path>[A-Za-z0-9_/]*)$", views.catalogue, name="contract-browse"),
    # A contract name always has a dot (domain.entity at least), which keeps it apart from "browse".
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/$", views.contract_detail, name="contract-detail"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/diff/$", views.contract_diff, name="contract-diff"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/mode/$", views.contract_set_mode, name="contract-set-mode"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/bindings/$", views.contract_bind, name="contract-bind"),
    re_path(r"^contracts/(?P<name>[^/]+\.[^/]+)/bindings/(?P<dataset>[0-9]+)/unbind/$", views.contract_unbind,
            name="contract-unbind"),
    path("contracts/bind-dataset/<int:pk>/", views.dataset_bind, name="contract-dataset-bind"),
    path("contracts/draft-dataset/<int:pk>/", views.dataset_draft, name="contract-dataset-draft"),
    path("contracts/import-dbt/", views.dbt_import, name="contract-dbt-import"),
]
