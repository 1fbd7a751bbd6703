"""The demo world for the browser tests that look at every main page: loaded once per
session and kept as a fixture file, then loaded into each test's database.

tests/e2e/conftest.py imports the fixtures, so every browser test may ask for `demo`.
"""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Count
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from change_requests.models import ChangeRequest
from contracts_app.models import SchemaDriftCheck
from lineage.models import FieldEdge, Job, QualityCheck
from registry.env import parse_contract_store
from registry.models import Dataset

DEMO_PASSWORD = "demo-password"  # fixtures/demo.yaml's, every demo user's
VIEWPORTS = {1280: {"width": 1280, "height": 800}, 390: {"width": 390, "height": 844}}


@pytest.fixture(scope="session")
def demo_snapshot(django_db_setup, django_db_blocker, tmp_path_factory) -> tuple[Path, Path]:
    """The demo, loaded once for the session and kept as a fixture file (loading it is
    the slow part); the database is emptied again for the tests, which load the file.
    Returns (fixture file, contract store)."""
    root = tmp_path_factory.mktemp("demo")
    store, snapshot = root / "store", root / "demo.json"
    with override_settings(CONTRACT_STORE=parse_contract_store(str(store), base_dir=root)), \
            django_db_blocker.unblock():
        try:
            call_command("load_demo", stdout=io.StringIO())
            call_command("dumpdata", "--natural-foreign", "--exclude=contenttypes", "--exclude=auth.permission",
                         "--exclude=sessions", "--exclude=admin.logentry", "--exclude=axes", output=str(snapshot))
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return snapshot, store


@pytest.fixture
def demo(demo_snapshot, settings) -> dict[str, str]:
    """The loaded demo, its orders dataset also drifting from its contract and failing a
    quality check (the demo has neither on a dataset with consumers); the paths of the
    objects the screens name: {dataset}, {request}, {job}, {columns}."""
    snapshot, store = demo_snapshot
    settings.CONTRACT_STORE = parse_contract_store(str(store), base_dir=store.parent)
    call_command("loaddata", str(snapshot), verbosity=0)
    orders = Dataset.objects.get(namespace="postgres://retail-db:5432", name="retail.public.orders")
    now = timezone.now()
    SchemaDriftCheck.objects.create(
        dataset=orders, contract_name="retail.sales.orders", version="2.0", run_uuid=uuid.uuid4(),
        job_namespace="airflow", job_name="checkout.load_orders_from_the_shop_database", event_type="COMPLETE",
        event_time=now, drift_count=2, findings=[
            {"kind": "missing_required", "field": "total_amount_including_taxes_and_shipping", "severity": "drift",
             "expected": "float64", "actual": None,
             "message": "'total_amount_including_taxes_and_shipping' is required by the contract but the output "
                        "has no such field."},
            {"kind": "type_mismatch", "field": "placed_at", "severity": "drift", "expected": "datetime64[ns, UTC]",
             "actual": "VARCHAR", "message": "'placed_at' is 'VARCHAR' in the output; the contract says a timestamp."},
        ])
    QualityCheck.objects.create(
        dataset=orders, run_uuid=uuid.uuid4(), job_namespace="dbt", job_name="retail.test_orders_not_null_and_unique",
        event_type="COMPLETE", event_time=now, assertion_count=3, failed_count=1, metrics={"rowCount": 1310},
        assertions=[{"assertion": "not_null", "column": "customer_id", "success": False, "severity": "error"},
                    {"assertion": "unique", "column": "order_id", "success": True}])
    # The column view of the dataset whose columns the demo's jobs feed most (scripts/screenshots' choice).
    fed = FieldEdge.objects.values("dataset").annotate(n=Count("pk")).order_by("-n", "dataset").first()
    return {
        "dataset": orders.get_absolute_url(),
        "request": ChangeRequest.objects.filter(state="open").order_by("pk").first().get_absolute_url(),
        "job": Job.objects.get(name="analytics.customer_orders").get_absolute_url(),
        "columns": reverse("lineage-dataset-columns", args=[fed["dataset"]]),
    }
