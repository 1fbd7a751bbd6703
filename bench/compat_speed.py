"""How long the compatibility checker takes, how long its witness search adds, and whether its
verdicts depend on the machine's load.

    .venv/bin/python bench/compat_speed.py [--repeat 5] [--generated 50] [--smoke]

1. the checker alone (`compare`) on every corpus case: median and 99th percentile per case,
   and the whole corpus;
2. a 500-column dataframe contract (three checks a column) against a version with one column
   narrowed, one widened and one added: `compare` alone, and the gate's `check_compatibility`
   with the witness search switched off (both without the time budget, so a loaded machine
   measures the work rather than where the budget cuts it);
3. the witness search on the corpus cases that break a direction (mode FULL, default budget):
   the time it adds per case (bounded by its budget in steps), and how many breaking changes it
   proves;
4. the gate's whole check (FULL, default budgets in steps) of every corpus case and of a
   generated set of schemas of 20-200 KB with wide `$ref` graphs (tests/compat/wide_schemas.py):
   CPU per pair (p50 / p99 / max), steps spent, peak memory of the process, and the number of
   verdicts that differ between a run alone and a run beside two CPU-bound processes.

`--smoke` runs a small slice of everything in a few seconds (for CI). The last line is JSON.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from registry_client.compat import (  # noqa: E402
    DEFAULT_BUDGET,
    DEFAULT_WITNESS_BUDGET,
    check_compatibility,
    compare,
)

from tests.compat.corpus import load_cases  # noqa: E402
from tests.compat.wide_schemas import wide_pair  # noqa: E402

# Shapes of the generated set: (width, depth, refs per object, enum size), cycled over the seeds.
SHAPES = ((10, 3, 4, 30), (15, 2, 8, 30), (6, 6, 2, 10), (12, 3, 4, 400), (30, 1, 20, 5))


def generated_pairs(count: int, low_kb: int = 20, high_kb: int = 200) -> list[tuple[str, dict, dict]]:
    out = []
    for i in range(count):
        size = low_kb + (high_kb - low_kb) * i // max(count - 1, 1)
        width, depth, refs, enum_size = SHAPES[i % len(SHAPES)]
        old, new = wide_pair(1000 + i, size, width=width, depth=depth, refs_per_object=refs, enum_size=enum_size)
        out.append((f"generated-{i}-{size}kb", old, new))
    return out


def verdict_key(report) -> str:
    """Everything a verdict says, as one digest."""
    body = json.dumps([report.compatible, report.verdict, [(c.path, c.kind, c.breaks_backward, c.breaks_forward,
                                                           c.reason, c.proof, c.witness) for c in report.changes]],
                      sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def gate_run(pairs: list) -> tuple[list[float], list[str], list[dict]]:
    cpu, keys, work = [], [], []
    for _, old, new in pairs:
        start = time.process_time()
        report = check_compatibility([old], new, "FULL")
        cpu.append(time.process_time() - start)
        keys.append(verdict_key(report))
        work.append(report.work)
    return cpu, keys, work


def beside_busy_processes(fn, count: int = 2):
    """Run fn() while `count` CPU-bound processes compete for the cores."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        return fn()
    finally:
        for p in burners:
            p.terminate()
        for p in burners:
            p.wait()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


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
    parser.add_argument("--generated", type=int, default=50, help="generated schemas of 20-200 KB (default 50)")
    parser.add_argument("--smoke", action="store_true", help="a small slice of everything, for CI")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    cases = load_cases()
    if args.smoke:
        cases, args.repeat, args.generated = cases[::40], 1, 3

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

    # 4. the whole gate on every pair, alone and beside two CPU-bound processes
    print(f"generating {args.generated} schemas of 20-200 KB ...", file=sys.stderr)
    generated = generated_pairs(args.generated, 20, 60 if args.smoke else 200)
    pairs = [(case.id, case.old, case.new) for case in cases] + generated
    print(f"gate over {len(pairs)} pairs, alone ...", file=sys.stderr)
    cpu_alone, keys_alone, work = gate_run(pairs)
    print("... and beside two CPU-bound processes", file=sys.stderr)
    cpu_busy, keys_busy, _ = beside_busy_processes(lambda: gate_run(pairs))
    differ = [name for (name, _, _), a, b in zip(pairs, keys_alone, keys_busy, strict=True) if a != b]
    gen_cpu = cpu_alone[len(cases):]
    slowest = max(range(len(pairs)), key=lambda i: cpu_alone[i])

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
        "witness_cases": len(added),
        "witness_added_ms_median": ms(statistics.median(added)),
        "witness_added_ms_max": ms(added[-1]),
        "breaking_changes_proven": proven,
        "breaking_changes_assumed": assumed,
        "compare_budget_steps": DEFAULT_BUDGET,
        "witness_budget_steps": DEFAULT_WITNESS_BUDGET,
        "gate_pairs": len(pairs),
        "generated_pairs": len(generated),
        "gate_cpu_ms_p50": ms(percentile(cpu_alone, 0.5)),
        "gate_cpu_ms_p99": ms(percentile(cpu_alone, 0.99)),
        "gate_cpu_ms_max": ms(max(cpu_alone)),
        "gate_cpu_max_pair": pairs[slowest][0],
        "generated_cpu_ms_p50": ms(percentile(gen_cpu, 0.5)) if gen_cpu else None,
        "generated_cpu_ms_max": ms(max(gen_cpu)) if gen_cpu else None,
        "gate_cpu_ms_max_beside_load": ms(max(cpu_busy)),
        "pairs_out_of_compare_steps": sum(w["compare_budget"] is not None and w["compare_steps"] > w["compare_budget"]
                                          for w in work),
        "pairs_out_of_witness_steps": sum(w["witness_stopped_by"] == "steps" for w in work),
        "compare_steps_max": max(w["compare_steps"] for w in work),
        "witness_steps_max": max(w["witness_steps"] for w in work),
        "verdicts_differing_under_load": len(differ),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(f"checker alone, {len(cases)} corpus cases: median {figures['compare_ms_median']} ms, "
          f"p99 {figures['compare_ms_p99']} ms, max {figures['compare_ms_max']} ms, whole corpus {figures['corpus_compare_s']} s")
    print(f"500-column dataframe contract: compare {figures['wide_500_columns_compare_ms_median']} ms, "
          f"gate without witnesses {figures['wide_500_columns_gate_ms_median']} ms, "
          f"with the witness search {figures['wide_500_columns_gate_with_witness_ms']} ms "
          f"({figures['wide_500_columns_breaking_proven']} proven, {figures['wide_500_columns_breaking_assumed']} assumed)")
    print(f"witness search on {len(added)} breaking cases (FULL, budget {DEFAULT_WITNESS_BUDGET} steps): adds median "
          f"{figures['witness_added_ms_median']} ms, max {figures['witness_added_ms_max']} ms; "
          f"breaking changes proven {proven}, assumed {assumed}")
    print(f"gate (FULL, budgets {DEFAULT_BUDGET} / {DEFAULT_WITNESS_BUDGET} steps) over {len(pairs)} pairs "
          f"({len(generated)} generated, 20-200 KB): CPU p50 {figures['gate_cpu_ms_p50']} ms, "
          f"p99 {figures['gate_cpu_ms_p99']} ms, max {figures['gate_cpu_ms_max']} ms ({figures['gate_cpu_max_pair']}); "
          f"verdicts differing beside two CPU-bound processes: {len(differ)} {differ[:5]}; "
          f"peak memory {figures['peak_rss_mb']} MB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
