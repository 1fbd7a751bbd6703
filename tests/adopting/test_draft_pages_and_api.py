"""The draft review pages and API: the queue, a draft's page (gate verdict, impact
preview, Approve for the owner team only), and the dbt upload endpoint."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from contracts_app.drafting import approve_draft, dataframe_document, save_generated_draft
from contracts_app.models import ContractVersion, Draft, DraftAction, DraftOrigin
from registry.models import ApiToken, AuditEvent, Consumer, Dataset
from tests.adopting.conftest import CATALOG, MANIFEST, NAMESPACE
from tests.conftest import bearer

pytestmark = pytest.mark.django_db

COLUMNS = [{"name": "order_id", "dtype": "int64", "nullable": False, "unique": True},
           {"name": "amount", "dtype": "float64", "nullable": True}]


def drafted(dataset, team, columns=COLUMNS) -> Draft:
    document = dataframe_document(["retail", "public", "orders"], owner=team, columns=columns, datasets=[dataset])
    return save_generated_draft(document, origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}", owner=team,
                                dataset=dataset).draft


def five_observed_drafts(team) -> None:
    """Drafts of five of the team's tables, as the observed schemas make them."""
    for n in range(5):
        other = Dataset.objects.create(namespace="postgres://retail-db:5432", name=f"retail.public.t{n}", owner_team=team)
        save_generated_draft(dataframe_document(["retail", "public", f"t{n}"], owner=team, columns=COLUMNS,
                                                datasets=[other]),
                             origin=DraftOrigin.OBSERVED, source=f"dataset:{other.pk}", owner=team, dataset=other)


def test_the_queue_lists_the_owner_teams_pending_drafts_in_constant_queries(
        client, dataset, owner_team, owner, django_assert_num_queries):
    five_observed_drafts(owner_team)
    client.force_login(owner)
    # the session, the user, the pending drafts of the person's teams (a subquery) with their teams,
    # datasets and editors, and the person's teams for the team picker: whatever the number of drafts
    with django_assert_num_queries(4):
        page = client.get(reverse("draft-queue")).content.decode()
    assert page.count('<td><a href="/drafts/') == 5 and "Checkout" in page


def test_the_draft_queue_comes_in_keyset_pages(client, owner_team, owner, settings, django_assert_num_queries):
    settings.LIST_PAGE_SIZE = 2
    five_observed_drafts(owner_team)
    client.force_login(owner)
    client.get(reverse("draft-queue"))
    seen, url = [], reverse("draft-queue")
    while url:
        with django_assert_num_queries(4):  # as above, on every page
            body = client.get(url).content.decode()
        seen += re.findall(r'<td><a href="/drafts/(\d+)/">', body)
        found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', body)
        url = reverse("draft-queue") + "?" + found.group(1).replace("&amp;", "&") if found else None
    assert seen == [str(d.pk) for d in Draft.objects.pending().order_by("created_at", "pk")]


def test_an_outsider_sees_no_other_teams_queue(client, dataset, owner_team, outsider):
    drafted(dataset, owner_team)
    client.force_login(outsider)
    assert 'id="no-drafts"' in client.get(reverse("draft-queue")).content.decode()


def test_the_draft_page_shows_the_gate_verdict_the_impact_preview_and_approve(client, dataset, owner_team, owner):
    approve_draft(drafted(dataset, owner_team), by=owner)
    breaking = save_generated_draft(
        dataframe_document(["retail", "public", "orders"], owner=owner_team, columns=COLUMNS[:1], datasets=[dataset]),
        origin=DraftOrigin.OBSERVED, source=f"dataset:{dataset.pk}", owner=owner_team, dataset=dataset).draft
    client.force_login(owner)
    page = client.get(breaking.get_absolute_url()).content.decode()
    assert '<span class="tag good">passes</span>' in page
    assert '<span class="tag warn">breaking</span>' in page and "latest published: 1.0" in page
    assert "<strong>analytics</strong>" in page  # the consumer team must acknowledge
    assert "Approve and publish" in page


def test_a_draft_the_gate_refuses_shows_why_and_cannot_be_approved(client, dataset, owner_team, owner):
    draft = drafted(dataset, owner_team, columns=[{"name": "amount", "dtype": "decimal", "nullable": True}])
    client.force_login(owner)
    page = client.get(draft.get_absolute_url()).content.decode()
    assert '<span class="tag bad">refused</span>' in page and "unknown dtype &#x27;decimal&#x27;" in page
    assert 'type="submit" disabled' in page
    response = client.post(reverse("draft-approve", args=[draft.pk]), follow=True)
    assert "failed the publish gate" in response.content.decode()
    assert not ContractVersion.objects.exists()


def test_approving_on_the_page_publishes_and_an_outsider_cannot(client, dataset, owner_team, owner, outsider):
    draft = drafted(dataset, owner_team)
    client.force_login(outsider)
    page = client.get(draft.get_absolute_url()).content.decode()
    assert 'id="cannot-approve"' in page and "Approve and publish" not in page
    client.post(reverse("draft-approve", args=[draft.pk]))
    assert not ContractVersion.objects.exists()
    client.force_login(owner)
    response = client.post(reverse("draft-approve", args=[draft.pk]))
    assert response.url == reverse("contract-detail", args=["retail.public.orders"])
    assert ContractVersion.objects.filter(contract__name="retail.public.orders", version="1.0").exists()
    assert AuditEvent.objects.get(action=DraftAction.APPROVED).actor == owner


