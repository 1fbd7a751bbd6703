"""Export and gate costs for contracts as code.

Measures, on a scratch copy of the demo contracts root:
- a full `export_contracts --check` pass (import every schema.py, build, gate, compare),
- `validate_contracts` over every document (templates, dtype gate, location),
- the gates on one wide dataframe document (500 columns, 3 checks each),
- canonicalize_dtype over mixed author-side spellings.

Run: .venv/bin/python bench/contracts_export.py [--smoke]   (prints figures, the JSON line last;
`--smoke` times each step once, for CI)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "client")]

from registry_client.dtypes import canonicalize_dtype  # noqa: E402

from contracts_app.exporting import export_tree  # noqa: E402
from contracts_app.gates import load_templates, validate_document, validate_tree  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="each step once, for CI")
    args = parser.parse_args()
    repeat = 1 if args.smoke else 5
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "contracts"
        shutil.copytree(REPO / "fixtures" / "contracts", root, ignore=shutil.ignore_patterns("__pycache__"))
        contracts = len(list(root.glob("domains/**/schema.py")))
        documents = len(list(root.glob("domains/**/schema.yaml")))

        load_templates()
        first = timed(lambda: export_tree(root, check=True), 1)[0]
        export = timed(lambda: export_tree(root, check=True), repeat)
        validate = timed(lambda: validate_tree(root), repeat)

    wide = {
        "schema": {"name": "bench.wide.table", "domain": "bench", "subdomains": ["wide"], "entity": "table",
                   "version": "1.0", "owner": "bench", "schema_type": "dataframe", "description": None},
        "config": {"strict": "filter", "coerce": True},
        "columns": [
            {"name": f"c{i}", "dtype": "float64", "nullable": True, "coerce": False, "required": True,
             "unique": False, "checks": [{"ge": 0}, {"le": 100}, {"ne": 50}]}
            for i in range(500)
        ],
    }
    assert validate_document(wide) == []
    gate_wide = timed(lambda: validate_document(wide), 4 * repeat)

    spellings = ["double", float, "int", "timestamp", "List[float]", "string[pyarrow]", "Int64", "bool"] * 1250
    dtype_time = timed(lambda: [canonicalize_dtype(s) for s in spellings], repeat)

    figures = {
        "machine": f"{os.cpu_count()} cores",
        "demo_contracts": contracts,
        "demo_documents": documents,
        "export_check_first_pass_ms": round(first * 1000, 1),
        "export_check_pass_ms_median": round(statistics.median(export) * 1000, 1),
        "export_ms_per_contract": round(statistics.median(export) * 1000 / contracts, 2),
        "validate_tree_ms_median": round(statistics.median(validate) * 1000, 1),
        "validate_ms_per_document": round(statistics.median(validate) * 1000 / documents, 2),
        "gate_500_column_document_ms_median": round(statistics.median(gate_wide) * 1000, 2),
        "canonicalize_dtype_us_per_call": round(statistics.median(dtype_time) * 1e6 / len(spellings), 2),
    }
    for key, value in figures.items():
        print(f"{key:40s} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
