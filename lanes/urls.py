from django.urls import re_path

from lanes import views

NAME = r"(?P<name>[^/]+\.[^/]+)"

urlpatterns = [
    re_path(rf"^contracts/{NAME}/lanes/$", views.lane_page, name="lane-page"),
    re_path(rf"^contracts/{NAME}/lanes/(?P<major>[0-9]+)/dates/$", views.lane_set_dates, name="lane-set-dates"),
    re_path(rf"^contracts/{NAME}/lanes/(?P<major>[0-9]+)/extend/$", views.lane_extend, name="lane-extend"),
]
