"""A contract's mode and bindings where people work: the contract page and the
dataset page's contract section (contributed through registry.hooks)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from contracts_app.models import AuditAction, Contract, DatasetBinding
from contracts_app.publishing import record_version
from contracts_app.views import bound_contract_section
from registry.models import AuditEvent, Consumer, Dataset
from tests.publish.conftest import order_placed

pytestmark = pytest.mark.django_db

NAME = "retail.checkout.order_placed"
PAGE = f"/contracts/{NAME}/"


@pytest.fixture
def contract(owner_team, dataset, owner, local_store, django_capture_on_commit_callbacks):
    """order_placed 1.0, owned by Checkout, bound to `dataset` (which Analytics consumes)."""
    with django_capture_on_commit_callbacks(execute=True):
        version = record_version(order_placed(), by=owner, store=local_store)
    version.contract.bind(dataset, by=owner)
    return version.contract


def page_of(client, person, url=PAGE) -> str:
    client.force_login(person)
    return client.get(url).content.decode()


def test_the_contract_page_shows_the_mode_and_the_bound_datasets(client, contract, consumer, dataset):
    page = page_of(client, consumer)
    assert '<span class="tag" id="contract-mode">FULL</span>' in page
    assert "required by bound datasets" not in page  # the dataset's BACKWARD adds nothing to FULL
    Dataset.objects.filter(pk=dataset.pk).update(compatibility_mode="FULL_TRANSITIVE")
    assert "required by bound datasets, FULL_TRANSITIVE" in page_of(client, consumer)
    page = page_of(client, consumer)
    assert f'href="{dataset.get_absolute_url()}">{dataset.namespace}/{dataset.name}</a>' in page
    # A consumer sees them, and no form to change them.
    assert 'id="mode-form"' not in page and 'id="bind-form"' not in page and "Unbind" not in page


@pytest.mark.parametrize("who", ["owner", "teammate", "admin"])
def test_the_owner_team_and_admins_get_the_forms(client, contract, request, who):
    page = page_of(client, request.getfixturevalue(who))
    assert 'id="mode-form"' in page and 'id="bind-form"' in page and ">Unbind</button>" in page


def test_setting_the_mode_on_the_page_is_audited(client, contract, owner):
    client.force_login(owner)
    response = client.post(reverse("contract-set-mode", args=[NAME]), {"compatibility_mode": "FULL_TRANSITIVE"})
    assert response.url == PAGE
    contract.refresh_from_db()
    assert contract.compatibility_mode == "FULL_TRANSITIVE"
    assert AuditEvent.objects.filter(action=AuditAction.MODE_CHANGED, actor=owner).count() == 1
    assert "is now checked under FULL_TRANSITIVE" in client.get(PAGE).content.decode()


def test_anyone_else_is_told_why_and_nothing_changes(client, contract, consumer):
    client.force_login(consumer)
    client.post(reverse("contract-set-mode", args=[NAME]), {"compatibility_mode": "NONE"})
    page = client.get(PAGE).content.decode()
    assert "Only a member of the owner team checkout or a governance admin can change the compatibility mode" in page
    contract.refresh_from_db()
    assert contract.compatibility_mode == "FULL"
    assert not AuditEvent.objects.filter(action__startswith="contract.mode").exists()


def test_a_weakening_is_shown_on_the_contract_page(client, contract, owner, consumer):
    client.force_login(owner)
    client.post(reverse("contract-set-mode", args=[NAME]), {"compatibility_mode": "BACKWARD"})
    event = AuditEvent.objects.get(action=AuditAction.MODE_WEAKENED)
    page = page_of(client, consumer)
    row = page[page.index('id="weakenings"'):]
    assert f"<td>{event.at:%Y-%m-%d %H:%M}</td><td>alice</td><td>FULL</td>\n          <td>BACKWARD</td><td>analytics</td>" in row


def test_binding_and_unbinding_on_the_contract_page(client, contract, owner, dataset):
    other = Dataset.objects.create(namespace="kafka://retail-events", name="checkout.order_placed")
    client.force_login(owner)
    response = client.post(reverse("contract-bind", args=[NAME]), {"namespace": other.namespace, "name": other.name})
    assert response.url == PAGE
    assert DatasetBinding.objects.get(dataset=other).contract == contract
    client.post(reverse("contract-unbind", args=[NAME, dataset.pk]))
    assert not DatasetBinding.objects.filter(dataset=dataset).exists()
    assert AuditEvent.objects.filter(action=AuditAction.DATASET_UNBOUND, actor=owner).count() == 1
    client.post(reverse("contract-bind", args=[NAME]), {"namespace": "s3://x", "name": "nowhere"})
    assert "No dataset s3://x/nowhere" in client.get(PAGE).content.decode()


def test_an_outsider_cannot_bind_on_the_page(client, contract, outsider, other_team):
    other = Dataset.objects.create(namespace="db", name="picks")
    client.force_login(outsider)
    client.post(reverse("contract-bind", args=[NAME]), {"namespace": "db", "name": "picks"})
    assert not DatasetBinding.objects.filter(dataset=other).exists()
    assert "Only a member of the owner team checkout" in client.get(PAGE).content.decode()


def test_the_contract_page_takes_a_constant_number_of_queries(client, contract, owner, owner_team, consumer_team,
                                                              django_assert_num_queries):
    for i in range(5):
        more = Dataset.objects.create(namespace="db", name=f"orders_{i}", owner_team=owner_team, owner=owner)
        Consumer.objects.create(dataset=more, team=consumer_team)
        contract.bind(more, by=owner)
    for mode in ("BACKWARD", "FULL", "NONE", "FULL"):
        contract.set_mode(mode, by=owner)
    client.force_login(owner)
    # 1: session, 2: user, 3: the contract with its owner team, 4: its versions with their publishers,
    # 5: its bound datasets with their consumer counts, 6: is the reader in the owner team,
    # 7: the audit rows of the mode's weakenings,
    # 8: its contract status per bound dataset (the status section), 9: its lanes and 10: the readers
    # seen on them (the lanes section, which reuses the page's versions and bindings; with one lane
    # there is nothing for lineage to tell apart, so no reader job is asked about)
    with django_assert_num_queries(10):
        page = client.get(PAGE).content.decode()
    assert page.count(">Unbind</button>") == 6 and page.count("</td><td>alice</td><td>FULL</td>") == 2


# --- the dataset page's section ----------------------------------------------------------

def test_the_dataset_page_shows_the_contract_and_its_mode(client, contract, dataset, consumer):
    page = page_of(client, consumer, dataset.get_absolute_url())
    assert f'href="/contracts/{NAME}/"' in page and '<span class="tag" id="contract-mode">FULL</span>' in page
    assert "this dataset's own" not in page  # its BACKWARD asks for nothing FULL does not
    Dataset.objects.filter(pk=dataset.pk).update(compatibility_mode="BACKWARD_TRANSITIVE")
    page = page_of(client, consumer, dataset.get_absolute_url())
    assert ("this dataset's own BACKWARD_TRANSITIVE, set by a governance admin, which asks for more: a new version "
            "must pass both") in page
    assert 'id="dataset-mode-form"' not in page and 'id="dataset-unbind-form"' not in page


def test_the_owner_team_sets_the_mode_and_unbinds_from_the_dataset_page(client, contract, dataset, teammate):
    page = page_of(client, teammate, dataset.get_absolute_url())
    assert 'id="dataset-mode-form"' in page and 'id="dataset-unbind-form"' in page
    response = client.post(reverse("contract-set-mode", args=[NAME]),
                           {"compatibility_mode": "NONE", "next": dataset.get_absolute_url()})
    assert response.url == dataset.get_absolute_url()
    assert Contract.objects.get(pk=contract.pk).compatibility_mode == "NONE"
    assert AuditEvent.objects.get(action=AuditAction.MODE_WEAKENED).actor == teammate
    client.post(reverse("contract-unbind", args=[NAME, dataset.pk]), {"next": "https://elsewhere.example/"})
    assert not DatasetBinding.objects.exists()


def test_an_unbound_dataset_offers_the_persons_contracts(client, contract, owner, consumer, outsider, other_team):
    fresh = Dataset.objects.create(namespace="kafka://retail-events", name="checkout.order_placed")
    assert 'id="dataset-bind-form"' not in page_of(client, consumer, fresh.get_absolute_url())
    assert 'id="dataset-bind-form"' not in page_of(client, outsider, fresh.get_absolute_url())
    page = page_of(client, owner, fresh.get_absolute_url())
    assert f'<option value="{NAME}">{NAME}</option>' in page
    response = client.post(reverse("contract-dataset-bind", args=[fresh.pk]), {"contract": NAME})
    assert response.url == fresh.get_absolute_url()
    assert DatasetBinding.objects.get(dataset=fresh).contract == contract


def test_past_two_hundred_contracts_the_name_is_typed_not_chosen_from_all(client, contract, owner, monkeypatch):
    monkeypatch.setattr("contracts_app.views.BINDABLE_SHOWN", 0)  # as 200 is, for an admin of a large registry
    fresh = Dataset.objects.create(namespace="kafka://retail-events", name="checkout.order_placed")
    page = page_of(client, owner, fresh.get_absolute_url())
    assert '<input name="contract" list="bindable-contracts"' in page and f'<option value="{NAME}">' not in page
    client.post(reverse("contract-dataset-bind", args=[fresh.pk]), {"contract": NAME})
    assert DatasetBinding.objects.get(dataset=fresh).contract == contract


def test_binding_from_the_dataset_page_is_for_the_contracts_owner_team(client, contract, consumer):
    fresh = Dataset.objects.create(namespace="db", name="fresh")
    client.force_login(consumer)
    client.post(reverse("contract-dataset-bind", args=[fresh.pk]), {"contract": NAME})
    assert not DatasetBinding.objects.filter(dataset=fresh).exists()
    assert "Choose one of the contracts your teams own." in client.get(fresh.get_absolute_url()).content.decode()


@pytest.mark.parametrize(("bound", "queries"), [
    # 1: the binding with its contract and owner team, 2: is the person in that team
    (True, 2),
    # 1: the binding (none), 2: the contracts of the person's teams (an unowned dataset: nothing to draft)
    (False, 2),
])
def test_the_dataset_section_takes_a_fixed_number_of_queries(rf, contract, dataset, owner, bound, queries,
                                                             django_assert_num_queries):
    target = dataset if bound else Dataset.objects.create(namespace="db", name="fresh")
    request = rf.get(target.get_absolute_url())
    request.user = owner
    with django_assert_num_queries(queries):
        html = bound_contract_section(request, target)
    assert ('id="dataset-mode-form"' if bound else 'id="dataset-bind-form"') in html


def test_an_owned_unbound_dataset_asks_three_more_queries_to_offer_a_draft(rf, contract, owner_team, owner,
                                                                          django_assert_num_queries):
    target = Dataset.objects.create(namespace="db", name="fresh", owner_team=owner_team)
    request = rf.get(target.get_absolute_url())
    request.user = owner
    # the binding (none), the person's contracts, a pending draft (none), is the person in the
    # owner team, the observed schema (none: no "Draft a contract")
    with django_assert_num_queries(5):
        html = bound_contract_section(request, target)
    assert 'id="dataset-bind-form"' in html and 'id="dataset-draft-form"' not in html


def test_a_bound_dataset_shows_its_contracts_mode_not_its_own_default(client, contract, dataset, consumer):
    page = page_of(client, consumer, dataset.get_absolute_url())
    assert dataset.compatibility_mode == "BACKWARD"  # the dataset's default, which FULL covers
    assert '<span class="tag" id="contract-mode">FULL</span>' in page
    assert "the contract's mode is this dataset's mode" in page
    assert ">BACKWARD<" not in page
    contract_page = page_of(client, consumer)
    assert ">BACKWARD<" not in contract_page


def test_the_dataset_list_shows_a_bound_datasets_contract_mode(client, contract, dataset, consumer):
    unbound = Dataset.objects.create(namespace="s3://lake", name="unbound", compatibility_mode="FORWARD")
    client.force_login(consumer)
    page = client.get(reverse("dataset-list")).content.decode()
    row = page[page.index(dataset.get_absolute_url()):]
    assert row[:row.index("</tr>")].count('<span class="tag">FULL</span>') == 1
    row = page[page.index(unbound.get_absolute_url()):]
    assert '<span class="tag">FORWARD</span>' in row[:row.index("</tr>")]
