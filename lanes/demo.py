"""Demo step: one contract with two live lanes.

retail.sales.orders has 1.0 and 2.0 in the demo tree (2.0 stores money in minor units).
Lane 1.x lives on: 1.1 says so in its description and, as its document says, deprecates the
lane from today with a sunset 25 days ahead (so the 30-day reminder is due). Carol's
pipeline (Analytics) still asks for "1.x", and a Finance job's input schema of the bound
table still has the 1.x columns; the lane page shows both."""

from __future__ import annotations

import copy
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from contracts_app.models import Contract
from contracts_app.publishing import publish_document
from lanes.models import LaneRead
from registry.hooks import demo_step
from registry.models import Team
from registry.usage import InputSchema, schema_fingerprint

CONTRACT = "retail.sales.orders"


@demo_step("lanes: retail.sales.orders keeps a live 1.x lane beside 2.x, deprecated, with a reader", order=70)
def live_old_lane(stdout) -> None:
    contract = Contract.objects.filter(name=CONTRACT).first()
    base = contract.versions.filter(version="1.0").first() if contract else None
    if base is None or not contract.versions.filter(version__startswith="2.").exists():
        stdout.write("  lanes: nothing to do (retail.sales.orders 1.0 and 2.0 are not both published)\n")
        return
    if not contract.versions.filter(version="1.1").exists():
        document = copy.deepcopy(base.document)
        document["schema"]["version"] = "1.1"
        document["schema"]["description"] = ("One row per customer order, as the storefront records it. "
                                             "Lane 1.x is deprecated: move to 2.x.")
        today = timezone.localdate()
        document["schema"]["deprecation_date"] = today.isoformat()
        document["schema"]["sunset_date"] = (today + timedelta(days=25)).isoformat()
        outcome = publish_document(document, by=None)
        stdout.write(f"  lanes: {outcome.message}\n")
    carol = get_user_model().objects.filter(username="carol").first()
    analytics = Team.objects.filter(slug="analytics").first()
    if carol is not None:
        LaneRead.objects.update_or_create(
            contract=contract, reader=f"user:{carol.pk}", major=1,
            defaults={"reader_label": "carol's nightly orders report", "team": analytics, "version": "1.1",
                      "selector": "1.x", "last_seen_at": timezone.now()})
        stdout.write("  lanes: carol's pipeline still reads retail.sales.orders 1.x\n")
    # Lineage's evidence too: a Finance job whose events give the bound table the 1.x shape
    # (total_amount, no channel), as the ingest keeps an input's schema facet.
    binding = contract.bindings.select_related("dataset").first()
    finance = Team.objects.filter(slug="finance").first()
    if binding is not None:
        fields = {"order_id": "VARCHAR", "customer_id": "VARCHAR", "ordered_at": "TIMESTAMP", "status": "VARCHAR",
                  "currency": "VARCHAR", "total_amount": "DOUBLE PRECISION", "item_count": "INTEGER",
                  "coupon_code": "VARCHAR"}
        InputSchema.objects.update_or_create(
            dataset=binding.dataset, job_namespace="airflow", job_name="finance.legacy_margin_report",
            defaults={"fields": fields, "fingerprint": schema_fingerprint(fields)[1], "complete": True,
                      "token_team": finance, "last_seen_at": timezone.now()})
        stdout.write("  lanes: airflow/finance.legacy_margin_report still sees retail.public.orders in the 1.x shape\n")
