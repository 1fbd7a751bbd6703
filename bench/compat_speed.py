"""How long the compatibility checker takes, and how long its witness search adds.

    .venv/bin/python bench/compat_speed.py [--repeat 5]

1. the checker alone (`compare`) on every corpus case: median and 99th percentile per case,
   and the whole corpus;
2. a 500-column dataframe contract (three checks a column) against a version with one column
   narrowed, one widened and one added: `compare` alone, and the gate's `check_compatibility`
   with the witness search switched off (both without the time budget, so a loaded machine
   measures the work rather than where the budget cuts it);
3. the witness search on the corpus cases that break a direction (mode FULL, default budget):
   the time it adds per case (bounded by its budget, 0.3 s), and how many breaking changes it
   proves.

The last line is JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from registry_client.compat import DEFAULT_WITNESS_BUDGET, check_compatibility, compare  # noqa: E402

from tests.compat.corpus import load_cases  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def wide_frames() -> tuple[dict, dict]:
    old = {
        "schema": {"name": "bench.wide.table", "version": "1.0", "schema_type": "dataframe"},
        "config": {"strict": "filter", "coerce": True},
        "columns": [{"name": f"c{i}", "dtype": "float64", "nullable": True, "checks": [{"ge": 0}, {"le": 100}, {"ne": 50}]}
                    for i in range(500)],
    }
    new = copy.deepcopy(old)
    new["schema"]["version"] = "2.0"
    new["columns"][10]["checks"][0] = {"ge": 5}       # narrowed
    new["columns"][20]["checks"][1] = {"le": 200}     # widened
    new["columns"].append({"name": "c500", "dtype": "str", "required": False})
    return old, new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    cases = load_cases()

    per_case = []
    for case in cases:
        per_case.append(min(timed(lambda c=case: compare(c.old, c.new, budget=0), args.repeat)))
    per_case.sort()
    corpus_total = sum(per_case)

    old, new = wide_frames()
    # unbounded (budget=0): the time the checker needs, not where a loaded machine's budget cuts it
    wide_compare = timed(lambda: compare(old, new, budget=0), args.repeat)
    wide_gate = timed(lambda: check_compatibility([old], new, "FULL", budget=0, witness_budget=0), args.repeat)
    wide_with_witness = timed(lambda: check_compatibility([old], new, "FULL", budget=0), 1)
    wide_report = check_compatibility([old], new, "FULL", budget=0)

    added, proven, assumed = [], 0, 0
    for case in cases:
        if not (case.breaks_backward or case.breaks_forward):
            continue
        bare = min(timed(lambda c=case: check_compatibility([c.old], c.new, "FULL", witness_budget=0), 2))
        start = time.perf_counter()
        report = check_compatibility([case.old], case.new, "FULL")
        added.append(max(0.0, time.perf_counter() - start - bare))
        proven += sum(c.proof == "proven" for c in report.changes)
        assumed += sum(c.proof == "assumed" for c in report.changes)
    added.sort()

    def ms(x: float) -> float:
        return round(x * 1000, 3)

    figures = {
        "machine": f"{os.cpu_count()} cores",
        "cases": len(cases),
        "compare_ms_median": ms(statistics.median(per_case)),
        "compare_ms_p99": ms(per_case[int(0.99 * (len(per_case) - 1))]),
        "compare_ms_max": ms(per_case[-1]),
        "corpus_compare_s": round(corpus_total, 3),
        "wide_500_columns_compare_ms_median": ms(statistics.median(wide_compare)),
        "wide_500_columns_gate_ms_median": ms(statistics.median(wide_gate)),
        "wide_500_columns_gate_with_witness_ms": ms(wide_with_witness[0]),
        "wide_500_columns_breaking_proven": sum(c.proof == "proven" for c in wide_report.changes),
        "wide_500_columns_breaking_assumed": sum(c.proof == "assumed" for c in wide_report.changes),
        "witness_budget_s": DEFAULT_WITNESS_BUDGET,
        "witness_cases": len(added),
        "witness_added_ms_median": ms(statistics.median(added)),
        "witness_added_ms_max": ms(added[-1]),
        "breaking_changes_proven": proven,
        "breaking_changes_assumed": assumed,
    }
    print(f"checker alone, {len(cases)} corpus cases: median {figures['compare_ms_median']} ms, "
          f"p99 {figures['compare_ms_p99']} ms, max {figures['compare_ms_max']} ms, whole corpus {figures['corpus_compare_s']} s")
    print(f"500-column dataframe contract: compare {figures['wide_500_columns_compare_ms_median']} ms, "
          f"gate without witnesses {figures['wide_500_columns_gate_ms_median']} ms, "
          f"with the witness search {figures['wide_500_columns_gate_with_witness_ms']} ms "
          f"({figures['wide_500_columns_breaking_proven']} proven, {figures['wide_500_columns_breaking_assumed']} assumed)")
    print(f"witness search on {len(added)} breaking cases (FULL, budget {DEFAULT_WITNESS_BUDGET} s): adds median "
          f"{figures['witness_added_ms_median']} ms, max {figures['witness_added_ms_max']} ms; "
          f"breaking changes proven {proven}, assumed {assumed}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
