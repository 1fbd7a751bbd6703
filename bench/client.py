"""Client benchmark: validating one 1,000,000-row frame with a model rebuilt from
published YAML versus the authored class, and get_pandera_model latencies.

    .venv/bin/python bench/client.py [--rows 1000000] [--repeats 5] [--smoke]

Runs without Django or a database. The contract is an authored class (8
columns, checks on most) exported to a document with the project's exporter
conventions, written to a local store, and rebuilt through the Registry. The
two validations alternate, so machine noise hits both alike; the ratio is of
medians. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "client"))  # this checkout's client, not an installed copy

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pandera.pandas as pa  # noqa: E402
import yaml  # noqa: E402
from pandas import Timestamp  # noqa: E402
from registry_client import Registry  # noqa: E402
from registry_client.backends import LocalBackend  # noqa: E402


class AuthoredOrders(pa.DataFrameModel):
    order_id: str = pa.Field(unique=True, str_startswith="ORD-")
    customer_id: str = pa.Field(str_length={"min_value": 1, "max_value": 36})
    ordered_at: Timestamp = pa.Field()
    status: str = pa.Field(isin=["placed", "paid", "shipped", "delivered", "cancelled"])
    currency: str = pa.Field(isin=["EUR", "GBP", "USD"])
    total_amount: float = pa.Field(ge=0, le=1_000_000)
    item_count: np.int32 = pa.Field(gt=0, lt=10_000)
    discount: float = pa.Field(nullable=True, ge=0, le=1)

    class Config:
        strict = "filter"
        coerce = True


DOCUMENT = {
    "schema": {"name": "retail.sales.bench_orders", "domain": "retail", "subdomains": ["sales"], "entity": "bench_orders",
               "version": "1.0", "owner": "checkout", "schema_type": "dataframe", "description": "Benchmark orders."},
    "meta": {"tier": "silver"},
    "config": {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None,
               "add_missing_columns": False, "unique_column_names": False},
    "columns": [
        {"name": "order_id", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": True,
         "checks": [{"str_startswith": "ORD-"}]},
        {"name": "customer_id", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": False,
         "checks": [{"str_length": {"min_value": 1, "max_value": 36}}]},
        {"name": "ordered_at", "dtype": "datetime64[ns]", "nullable": False, "coerce": True, "required": True,
         "unique": False, "checks": []},
        {"name": "status", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": False,
         "checks": [{"isin": ["placed", "paid", "shipped", "delivered", "cancelled"]}]},
        {"name": "currency", "dtype": "str", "nullable": False, "coerce": True, "required": True, "unique": False,
         "checks": [{"isin": ["EUR", "GBP", "USD"]}]},
        {"name": "total_amount", "dtype": "float64", "nullable": False, "coerce": True, "required": True,
         "unique": False, "checks": [{"ge": 0}, {"le": 1_000_000}]},
        {"name": "item_count", "dtype": "int32", "nullable": False, "coerce": True, "required": True, "unique": False,
         "checks": [{"gt": 0}, {"lt": 10_000}]},
        {"name": "discount", "dtype": "float64", "nullable": True, "coerce": True, "required": True, "unique": False,
         "checks": [{"ge": 0}, {"le": 1}]},
    ],
}


def make_frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(42)
    discount = rng.random(rows)
    discount[rng.random(rows) < 0.1] = np.nan
    return pd.DataFrame({
        "order_id": [f"ORD-{i:08d}" for i in range(rows)],
        "customer_id": rng.integers(1, 50_000, rows).astype(str),
        "ordered_at": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 86_400 * 365, rows), unit="s"),
        "status": rng.choice(["placed", "paid", "shipped", "delivered", "cancelled"], rows),
        "currency": rng.choice(["EUR", "GBP", "USD"], rows),
        "total_amount": rng.random(rows) * 1000,
        "item_count": rng.integers(1, 20, rows),
        "discount": discount,
        "extra_column": 1,
    })


def write_store(root: Path) -> None:
    key = "contracts/domains/retail/sales/bench_orders/v1_0/schema.yaml"
    (root / key).parent.mkdir(parents=True)
    (root / key).write_text(yaml.safe_dump(DOCUMENT, sort_keys=False))
    (root / "contracts/index").mkdir(parents=True)
    (root / "contracts/index/schema_index.csv").write_text(
        f"name,key,version,date,schema_type\nretail.sales.bench_orders,{key},1.0,2026-01-01,dataframe\n")


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="10,000 rows, 1 repeat: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.repeats = 10_000, 1

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_store(root)
        registry = Registry(LocalBackend(root))
        cold = timed(lambda: registry.get_pandera_model("retail.sales.bench_orders", "latest"))
        warm_samples = [timed(lambda: registry.get_pandera_model("retail.sales.bench_orders", "latest")) for _ in range(1000)]
        rebuilt = registry.get_pandera_model("retail.sales.bench_orders", "latest")

        print(f"building a {args.rows:,}-row frame ({len(DOCUMENT['columns'])} contract columns + 1 extra)…", flush=True)
        frame = make_frame(args.rows)
        # Same outputs first: the comparison is only fair if both do the same work.
        pd.testing.assert_frame_equal(rebuilt.validate(frame.head(10_000)), AuthoredOrders.validate(frame.head(10_000)))

        rebuilt_s, authored_s = [], []
        for repeat in range(args.repeats):
            rebuilt_s.append(timed(lambda: rebuilt.validate(frame)))
            authored_s.append(timed(lambda: AuthoredOrders.validate(frame)))
            print(f"  repeat {repeat + 1}/{args.repeats}: rebuilt {rebuilt_s[-1]:.3f}s, authored {authored_s[-1]:.3f}s", flush=True)

    result = {
        "rows": args.rows,
        "columns": len(DOCUMENT["columns"]),
        "repeats": args.repeats,
        "rebuilt_validate_s": round(statistics.median(rebuilt_s), 4),
        "authored_validate_s": round(statistics.median(authored_s), 4),
        "ratio": round(statistics.median(rebuilt_s) / statistics.median(authored_s), 4),
        "get_pandera_model_cold_ms": round(cold * 1000, 3),
        "get_pandera_model_warm_ms": round(statistics.median(warm_samples) * 1000, 5),
        "get_pandera_model_warm_p99_ms": round(sorted(warm_samples)[int(len(warm_samples) * 0.99)] * 1000, 5),
    }
    print(f"rebuilt {result['rebuilt_validate_s']}s vs authored {result['authored_validate_s']}s "
          f"(ratio {result['ratio']}); get_pandera_model cold {result['get_pandera_model_cold_ms']} ms, "
          f"warm {result['get_pandera_model_warm_ms']} ms")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
