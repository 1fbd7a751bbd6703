from __future__ import annotations

import pytest

from contracts_app.models import AuditAction, ContractVersion, DatasetBinding
from contracts_app.publishing import record_version
from registry.models import AuditEvent
from tests.publish.conftest import cell_count

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(owner, owner_team, local_store, django_capture_on_commit_callbacks):
    # owner_team first, so the contract it records belongs to Checkout and alice may bind it.
    with django_capture_on_commit_callbacks(execute=True):
        return record_version(cell_count(), by=owner, store=local_store)


def test_admins_browse_contracts_and_versions(client, admin, version):
    client.force_login(admin)
    assert client.get("/admin/contracts_app/contract/").status_code == 200
    assert client.get(f"/admin/contracts_app/contract/{version.contract.pk}/change/").status_code == 200
    assert client.get(f"/admin/contracts_app/contractversion/{version.pk}/change/").status_code == 200


def test_deleting_a_version_consumers_depend_on_is_refused_in_the_admin(client, admin, version, dataset, owner):
    version.contract.bind(dataset, by=owner)
    client.force_login(admin)
    response = client.post(f"/admin/contracts_app/contractversion/{version.pk}/delete/", {"post": "yes"}, follow=True)
    assert "have consumers that depend on its published versions" in response.content.decode()
    assert ContractVersion.objects.filter(pk=version.pk).exists()


def test_binding_a_dataset_in_the_admin_is_audited(client, admin, version, dataset):
    client.force_login(admin)
    response = client.post("/admin/contracts_app/datasetbinding/add/", {"dataset": dataset.pk, "contract": version.contract.pk})
    assert response.status_code == 302
    assert DatasetBinding.objects.get().contract == version.contract
    assert AuditEvent.objects.filter(action=AuditAction.DATASET_BOUND, actor=admin).exists()


def test_setting_the_mode_in_the_admin_is_audited(client, admin, version, dataset, owner):
    version.contract.bind(dataset, by=owner)
    client.force_login(admin)
    response = client.post(f"/admin/contracts_app/contract/{version.contract.pk}/change/", {
        "owner_team": version.contract.owner_team_id, "compatibility_mode": "NONE",
        "versions-TOTAL_FORMS": "1", "versions-INITIAL_FORMS": "1", "versions-0-id": version.pk,
        "versions-0-contract": version.contract.pk,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    version.contract.refresh_from_db()
    assert version.contract.compatibility_mode == "NONE"
    event = AuditEvent.objects.get(action=AuditAction.MODE_WEAKENED)
    assert (event.actor, event.after["consumer_teams"]) == (admin, ["analytics"])


def test_unbinding_in_the_admin_is_audited(client, admin, version, dataset, owner):
    binding = version.contract.bind(dataset, by=owner)
    client.force_login(admin)
    client.post(f"/admin/contracts_app/datasetbinding/{binding.pk}/delete/", {"post": "yes"})
    assert not DatasetBinding.objects.exists()
    assert AuditEvent.objects.filter(action=AuditAction.DATASET_UNBOUND, actor=admin).exists()
