"""The standard's own tool agrees: `datacontract lint` passes every exported demo contract, and
`datacontract test` passes an exported contract against a real PostgreSQL table (and fails it
when the table breaks the contract). The CLI is the real one, in its own virtualenv."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from psycopg import sql

from contracts_app.models import Contract
from contracts_app.odcs import odcs_yaml
from registry.models import Dataset
from tests.odcs.conftest import DEMO

pytestmark = [pytest.mark.datacontract, pytest.mark.django_db]


def run(cli, *args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_the_cli_lints_every_exported_demo_contract(published_demo, datacontract_cli, tmp_path):
    assert len(published_demo) == len(DEMO)
    paths = []
    for version in published_demo:
        path = tmp_path / f"{version.contract.name}-{version.version}.odcs.yaml"
        path.write_text(odcs_yaml(version))
        paths.append(path)
    # one CLI process per file, as a person runs it; two at a time (most of each run is start-up)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: run(datacontract_cli, "lint", str(p)), paths))
    for path, result in zip(paths, results, strict=True):
        assert result.returncode == 0, f"{path.name}:\n{result.stdout}\n{result.stderr}"
        assert "Data contract is valid against ODCS v3.1.0" in result.stdout


@pytest.fixture
def warehouse():
    """A real database with a table the storefront's orders land in: (connection info, database name)."""
    info = connection.settings_dict
    server = {"host": info["HOST"] or "127.0.0.1", "port": int(info["PORT"] or 5432), "user": info["USER"] or "postgres"}
    name = f"{info['NAME']}_warehouse"[:63]
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(dbname=name, autocommit=True, **server) as db:
        db.execute("""CREATE TABLE public.orders (
            order_id varchar NOT NULL, customer_id varchar NOT NULL, ordered_at timestamp NOT NULL,
            status varchar NOT NULL, currency varchar NOT NULL, total_amount double precision NOT NULL,
            item_count integer NOT NULL, coupon_code varchar(20))""")
        db.execute("""INSERT INTO public.orders VALUES
            ('ORD-00000001', 'cust-1', (now() AT TIME ZONE 'utc') - interval '50 minutes', 'paid', 'EUR', 12.5, 2, NULL),
            ('ORD-00000002', 'cust-2', (now() AT TIME ZONE 'utc') - interval '5 minutes', 'placed', 'USD', 0, 1, 'SAVE10'),
            ('ORD-00000003', 'cust-1', (now() AT TIME ZONE 'utc') - interval '2 hours', 'delivered', 'GBP', 99.0, 7, NULL)""")
    yield server, name
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def exported_orders(bound_orders, warehouse, owner_team, owner, tmp_path):
    """retail.sales.orders 1.0 bound to the warehouse table, fresh within an hour, exported as ODCS."""
    from freshness.models import DatasetFreshness

    server, name = warehouse
    table = Dataset.objects.create(namespace=f"postgres://{server['host']}:{server['port']}",
                                   name=f"{name}.public.orders", owner_team=owner_team, owner=owner)
    contract = Contract.objects.get(name="retail.sales.orders")
    for binding in list(contract.bindings.select_related("dataset")):
        contract.unbind(binding.dataset, by=owner)  # the warehouse table is the one under test
    contract.bind(table, by=owner)
    DatasetFreshness.objects.create(dataset=table, max_age=timedelta(hours=1))
    path = tmp_path / "retail.sales.orders-1.0.odcs.yaml"
    path.write_text(odcs_yaml(contract.versions.get(version="1.0")))
    server_id = f"{name}.public.orders".replace(".", "-")
    return path, server_id, server, name


def cli_test(cli, exported, tmp_path) -> dict:
    path, server_id, server, _ = exported
    output = tmp_path / "result.json"
    result = run(cli, "test", str(path), "--server", server_id, "--output-format", "json", "--output", str(output),
                 env={"DATACONTRACT_POSTGRES_USERNAME": server["user"],
                      # trust authentication ignores it, but the CLI wants one
                      "DATACONTRACT_POSTGRES_PASSWORD": os.environ.get("PGPASSWORD", "unused")})
    report = json.loads(output.read_text())
    report["returncode"], report["stdout"] = result.returncode, result.stdout + result.stderr
    return report


def test_the_cli_tests_the_exported_contract_against_a_real_table(datacontract_cli, exported_orders, tmp_path):
    report = cli_test(datacontract_cli, exported_orders, tmp_path)
    failed = [(c["name"], c.get("reason")) for c in report["checks"] if c["result"] != "passed"]
    assert report["result"] == "passed" and report["returncode"] == 0, f"{failed}\n{report['stdout']}"
    names = {c["name"] for c in report["checks"]}
    # the freshness SLO, measured from the column the integration spec dates rows by
    assert "Freshness of orders.ordered_at < 1h" in names
    assert "Check that field order_id matches regex pattern ^ORD-[0-9]{8}$" in names
    assert "Check that field status has invalid_count = 0" in names
    assert len(report["checks"]) >= 30


def test_the_cli_fails_a_table_that_breaks_the_contract(datacontract_cli, exported_orders, tmp_path):
    _, _, server, name = exported_orders
    with psycopg.connect(dbname=name, autocommit=True, **server) as db:
        db.execute("UPDATE public.orders SET ordered_at = ordered_at - interval '3 hours'")
        db.execute("""INSERT INTO public.orders VALUES
            ('ORD-1', 'cust-9', (now() AT TIME ZONE 'utc') - interval '4 hours', 'lost', 'EUR', -1, 0, NULL)""")
    report = cli_test(datacontract_cli, exported_orders, tmp_path)
    failed = {c["name"] for c in report["checks"] if c["result"] == "failed"}
    assert report["result"] == "failed" and report["returncode"] != 0
    assert {"Freshness of orders.ordered_at < 1h", "Check that field status has invalid_count = 0",
            "Check that field order_id matches regex pattern ^ORD-[0-9]{8}$",
            "Check that field total_amount has a minimum of 0"} <= failed
