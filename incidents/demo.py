"""Incidents in the embedded demo: retail.public.orders' dbt tests, replayed through
the ingest as dbt-ol sends them. Yesterday's run passed every check its contract
declares; the latest run failed not_null on customer_id. The evaluation opens the
incident as it would for a real pipeline, tells the teams whose jobs read
customer_id (analytics) and spares those that provably do not (finance), so the
dataset page shows the failing status and the incident, and the consumer team's
inbox its item.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from contracts_app.models import ContractVersion, DatasetBinding
from incidents.declared import NOT_NULL
from incidents.evaluation import DECLARED, refresh_status
from incidents.models import ContractStatus
from incidents.pending import evaluate_pending
from lineage.demo import demo_loaded_at
from lineage.ingest import store_event
from registry.hooks import demo_step

NAMESPACE, NAME = "postgres://retail-db:5432", "retail.public.orders"
TEST_JOB = "retail_dbt.retail.public.orders.test"
FAILING = ("customer_id", NOT_NULL)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"


def _run_id(label: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"demo-dbt-test:{label}"))


def _event(run: str, at: datetime, assertions: list[dict]) -> dict:
    return {
        "eventType": "COMPLETE", "eventTime": at.isoformat().replace("+00:00", "Z"), "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": _run_id(run)}, "job": {"namespace": "dbt", "name": TEST_JOB},
        "inputs": [{"namespace": NAMESPACE, "name": NAME, "inputFacets": {"dataQualityAssertions": {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json",
            "assertions": assertions}}}],
        "outputs": [],
    }


# After lineage (60): the jobs reading the dataset, and their columns, are known.
@demo_step("incidents (a dbt test run that failed a declared check of retail.public.orders)", order=70)
def load_incidents_demo(stdout=None) -> None:
    binding = DatasetBinding.objects.filter(dataset__namespace=NAMESPACE, dataset__name=NAME).first()
    if binding is None:
        return  # the contracts' step bound nothing (no demo contracts): nothing to judge against
    status = ContractStatus.objects.filter(dataset_id=binding.dataset_id).first() or refresh_status(
        binding.dataset_id)
    version = ContractVersion.objects.filter(contract_id=binding.contract_id, version=status.version).first()
    declared = DECLARED.of(version.pk) if version else []
    if not declared:
        return
    loaded_at = demo_loaded_at()

    def assertions(failing: bool) -> list[dict]:
        return [{"assertion": check.kind, "column": check.column, "name": f"{check.kind}_orders_{check.column}",
                 "success": not (failing and (check.column, check.kind) == FAILING),
                 **({"actual": "14", "expected": "0"} if failing and (check.column, check.kind) == FAILING else {})}
                for check in declared]

    stored = 0
    for run, at, failing in (("yesterday", loaded_at - timedelta(days=1), False),
                             ("latest", loaded_at - timedelta(minutes=4), True)):
        stored += store_event(_event(run, at, assertions(failing)), by="demo").stored
    # Judged after the ingest's commit; a step run inside a transaction (a test's) judges them here.
    evaluate_pending([binding.dataset_id])
    if stdout is not None:
        stdout.write(f"  {stored} dbt test run(s) of {NAME} stored; its latest failed "
                     f"{FAILING[1]} on {FAILING[0]}")