def test_the_api_lists_shows_and_approves_drafts(client, dataset, owner_team, owner, outsider):
    draft = drafted(dataset, owner_team)
    _, mine = ApiToken.issue("alice", user=owner)
    _, theirs = ApiToken.issue("dave", user=outsider)
    listed = client.get(reverse("api-draft-list"), **bearer(mine)).json()
    assert [d["contract_name"] for d in listed["results"]] == ["retail.public.orders"]
    assert client.get(reverse("api-draft-list"), **bearer(theirs)).json()["results"] == []
    detail = client.get(reverse("api-draft-detail", args=[draft.pk]), **bearer(mine)).json()
    assert detail["gate"] == {"passes": True, "errors": []}
    assert detail["impact"]["verdict"] == "a new contract: the first version is always accepted"
    assert detail["can_approve"] is True and detail["document"] == draft.document
    refused = client.post(reverse("api-draft-approve", args=[draft.pk]), **bearer(theirs))
    assert refused.status_code == 403 and "Only a member of the owner team checkout" in refused.json()["detail"]
    approved = client.post(reverse("api-draft-approve", args=[draft.pk]), **bearer(mine))
    assert approved.status_code == 200, approved.content
    assert approved.json()["state"] == "published" and approved.json()["outcome"]["status"] == "published"
    again = client.post(reverse("api-draft-approve", args=[draft.pk]), **bearer(mine))
    assert again.status_code == 409


def test_the_dbt_upload_endpoint_imports_for_a_governance_admin_only(client, shop_teams, admin, owner):
    def upload(**extra):
        with MANIFEST.open("rb") as manifest, CATALOG.open("rb") as catalog:
            return client.post(reverse("api-dbt-import"), {"manifest": manifest, "catalog": catalog,
                                                           "namespace": NAMESPACE, **extra})
    client.force_login(owner)
    assert upload().status_code == 403
    client.force_login(admin)
    dry = upload(dry_run="true").json()
    assert dry["dry_run"] is True and "created   dataset postgres://127.0.0.1:5432/wh.sales.orders (model " \
        "model.shop.orders)" in dry["changes"]
    assert not Dataset.objects.exists()
    answer = upload().json()
    assert answer["counts"]["draft_created"] == 5  # every owned node but the snapshot (its jsonb column)
    assert any("jsonb" in e for e in answer["errors"])
    assert Consumer.objects.filter(team__slug="finance", dataset__name="wh.sales.orders").exists()
    assert AuditEvent.objects.filter(action="dataset.claimed", actor=admin).count() == 6


def test_the_dbt_upload_endpoint_says_what_is_wrong_with_a_bad_manifest(client, admin):
    client.force_login(admin)
    from io import BytesIO

    response = client.post(reverse("api-dbt-import"), {"manifest": BytesIO(b"{nope")})
    assert response.status_code == 400 and response.json()["detail"].startswith("manifest: not JSON")
    response = client.post(reverse("api-dbt-import"), {})
    assert response.status_code == 400 and "Send dbt's manifest.json" in response.json()["detail"]


def test_the_owner_team_edits_a_draft_over_the_api_and_an_outsider_cannot(client, dataset, owner_team, owner, outsider):
    draft = drafted(dataset, owner_team)
    _, mine = ApiToken.issue("alice", user=owner)
    _, theirs = ApiToken.issue("dave", user=outsider)
    edited = {**draft.document, "columns": [{**c, "checks": [{"ge": 0}]} if c["name"] == "amount" else c
                                            for c in draft.document["columns"]]}
    url = reverse("api-draft-detail", args=[draft.pk])
    assert client.put(url, {"document": edited}, content_type="application/json", **bearer(theirs)).status_code == 403
    answer = client.put(url, {"document": edited}, content_type="application/json", **bearer(mine))
    assert answer.status_code == 200, answer.content
    assert answer.json()["document"] == edited and answer.json()["edited_by"] == "alice"
    renamed = {**edited, "schema": {**edited["schema"], "version": "9.0"}}
    refused = client.put(url, renamed, content_type="application/json", **bearer(mine))
    assert refused.status_code == 409 and "must keep schema.name" in refused.json()["detail"]


def test_the_dbt_import_page_is_for_governance_admins_and_shows_a_dry_run(client, shop_teams, admin, owner):
    client.force_login(owner)
    assert client.get(reverse("contract-dbt-import")).status_code == 403
    client.force_login(admin)
    with MANIFEST.open("rb") as manifest, CATALOG.open("rb") as catalog:
        page = client.post(reverse("contract-dbt-import"), {"manifest": manifest, "catalog": catalog,
                                                            "namespace": NAMESPACE, "dry_run": "on"}).content.decode()
    assert "Dry run: nothing was stored" in page and "created   draft wh.sales.orders 1.0" in page
    assert "postgres type &#x27;jsonb&#x27; has no canonical dtype" in page
    assert not Dataset.objects.exists()


def test_the_dbt_import_page_says_what_is_wrong_with_an_upload(client, admin):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(admin)
    page = client.post(reverse("contract-dbt-import"),
                       {"manifest": SimpleUploadedFile("manifest.json", b"[1, 2]")}).content.decode()
    assert "manifest.json must hold a JSON object" in page
