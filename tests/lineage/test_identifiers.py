"""The ingest refuses job and dataset names holding a bidirectional control or a combining
mark (registry.identifiers), with a 422 naming the field, before anything is stored."""

from __future__ import annotations

import pytest

from lineage.models import RunEvent
from registry.models import Dataset

from .conftest import post, run_event

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
STROKE = "\u0336"  # COMBINING LONG STROKE OVERLAY

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("where", "event"), [
    ("outputs[0].name", run_event(outputs=["mart.orders" + RLO])),
    ("inputs[0].namespace", run_event(inputs=[{"namespace": "warehouse" + STROKE, "name": "raw.orders"}])),
    ("job.name", run_event(job="etl.load" + RLO)),
    ("job.namespace", run_event(job_namespace="air" + STROKE + "flow")),
])
def test_the_ingest_refuses_such_names_with_a_422_naming_the_field(client, lineage_secret, where, event):
    response = post(client, event, lineage_secret)
    assert response.status_code == 422, response.content[:300]
    [error] = response.json()["errors"]
    assert error["path"] == where and error["message"].startswith("contains the ")
    assert not Dataset.objects.exists() and not RunEvent.objects.exists()




def test_names_in_other_scripts_are_stored(client, lineage_secret):
    assert post(client, run_event(outputs=["mart.注文", "mart.Ærø_café"]), lineage_secret).status_code == 201
    assert set(Dataset.objects.values_list("name", flat=True)) == {"mart.注文", "mart.Ærø_café"}


def test_a_source_named_only_in_column_lineage_does_not_become_a_dataset_under_such_a_name(client, lineage_secret):
    from .conftest import column_lineage_facet, dataset, input_field

    out = dataset("mart.orders", columnLineage=column_lineage_facet({"id": [input_field("raw.orders" + RLO, "id")]}))
    response = post(client, run_event(outputs=[out]), lineage_secret)
    assert response.status_code == 201, response.content[:300]  # the output is stored; the source is not a dataset
    assert not Dataset.objects.filter(name__contains=RLO).exists()
