import re

import pytest

from registry.models import ApiToken, AuditEvent, Dataset, Membership


def test_pages_need_a_login(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_a_person_logs_in_and_sees_the_datasets(client, dataset):
    landed = client.post("/login/", {"username": "alice", "password": "pw"}, follow=True)
    assert landed.redirect_chain == [("/inbox/", 302)]  # first, what waits for them (tests/inbox)
    response = client.get("/")

    assert response.status_code == 200
    assert b"retail.public.orders" in response.content
    assert b"Checkout" in response.content


def test_dataset_list_page_takes_a_constant_number_of_queries(client, owner, owner_team, django_assert_num_queries):
    Dataset.objects.bulk_create(Dataset(namespace="n", name=f"t{i}", owner_team=owner_team) for i in range(200))
    client.force_login(owner)
    # session, user, teams for the filter, the datasets never written without an SLO (a
    # seek through (namespace, name), no count; owner team, owner and consumer count joined
    # in) after the other statuses' seeks (five, each empty)
    with django_assert_num_queries(9):
        response = client.get("/")
    assert response.content.count(b'href="/datasets/') == 100  # LIST_PAGE_SIZE
    assert " of 200" not in response.content.decode()
    after = re.search(r'href="\?(after=[^"]+)" rel="next"', response.content.decode()).group(1)
    with django_assert_num_queries(4):  # the token's segment only
        second = client.get(f"/?{after}").content.decode()
    assert second.count('href="/datasets/') == 100 and 'rel="prev"' in second and 'rel="next"' not in second


def test_every_list_page_is_paged_and_keeps_its_filters(client, owner, owner_team, settings):
    settings.LIST_PAGE_SIZE = 2
    Dataset.objects.bulk_create(Dataset(namespace="n", name=f"t{i}", owner_team=owner_team) for i in range(5))
    client.force_login(owner)
    page = client.get(f"/?team={owner_team.slug}").content.decode()
    assert re.search(rf'href="\?team={owner_team.slug}&amp;after=[^"]+" rel="next"', page)
    first = re.findall(r'href="/datasets/\d+/">(t\d)<', page)
    assert first == ["t0", "t1"]
    # An old numbered link, or nonsense, answers the first page.
    assert re.findall(r'href="/datasets/\d+/">(t\d)<', client.get("/?page=99").content.decode()) == first
    assert re.findall(r'href="/datasets/\d+/">(t\d)<', client.get("/?page=nonsense").content.decode()) == first


def test_unowned_dataset_page_offers_a_member_the_claim_button(client, unowned_dataset, owner_team, owner):
    client.force_login(owner)
    page = client.get(unowned_dataset.get_absolute_url()).content.decode()
    assert 'id="claim-form"' in page
    assert 'id="consume-form"' not in page


def test_a_person_in_no_team_sees_no_buttons(client, unowned_dataset, admin):
    client.force_login(admin)
    page = client.get(unowned_dataset.get_absolute_url()).content.decode()
    assert 'id="claim-form"' not in page


def test_claim_button_claims_the_dataset(client, unowned_dataset, owner_team, owner):
    client.force_login(owner)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": owner_team.pk, "owner": owner.pk}, follow=True)
    assert b"Checkout now owns" in response.content
    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team == owner_team


def test_owned_dataset_page_offers_the_consume_button_and_it_works(client, dataset, other_team, outsider):
    client.force_login(outsider)
    assert 'id="consume-form"' in client.get(dataset.get_absolute_url()).content.decode()

    response = client.post(f"/datasets/{dataset.pk}/consume/", {"team": other_team.pk}, follow=True)

    assert b"Warehouse is now a consumer" in response.content
    assert dataset.consumers.filter(team=other_team).exists()


def test_a_refused_action_shows_the_reason(client, unowned_dataset, owner_team, owner, other_team, outsider):
    client.force_login(outsider)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": owner_team.pk, "owner": owner.pk}, follow=True)
    assert b"Choose one of your teams" in response.content


@pytest.fixture
def admin_client_(client, admin):
    client.force_login(admin)
    return client


def test_admin_token_creation_shows_the_secret_once(admin_client_, owner):
    response = admin_client_.post("/admin/registry/apitoken/add/", {"name": "airflow", "user": owner.pk, "scopes": ["read", "lineage:write"]}, follow=True)

    token = ApiToken.objects.get(name="airflow")
    page = response.content.decode()
    assert "copy it now, it is shown only once" in page
    secret = page.split("is dr_", 1)[1].split(" ", 1)[0]
    assert token.key_hash != secret
    # The token's change page never shows it again.
    assert ("dr_" + secret) not in admin_client_.get(f"/admin/registry/apitoken/{token.pk}/change/").content.decode()


def test_audit_events_are_read_only_in_the_admin(admin_client_, unowned_dataset, owner_team, owner):
    unowned_dataset.claim(owner_team, owner=owner, by=owner)
    event = AuditEvent.objects.get()
    assert admin_client_.get("/admin/registry/auditevent/").status_code == 200
    assert admin_client_.get("/admin/registry/auditevent/add/").status_code == 403
    assert admin_client_.post(f"/admin/registry/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403


def test_the_owner_team_is_not_offered_to_register_as_consumer_of_its_own_dataset(client, dataset, owner):
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert 'id="consume-form"' not in page
    assert "Checkout owns this dataset, so it is not one of its consumers" in page


def test_a_member_of_the_owner_team_and_another_is_offered_only_the_other(client, dataset, owner, other_team):
    Membership.objects.create(team=other_team, user=owner)
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    form = page[page.index('id="consume-form"'):page.index("</form>", page.index('id="consume-form"'))]
    assert ">Warehouse</option>" in form and ">Checkout</option>" not in form


def test_the_owner_team_posting_the_consume_form_is_refused(client, dataset, owner, owner_team):
    client.force_login(owner)
    response = client.post(f"/datasets/{dataset.pk}/consume/", {"team": owner_team.pk}, follow=True)
    assert b"other than the owner team" in response.content
    assert not dataset.consumers.filter(team=owner_team).exists()


def test_the_owner_teams_own_reading_job_gets_no_register_button(client, dataset, owner, owner_team):
    from django.utils import timezone

    from registry.usage import ColumnRead, UsageSource

    ColumnRead.objects.create(dataset=dataset, job_namespace="airflow", job_name="orders_selfcheck", column="order_id",
                              source=UsageSource.SQL, last_seen_at=timezone.now(), token_team=owner_team)
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert "airflow/orders_selfcheck" in page and "Register Checkout" not in page


def test_the_claim_form_tells_each_owner_option_which_teams_its_person_is_in(client, unowned_dataset, owner, owner_team,
                                                                              other_team, outsider):
    Membership.objects.create(team=other_team, user=owner)  # alice: Checkout and Warehouse; dave: Warehouse
    client.force_login(owner)
    page = client.get(unowned_dataset.get_absolute_url()).content.decode()
    owners = page[page.index('<select name="owner"'):]
    owners = owners[:owners.index("</select>")]
    assert f'<option value="{outsider.pk}" data-teams="{other_team.pk}">dave</option>' in owners
    alice = re.search(rf'<option value="{owner.pk}" selected data-teams="([\d ]+)">alice</option>', owners)
    assert alice and sorted(alice.group(1).split()) == sorted([str(owner_team.pk), str(other_team.pk)]), owners
    assert "js/claim.js" in page


def test_claiming_with_an_owner_outside_the_chosen_team_is_refused(client, unowned_dataset, owner, owner_team,
                                                                 other_team, outsider):
    Membership.objects.create(team=other_team, user=owner)
    client.force_login(owner)
    response = client.post(f"/datasets/{unowned_dataset.pk}/claim/", {"team": owner_team.pk, "owner": outsider.pk},
                           follow=True)
    assert "dave is not a member of Checkout" in response.content.decode()
    unowned_dataset.refresh_from_db()
    assert unowned_dataset.owner_team is None
