"""Change requests in the admin: their state, the steps open to the viewer (django-fsm-2's
admin), each taken through the product's own method so it is audited, and the team
reviews inline (issue 16, point 11)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from change_requests.models import ChangeRequest, ChangeRequestState
from contracts_app.models import ContractVersion
from registry.models import AuditEvent

pytestmark = pytest.mark.django_db


def change_page(change_request) -> str:
    return f"/admin/change_requests/changerequest/{change_request.pk}/change/"


def step_page(change_request, step: str) -> str:
    return f"/admin/change_requests/changerequest/{change_request.pk}/transition/{step}/"


def audit_rows(change_request, action: str):
    return AuditEvent.objects.filter(object_type="contracts_app.changerequest", object_id=str(change_request.pk),
                                     action=f"change_request.{action}")


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


@pytest.fixture
def staff_owner(owner):
    """alice, of the owner team, also staff with the right to change requests in the admin."""
    owner.is_staff = True
    owner.save(update_fields=["is_staff"])
    owner.user_permissions.add(*Permission.objects.filter(codename__in=["view_changerequest", "change_changerequest"]))
    return owner


def escalate(change_request) -> None:
    ChangeRequest.objects.filter(pk=change_request.pk).update(escalated_at=timezone.now(),
                                                             deadline_at=timezone.now())


def test_the_change_page_shows_the_state_the_steps_open_to_an_admin_and_the_reviews(
        as_admin, change_request, django_assert_num_queries):
    # 1 session, 2 user, 3 the request with its contract, teams and versions (for the steps),
    # 4 the same (the change form's own), 5 the reviews inline with their teams, 6 the content
    # type (the history link), 7 the acknowledgement condition and 8 the owner-team membership
    # (the state machine deciding which steps are open to the viewer), 9 the reviews again for the
    # "every block overridden" condition (approve over a block): one query, whatever the number of teams.
    ContentType.objects.clear_cache()  # else an earlier test in this process may have cached 6
    with django_assert_num_queries(9):
        page = as_admin.get(change_page(change_request)).content.decode()

    assert '<span id="cr-admin-state">Open</span>' in page
    assert 'data-transition="_reject"' in page and ">Reject</a>" in page
    assert 'data-transition="_withdraw"' not in page and 'data-transition="_publish"' not in page
    assert 'data-transition="_approve_over_silence"' not in page  # not escalated yet
    assert "Withdraw → withdrawn: the owner team" in page
    assert "Approve over silent teams → approved" in page
    assert "Analytics" in page and "Waiting" in page  # the team reviews, inline
    assert 'name="_save"' not in page and 'name="_continue"' not in page


def test_an_admin_rejects_a_request_with_a_reason_and_it_is_audited(as_admin, admin, change_request):
    assert "A rejection needs a comment" not in as_admin.get(step_page(change_request, "_reject")).content.decode()

    response = as_admin.post(step_page(change_request, "_reject"), {"comment": "Customers opt out of this."},
                             follow=True)

    assert f"Change request #{change_request.pk} is now rejected." in response.content.decode()
    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.REJECTED
    assert change_request.closing_comment == "Customers opt out of this."
    (event,) = audit_rows(change_request, "rejected")
    assert event.actor == admin and event.after["comment"] == "Customers opt out of this."


def test_a_rejection_without_a_reason_is_refused(as_admin, change_request):
    page = as_admin.post(step_page(change_request, "_reject"), {"comment": ""}).content.decode()

    assert "A rejection needs a comment saying why." in page
    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.OPEN
    assert not audit_rows(change_request, "rejected").exists()


def test_after_the_deadline_an_admin_approves_over_silent_teams_from_the_admin(as_admin, admin, change_request):
    escalate(change_request)
    assert 'data-transition="_approve_over_silence"' in as_admin.get(change_page(change_request)).content.decode()

    as_admin.post(step_page(change_request, "_approve_over_silence"), {"comment": "Analytics never answered."})

    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.APPROVED
    (event,) = audit_rows(change_request, "approved")
    assert event.actor == admin
    assert event.after["silent_teams"] == ["analytics"] and event.after["comment"] == "Analytics never answered."


def test_approving_over_silence_before_the_deadline_is_refused_with_the_products_reason(as_admin, change_request):
    response = as_admin.post(step_page(change_request, "_approve_over_silence"), {"comment": ""}, follow=True)

    assert "it cannot be approved over silent teams now" in response.content.decode()
    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.OPEN


def test_an_admin_outside_the_owner_team_cannot_withdraw_even_by_a_forged_request(as_admin, change_request):
    response = as_admin.post(step_page(change_request, "_withdraw"), {"comment": "not mine to withdraw"},
                             follow=True)

    assert "is not allowed" in response.content.decode()
    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.OPEN
    assert not audit_rows(change_request, "withdrawn").exists()


def test_the_approval_by_acknowledgement_is_no_button_for_anyone(as_admin, change_request):
    assert as_admin.post(step_page(change_request, "_approve_by_acknowledgement"), {}).status_code == 403
    assert as_admin.post(step_page(change_request, "snapshot"), {}).status_code == 403


def test_the_owner_team_withdraws_from_the_admin(client, staff_owner, change_request):
    client.force_login(staff_owner)
    assert 'data-transition="_withdraw"' in client.get(change_page(change_request)).content.decode()

    client.post(step_page(change_request, "_withdraw"), {"comment": "We found another way."})

    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.WITHDRAWN
    (event,) = audit_rows(change_request, "withdrawn")
    assert event.actor == staff_owner and event.after["comment"] == "We found another way."


def test_the_owner_team_publishes_an_approved_request_from_the_admin(
        client, staff_owner, change_request, consumer_team, consumer, django_capture_on_commit_callbacks):
    change_request.acknowledge(consumer_team, by=consumer)
    client.force_login(staff_owner)
    assert 'data-transition="_publish"' in client.get(change_page(change_request)).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        client.post(step_page(change_request, "_publish"), {})

    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.PUBLISHED
    assert ContractVersion.objects.filter(contract=change_request.contract, version="2.0").exists()
    assert audit_rows(change_request, "published").get().actor == staff_owner


def test_a_finished_request_offers_no_step(as_admin, admin, change_request):
    change_request.reject(by=admin, comment="No.")

    page = as_admin.get(change_page(change_request)).content.decode()

    assert '<span id="cr-admin-state">Rejected</span>' in page
    assert 'id="cr-admin-no-step"' in page and "button cr-admin-step" not in page
    assert "None: a rejected request is finished." in page


def test_staff_without_the_right_to_change_requests_cannot_take_a_step(client, change_request):
    from tests.conftest import make_user

    viewer = make_user("vera", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_changerequest"))
    client.force_login(viewer)

    assert client.post(step_page(change_request, "_reject"), {"comment": "forged"}).status_code == 403
    change_request.refresh_from_db()
    assert change_request.state == ChangeRequestState.OPEN
