"""Marquez's read API under /api/v1/ (mounted by lineage/api_urls.py).

Every path takes a trailing slash too. The namespace paths go to one view
that splits them (lineage/marquez/paths.py): a namespace holds slashes.
"""

from django.urls import re_path

from lineage.marquez import views

UUID = r"(?P<run_id>[^/]+)"

urlpatterns = [
    re_path(r"^v1/namespaces/?$", views.NamespaceList.as_view(), name="marquez-namespaces"),
    re_path(r"^v1/namespaces/(?P<rest>.+?)/?$", views.NamespaceTree.as_view(), name="marquez-namespace-tree"),
    re_path(rf"^v1/jobs/runs/{UUID}/facets/?$", views.RunFacets.as_view(), name="marquez-run-facets"),
    re_path(rf"^v1/jobs/runs/{UUID}/?$", views.RunDetail.as_view(), name="marquez-run"),
    re_path(r"^v1/search/?$", views.Search.as_view(), name="marquez-search"),
    re_path(r"^v1/events/lineage/?$", views.LineageEvents.as_view(), name="marquez-lineage-events"),
    # marquez-python's list_events reads /events[/{namespace}].
    re_path(r"^v1/events/?$", views.LineageEvents.as_view(), name="marquez-events"),
    re_path(r"^v1/events/(?P<namespace>.+?)/?$", views.LineageEvents.as_view(), name="marquez-namespace-events"),
    re_path(r"^v1/sources/?$", views.SourceList.as_view(), name="marquez-sources"),
    re_path(r"^v1/sources/(?P<name>.+?)/?$", views.SourceDetail.as_view(), name="marquez-source"),
    re_path(r"^v1/tags/?$", views.TagList.as_view(), name="marquez-tags"),
    re_path(r"^v1/runlineage/upstream/?$", views.RunLineageUpstream.as_view(), name="marquez-run-lineage-upstream"),
]
