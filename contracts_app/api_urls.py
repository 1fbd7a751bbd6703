from django.urls import path, re_path

from contracts_app import drift_api
from contracts_app.api import adopting, views

# Contract names are dotted and versions may hold dots too, so both match [^/]+.
NAME = r"(?P<name>[^/]+)"
VERSION = r"(?P<version>[^/]+)"

urlpatterns = [
    path("contracts/index/", views.IndexView.as_view(), name="api-contract-index"),
    path("contracts/domains/", views.DomainList.as_view(), name="api-contract-domains"),
    path("contracts/", views.ContractList.as_view(), name="api-contract-list"),
    re_path(rf"^contracts/{NAME}/$", views.ContractDetail.as_view(), name="api-contract-detail"),
    re_path(rf"^contracts/{NAME}/bindings/$", views.ContractBindings.as_view(), name="api-contract-bindings"),
    re_path(rf"^contracts/{NAME}/bindings/(?P<dataset>[0-9]+)/$", views.ContractBindingDetail.as_view(),
            name="api-contract-binding"),
    re_path(rf"^contracts/{NAME}/versions/$", views.VersionList.as_view(), name="api-contract-versions"),
    re_path(rf"^contracts/{NAME}/versions/{VERSION}/$", views.VersionDetail.as_view(), name="api-contract-version"),
    re_path(rf"^contracts/{NAME}/versions/{VERSION}/document/$", views.VersionDocument.as_view(), name="api-contract-document"),
    re_path(rf"^contracts/{NAME}/versions/{VERSION}/spec/$", views.VersionSpec.as_view(), name="api-contract-spec"),
    re_path(rf"^contracts/{NAME}/versions/{VERSION}/validate/$", views.ValidatePayload.as_view(), name="api-contract-validate"),
    re_path(rf"^contracts/{NAME}/specs/$", views.SpecList.as_view(), name="api-contract-specs"),
    re_path(rf"^contracts/{NAME}/diff/$", views.VersionDiff.as_view(), name="api-contract-diff"),
    # Schema drift (the contracts side's reaction to lineage).
    path("datasets/<int:pk>/drift/", drift_api.DatasetDriftList.as_view(), name="api-dataset-drift"),
    path("drift/", drift_api.LatestDriftList.as_view(), name="api-drift-latest"),
    # Adopting: drafts from observed schemas, and a dbt project's artefacts.
    path("datasets/<int:pk>/draft-contract/", adopting.DatasetDraft.as_view(), name="api-dataset-draft"),
    path("dbt/import/", adopting.DbtImport.as_view(), name="api-dbt-import"),
]
