"""A contract document may name the datasets it describes (`datasets:`); publishing
a version binds them, creating unowned datasets never seen before (audited), and
never takes a dataset from another contract."""

from __future__ import annotations

import io
import textwrap

import pytest
from django.core.management import call_command

from change_requests.models import ChangeRequest
from contracts_app.exporting import export_file
from contracts_app.gates import validate_document
from contracts_app.models import AuditAction, ContractVersion, DatasetBinding
from contracts_app.publishing import publish_document, record_version
from contracts_app.yamlio import load_yaml
from registry.models import AuditEvent, Dataset
from tests.publish.conftest import cell_count, order_placed, write_tree

pytestmark = pytest.mark.django_db

EVENTS = {"namespace": "kafka://retail-events", "name": "checkout.order_placed"}


def naming(document: dict, *datasets: dict) -> dict:
    return {**document, "datasets": list(datasets)}


def test_every_template_accepts_a_datasets_section_and_refuses_a_malformed_one():
    for document in (order_placed(), cell_count()):
        assert validate_document(naming(document, EVENTS)) == []
        problems = validate_document(naming(document, {"namespace": "kafka://retail-events"}))
        assert ["'name' is a required property"] == [p.message for p in problems]
        assert validate_document(naming(document, EVENTS, EVENTS))  # the same dataset twice


def test_publishing_binds_the_named_datasets_and_creates_unseen_ones_unowned(owner_team, dataset, owner, local_store):
    known = {"namespace": dataset.namespace, "name": dataset.name}
    outcome = publish_document(naming(order_placed(), known, EVENTS), by=owner, store=local_store)

    assert outcome.status == "published"
    contract = outcome.contract_version.contract
    assert {(b.dataset.namespace, b.dataset.name) for b in contract.bindings.select_related("dataset")} == {
        (dataset.namespace, dataset.name), (EVENTS["namespace"], EVENTS["name"])}
    created = Dataset.objects.get(**EVENTS)
    assert not created.is_owned
    first_seen = AuditEvent.objects.get(action=AuditAction.DATASET_FIRST_SEEN)
    assert (first_seen.object_id, first_seen.actor) == (str(created.pk), owner)
    assert first_seen.after == {**EVENTS, "owner_team": None, "named_by": "retail.checkout.order_placed 1.0"}
    assert AuditEvent.objects.filter(action=AuditAction.DATASET_BOUND).count() == 2


def test_publish_contracts_binds_what_the_documents_name(tmp_path, owner_team, local_store, use_store,
                                                         django_capture_on_commit_callbacks):
    use_store(local_store)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("publish_contracts", "--root", str(write_tree(tmp_path, [naming(order_placed(), EVENTS)])),
                     stdout=out)
    binding = DatasetBinding.objects.select_related("dataset", "contract").get()
    assert (binding.dataset.name, binding.contract.name) == ("checkout.order_placed", "retail.checkout.order_placed")
    assert AuditEvent.objects.get(action=AuditAction.DATASET_BOUND).actor_label == "system"


def test_a_breaking_version_binds_nothing_until_it_is_published(owner_team, dataset, owner, local_store):
    publish_document(order_placed(), by=owner, store=local_store)
    breaking = naming(order_placed("2.0"), EVENTS)
    breaking["payload"]["required"].append("currency")

    outcome = publish_document(breaking, by=owner, store=local_store)

    assert outcome.status == "breaking" and ChangeRequest.objects.get().proposed_version == "2.0"
    assert not Dataset.objects.filter(**EVENTS).exists() and not DatasetBinding.objects.exists()


def test_a_document_never_takes_a_dataset_from_another_contract(owner_team, dataset, owner, local_store,
                                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        cells = record_version(cell_count(), by=owner, store=local_store).contract
    cells.bind(dataset, by=owner)
    claimed = naming(order_placed(), {"namespace": dataset.namespace, "name": dataset.name})

    outcome = publish_document(claimed, by=owner, store=local_store)

    assert outcome.status == "refused"
    assert f"names dataset {dataset}, which is bound to lab.analytics.cell_count" in outcome.message
    assert not ContractVersion.objects.filter(contract__name="retail.checkout.order_placed").exists()
    assert DatasetBinding.objects.get(dataset=dataset).contract == cells


def test_a_dataframe_contract_names_its_datasets_with_DATASETS_in_schema_py(tmp_path):
    folder = tmp_path / "domains" / "lab" / "analytics" / "plate" / "v1_0"
    folder.mkdir(parents=True)
    (folder / "schema.py").write_text(textwrap.dedent('''
        import pandera.pandas as pa
        from registry_client.authoring import BaseDataFrameSchema, ContractMixin, register_dataframe_schema

        DATASETS = [{"namespace": "s3://lab-lake", "name": "lims/plate"}]


        @register_dataframe_schema(domain="lab", subdomains=["analytics"], entity="plate", version="1.0",
                                   owner="lab-data", description="Plates.")
        class Plate(ContractMixin, BaseDataFrameSchema):
            well: str = pa.Field()
    '''))
    result = export_file(folder / "schema.py", tmp_path)
    assert result.status == "written", result.error
    document = load_yaml((folder / "schema.yaml").read_text())
    assert list(document) == ["schema", "datasets", "config", "columns"]
    assert document["datasets"] == [{"namespace": "s3://lab-lake", "name": "lims/plate"}]


def test_the_thin_client_reads_a_document_that_names_datasets():
    from registry_client.pandera_models import build_model

    model = build_model(naming(cell_count(), EVENTS))
    assert set(model.to_schema().columns) == {"run_row_id", "viability", "run_date"}
