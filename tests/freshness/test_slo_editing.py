"""Who may set a freshness SLO, and how: the API, the dataset page and the admin."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied

from freshness.constants import AuditAction, FreshnessStatus
from freshness.evaluation import InvalidSLO, set_slo
from freshness.models import DatasetFreshness, FreshnessTransition
from registry.models import AuditEvent
from tests.freshness.conftest import HOUR, T0, announce_write


def test_the_owner_team_sets_an_slo_through_the_api(client, dataset, teammate, clock):
    client.force_login(teammate)
    response = client.put(f"/api/datasets/{dataset.pk}/freshness/",
                          {"max_age": "6h", "warn_after": 4 * 3600, "empty_write_counts": False},
                          content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["max_age"], body["warn_after"], body["status"]) == (21600.0, 14400.0, "unknown")
    audit = AuditEvent.objects.get(action=AuditAction.SLO_CHANGED)
    assert audit.actor_label == "bob"
    assert audit.before == {"max_age_s": None, "warn_after_s": None, "empty_write_counts": False}
    assert audit.after == {"max_age_s": 21600.0, "warn_after_s": 14400.0, "empty_write_counts": False}


def test_reading_the_freshness_of_a_dataset_without_slo_says_so(client, dataset, consumer):
    client.force_login(consumer)
    body = client.get(f"/api/datasets/{dataset.pk}/freshness/").json()
    assert (body["status"], body["max_age"], body["next_deadline"]) == ("no_slo", None, None)
    assert not DatasetFreshness.objects.exists()  # reading writes nothing


@pytest.mark.parametrize("who", ["consumer", "outsider"])
def test_only_the_owner_team_may_change_the_slo(client, dataset, request, who):
    client.force_login(request.getfixturevalue(who))
    response = client.put(f"/api/datasets/{dataset.pk}/freshness/", {"max_age": "1h"},
                          content_type="application/json")
    assert response.status_code == 403
    assert "team checkout" in response.json()["detail"]


def test_an_admin_may_set_the_slo_of_an_unowned_dataset_and_a_member_of_no_team_may_not(unowned_dataset, admin, owner):
    with pytest.raises(PermissionDenied, match="governance admin"):
        set_slo(unowned_dataset, max_age=HOUR, by=owner)
    assert set_slo(unowned_dataset, max_age=HOUR, by=admin).status == FreshnessStatus.UNKNOWN


@pytest.mark.parametrize(("body", "message"), [
    ({"max_age": "soon"}, "'soon' is not a duration"),
    ({"max_age": -5}, "must be a positive number"),
    ({"max_age": "1h", "warn_after": "2h"}, "warn_after (2h) must be shorter than max_age (1h)"),
    ({"max_age": None, "warn_after": "2h"}, "warn_after needs a max_age"),
])
def test_a_bad_slo_is_refused_with_a_message_saying_what_is_wrong(client, dataset, owner, body, message):
    client.force_login(owner)
    response = client.put(f"/api/datasets/{dataset.pk}/freshness/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert message in response.content.decode()
    assert not DatasetFreshness.objects.filter(max_age__isnull=False).exists()


def test_removing_the_slo_records_the_change(dataset, owner, clock):
    set_slo(dataset, max_age=HOUR, by=owner)
    announce_write(dataset, at=T0)
    set_slo(dataset, max_age=None, by=owner)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.status, row.next_check_at) == (FreshnessStatus.NO_SLO, None)
    last = FreshnessTransition.objects.filter(dataset=dataset).first()
    assert (last.from_status, last.to_status, last.reason.startswith("SLO changed: no SLO")) == ("fresh", "no_slo", True)


def test_tightening_the_slo_can_make_a_dataset_stale_at_once(dataset, owner, clock):
    set_slo(dataset, max_age=6 * HOUR, by=owner)
    announce_write(dataset, at=T0 - 2 * HOUR)
    set_slo(dataset, max_age=HOUR, by=owner)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.STALE


def test_saving_the_same_slo_again_records_nothing(dataset, owner, clock):
    set_slo(dataset, max_age=HOUR, by=owner)
    set_slo(dataset, max_age=HOUR, by=owner)
    assert AuditEvent.objects.filter(action=AuditAction.SLO_CHANGED).count() == 1


def test_the_database_refuses_a_warning_threshold_beyond_the_maximum_age(dataset):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        DatasetFreshness.objects.create(dataset=dataset, max_age=HOUR, warn_after=2 * HOUR)


def test_set_slo_explains_a_bad_threshold(dataset, owner):
    with pytest.raises(InvalidSLO, match="must be shorter"):
        set_slo(dataset, max_age=HOUR, warn_after=HOUR, by=owner)


def test_the_owner_sets_the_slo_on_the_dataset_page(client, dataset, owner, clock):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert 'id="slo-form"' in page
    response = client.post(f"/datasets/{dataset.pk}/freshness/",
                           {"max_age": "6h", "warn_after": "4h", "empty_write_counts": "on"}, follow=True)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.max_age, row.warn_after, row.empty_write_counts) == (6 * HOUR, 4 * HOUR, True)
    assert "max age 6h, warning after 4h, empty writes count" in response.content.decode()


def test_a_typo_on_the_page_form_says_which_field(client, dataset, owner):
    client.force_login(owner)
    response = client.post(f"/datasets/{dataset.pk}/freshness/", {"max_age": "six hours"}, follow=True)
    assert "Maximum age: 'six hours' is not a duration" in html.unescape(response.content.decode())
    assert not DatasetFreshness.objects.exists()


def test_a_consumer_sees_no_slo_form(client, dataset, consumer):
    client.force_login(consumer)
    assert 'id="slo-form"' not in client.get(dataset.get_absolute_url()).content.decode()


def test_an_admin_sets_the_slo_in_the_django_admin_and_it_is_audited(client, dataset, admin, clock):
    client.force_login(admin)
    response = client.post("/admin/freshness/datasetfreshness/add/", {
        "dataset": dataset.pk, "max_age": "06:00:00", "warn_after": "", "empty_write_counts": "",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.max_age, row.status) == (timedelta(hours=6), FreshnessStatus.UNKNOWN)
    assert AuditEvent.objects.get(action=AuditAction.SLO_CHANGED).actor_label == "gina"
