from __future__ import annotations

import io

import pytest

from contracts_app.demo import publish_demo_contracts
from contracts_app.models import ContractVersion, DatasetBinding
from registry.demo import load_core_demo

pytestmark = pytest.mark.django_db


def test_the_demo_publishes_the_contracts_and_binds_datasets_idempotently(local_store, use_store, django_capture_on_commit_callbacks):
    use_store(local_store)
    load_core_demo()
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        publish_demo_contracts(stdout=out)
    published = ContractVersion.objects.in_store().count()
    assert published >= 10  # every 1.0; later versions too once the checker calls them compatible
    assert f"{published} published" in out.getvalue() and "8 datasets bound" in out.getvalue()
    assert DatasetBinding.objects.count() == 8
    assert local_store.exists("contracts/index/schema_index.csv")
    again = io.StringIO()
    publish_demo_contracts(stdout=again)
    assert f"{published} unchanged" in again.getvalue() and ContractVersion.objects.count() == published
