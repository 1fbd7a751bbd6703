"""Demo step: publish the demo contracts to the configured store and bind the
demo datasets to them. Idempotent: a second run finds everything unchanged."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from registry.hooks import demo_step

BINDINGS = {
    ("postgres://retail-db:5432", "retail.public.orders"): "retail.sales.orders",
    ("postgres://retail-db:5432", "retail.public.customers"): "retail.crm.customers",
    ("postgres://retail-db:5432", "retail.public.payments"): "retail.finance.payments",
    ("postgres://retail-db:5432", "retail.public.inventory"): "retail.warehouse.inventory",
    ("postgres://retail-db:5432", "retail.public.shipments"): "retail.logistics.shipments",
    ("kafka://retail-events", "checkout.order_placed"): "retail.checkout.order_placed",
    ("s3://lab-lake", "lims/cell_count"): "lab.analytics.cell_count",
    ("s3://lab-lake", "bioprocess/bioreactor_run"): "lab.upstream.bioreactor_run",
}


@demo_step("contracts (published to the contract store) and their dataset bindings", order=40)
def publish_demo_contracts(stdout) -> None:
    from contracts_app.management.commands.publish_contracts import discover_contracts
    from contracts_app.models import Contract, DatasetBinding
    from contracts_app.publishing import publish_document
    from contracts_app.specs import InvalidSpec, record_spec
    from contracts_app.store import store_from_settings
    from contracts_app.yamlio import load_yaml
    from registry.models import Dataset

    root = Path(settings.CONTRACTS_ROOT)
    store = store_from_settings()
    tally: dict[str, int] = {}
    for path, document, text, problems in discover_contracts(root):
        if problems:
            stdout.write(f"  skipped {path.relative_to(root)}: {'; '.join(problems)}\n")
            continue
        outcome = publish_document(document, by=None, yaml_text=text, store=store)
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
    specs_root = root.parent / "integrations" / "source_specs"
    for path in sorted(specs_root.rglob("spec.yaml")) if specs_root.is_dir() else []:
        try:
            record_spec(load_yaml(path.read_text()), by=None, yaml_text=path.read_text(), store=store)
        except InvalidSpec as exc:
            stdout.write(f"  spec {path.relative_to(specs_root)} skipped: {exc.messages[0]}\n")
    contracts = {c.name: c for c in Contract.objects.filter(name__in=BINDINGS.values())}
    bound = 0
    for (namespace, name), contract_name in BINDINGS.items():
        dataset = Dataset.objects.filter(namespace=namespace, name=name).first()
        contract = contracts.get(contract_name)
        if dataset is None or contract is None:
            continue
        if not DatasetBinding.objects.filter(dataset=dataset, contract=contract).exists():
            contract.bind(dataset, by=None)
        bound += 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(tally.items()))
    stdout.write(f"  contracts: {summary} (to {store.describe()}); {bound} datasets bound\n")
