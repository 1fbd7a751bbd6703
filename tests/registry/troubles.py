"""What the dataset list's badges report, made directly: a schema drift check, a
quality check, an open change request, a job reading a dataset."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.utils import timezone

from change_requests.models import ChangeRequest
from contracts_app.models import Contract, SchemaDriftCheck
from lineage.models import QualityCheck
from registry.usage import ColumnRead


def contract(name: str = "retail.public.orders") -> Contract:
    domain, *_, entity = name.split(".")
    return Contract.objects.create(name=name, domain=domain, entity=entity, schema_type="dataframe")


def drift(dataset, findings: int) -> None:
    SchemaDriftCheck.objects.create(dataset=dataset, contract_name="retail.public.orders", version="1.0",
                                    run_uuid=uuid.uuid4(), job_namespace="airflow", job_name="load_orders",
                                    event_type="COMPLETE", event_time=timezone.now(), drift_count=findings)


def quality(dataset, failed: int) -> None:
    QualityCheck.objects.create(dataset=dataset, run_uuid=uuid.uuid4(), job_namespace="dbt", job_name="test_orders",
                                event_time=timezone.now(), assertion_count=3, failed_count=failed)


def open_request(contract) -> ChangeRequest:
    now = timezone.now()
    return ChangeRequest.objects.create(contract=contract, proposed_version="2.0", proposed_document={},
                                        deadline_at=now + timedelta(days=7), remind_at=now + timedelta(days=5))


def read(dataset, job: str, team=None, *, seen_ago: timedelta = timedelta(hours=1)) -> None:
    namespace, name = job.split("/")
    seen = timezone.now() - seen_ago
    ColumnRead.objects.create(dataset=dataset, job_namespace=namespace, job_name=name, column="", source="input",
                              token_team=team, first_seen_at=seen, last_seen_at=seen)
