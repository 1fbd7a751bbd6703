"""The audit log in the admin: filterable by actor, dataset and action, and read-only
(issue 16, point 11). The contract filter is tested with change requests
(tests/change_requests/test_admin_audit_log.py)."""

from __future__ import annotations

import pytest

from registry.models import AuditEvent, Dataset

pytestmark = pytest.mark.django_db

AUDIT_LOG = "/admin/registry/auditevent/"


@pytest.fixture
def as_admin(client, admin):
    client.force_login(admin)
    return client


@pytest.fixture
def history(admin, owner, owner_team, consumer, consumer_team, other_team, outsider, unowned_dataset):
    """alice claims orders, carol registers Analytics, gina moves refunds to Warehouse."""
    unowned_dataset.claim(owner_team, owner=owner, by=owner)
    unowned_dataset.register_consumer(consumer_team, by=consumer)
    refunds = Dataset.objects.create(namespace="s3://lake", name="refunds")
    refunds.assign_owner(other_team, owner=outsider, by=admin, reason="Warehouse writes refunds.")
    return {"orders": unowned_dataset, "refunds": refunds}


def listed(response) -> list[tuple[str, str, str]]:
    return [(e.actor_label, e.action, e.object_repr) for e in response.context["cl"].result_list]


def test_the_audit_log_filters_by_actor(as_admin, history):
    rows = listed(as_admin.get(AUDIT_LOG, {"actor": "alice"}))
    assert rows == [("alice", "dataset.claimed", str(history["orders"]))]


def test_the_audit_log_filters_by_dataset(as_admin, history):
    rows = listed(as_admin.get(AUDIT_LOG, {"dataset": str(history["orders"].pk)}))
    assert sorted(r[1] for r in rows) == ["consumer.registered", "dataset.claimed"]
    assert {r[2] for r in rows} == {str(history["orders"])}


def test_the_audit_log_filters_by_action(as_admin, history):
    rows = listed(as_admin.get(AUDIT_LOG, {"action": "dataset.owner_changed"}))
    assert rows == [("gina", "dataset.owner_changed", str(history["refunds"]))]


def test_filters_combine(as_admin, history):
    assert listed(as_admin.get(AUDIT_LOG, {"dataset": str(history["orders"].pk), "actor": "gina"})) == []


def test_the_filters_offer_the_actors_datasets_and_actions_in_the_log(as_admin, history):
    page = as_admin.get(AUDIT_LOG).content.decode()
    for choice in ("?actor=alice", "?actor=carol", "?actor=gina", f"?dataset={history['orders'].pk}",
                   f"?dataset={history['refunds'].pk}", "?action=consumer.registered"):
        assert choice in page, choice
    for title in ("actor", "dataset", "action"):
        assert f'data-filter-title="{title}"' in page, title


def test_a_deleted_dataset_stays_in_the_dataset_filter(as_admin, admin, history):
    refunds = history["refunds"]
    refunds.delete_unused(by=admin)

    assert f"?dataset={refunds.pk}" in as_admin.get(AUDIT_LOG).content.decode()
    rows = listed(as_admin.get(AUDIT_LOG, {"dataset": str(refunds.pk)}))
    assert sorted(r[1] for r in rows) == ["dataset.deleted", "dataset.owner_changed"]


def test_the_audit_log_page_runs_a_fixed_number_of_queries(as_admin, history, django_assert_num_queries):
    for n in range(5):
        Dataset.objects.create(namespace="s3://lake", name=f"extra{n}").claim(
            history["orders"].owner_team, owner=history["orders"].owner, by=history["orders"].owner)
    # 1 session, 2 user, the filters' choices among the latest rows: 3 actors, 4 datasets,
    # 5 contracts, 6 actions, 7 object types; 8 the page of rows (a keyset seek: no count).
    # None grows with the rows.
    with django_assert_num_queries(8):
        assert as_admin.get(AUDIT_LOG).status_code == 200


def test_the_audit_log_pages_by_keyset_newest_first(as_admin, history, settings, django_assert_num_queries):
    from registry.admin import AuditEventAdmin

    for n in range(7):
        Dataset.objects.create(namespace="s3://lake", name=f"extra{n}").claim(
            history["orders"].owner_team, owner=history["orders"].owner, by=history["orders"].owner)
    newest_first = list(AuditEvent.objects.order_by("-at", "-id").values_list("pk", flat=True))
    per_page = AuditEventAdmin.list_per_page
    AuditEventAdmin.list_per_page = 3
    try:
        seen, url, urls = [], AUDIT_LOG, []
        while url:
            urls.append(url)
            response = as_admin.get(url)
            seen += [e.pk for e in response.context["cl"].result_list]
            next_url = response.context["cl"].next_url
            url = AUDIT_LOG + next_url if next_url else None
        assert seen == newest_first
        with django_assert_num_queries(8):  # a late page: the same queries as the first
            page = as_admin.get(urls[-2])
        assert 'rel="prev"' in page.content.decode() and 'rel="next"' in page.content.decode()
        # An edited token or an old page number: the first page, not an error.
        for odd in ("?after=garbage", "?p=40"):
            assert [e.pk for e in as_admin.get(AUDIT_LOG + odd).context["cl"].result_list] == newest_first[:3]
    finally:
        AuditEventAdmin.list_per_page = per_page


def test_the_audit_log_is_read_only_in_the_admin(as_admin, history):
    event = AuditEvent.objects.filter(action="dataset.claimed").get()
    detail = as_admin.get(f"{AUDIT_LOG}{event.pk}/change/")

    assert detail.status_code == 200
    page = detail.content.decode()
    assert 'name="_save"' not in page and "Warehouse" not in page
    assert as_admin.get(f"{AUDIT_LOG}add/").status_code == 403
    assert as_admin.post(f"{AUDIT_LOG}{event.pk}/change/", {"action": "forged"}).status_code == 403
    assert as_admin.post(f"{AUDIT_LOG}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert "delete_selected" not in as_admin.get(AUDIT_LOG).content.decode()
    event.refresh_from_db()
    assert event.action == "dataset.claimed"
