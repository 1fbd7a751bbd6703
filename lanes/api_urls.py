from django.urls import re_path

from lanes import api

NAME = r"(?P<name>[^/]+)"

urlpatterns = [
    re_path(rf"^contracts/{NAME}/lanes/$", api.LaneList.as_view(), name="api-lane-list"),
    re_path(rf"^contracts/{NAME}/lanes/(?P<major>[0-9]+)/$", api.LaneDetail.as_view(), name="api-lane-detail"),
    re_path(rf"^contracts/{NAME}/lanes/(?P<major>[0-9]+)/extend/$", api.LaneExtend.as_view(), name="api-lane-extend"),
]
