"""One rule for "the latest version" (registry_client.versions.latest_release):
with 1.0 and a 2.0rc1 pre-release published, the change-request base, the
contract API and the catalogue all say 1.0 (drift: tests/lineage/test_drift.py)."""

from __future__ import annotations

import copy

import pytest
from registry_client.versions import latest_release

from change_requests.workflows import open_change_request
from contracts_app.models import ContractVersion
from contracts_app.publishing import record_version

from .conftest import BASE_DOCUMENT, proposed_document, report_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_pre_release(contract, owner):
    pre = copy.deepcopy(BASE_DOCUMENT)
    pre["schema"]["version"] = "2.0rc1"
    record_version(pre, by=owner)
    return contract


def test_the_rule_takes_releases_only_in_semantic_order():
    assert latest_release(["1.0", "2.0rc1", "10.0", "9.0", "11.0.dev1", "not-a-version"]) == "10.0"
    assert latest_release(["2.0rc1"]) is None
    rows = [ContractVersion(version=v) for v in ("1.0", "2.0rc1")]
    assert latest_release(rows, key=lambda v: v.version).version == "1.0"


def test_the_change_request_base_is_the_latest_release_not_the_pre_release(with_pre_release, owner):
    doc = proposed_document("3.0")
    request = open_change_request(with_pre_release, doc, by=owner, report=report_for(doc))
    assert request.base_version.version == "1.0"


def test_the_contract_api_and_page_name_the_same_latest(with_pre_release, client, owner):
    client.force_login(owner)
    assert client.get(f"/api/contracts/{with_pre_release.name}/").json()["latest"] == "1.0"
    assert with_pre_release.latest_version().version == "1.0"
    page = client.get(f"/contracts/{with_pre_release.name}/").content.decode()
    assert "1.0" in page

