"""Measure the compatibility checker against the labelled corpus, and prove the labels.

    .venv/bin/python bench/compat_oracle.py [--examples 20] [--max-probes 6000] [--workers 1] [--smoke]

For every case in tests/compat_cases/ it
1. runs the checker and counts false negatives (a labelled break reported safe in
   that direction, which would pass it under every mode that checks the direction)
   and false alarms (a direction reported breaking that the label calls safe);
2. runs the probe oracle (tests/compat/oracle.py) WITHOUT the hand-written
   counterexamples: hypothesis-jsonschema draws from both versions, targeted boundary
   values and mutations, each judged by the real `jsonschema` validator;
3. where generated probes do not show a break the label claims, checks the case's
   hand-written counterexample instead.

An oracle disagreement is a break found in a direction the label calls safe, or a
claimed break that neither the probes nor a hand-written counterexample show.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from registry_client.compat import compare  # noqa: E402

from tests.compat.corpus import load_cases  # noqa: E402
from tests.compat.oracle import judge  # noqa: E402


def one(args):
    case, examples, max_probes = args
    warnings.filterwarnings("ignore")
    changes = compare(case.old, case.new)
    reported_b = any(c.breaks_backward for c in changes)
    reported_f = any(c.breaks_forward for c in changes)
    verdict = judge(case, examples=examples, max_probes=max_probes, use_counterexamples=False)
    # a reported direction no general probe shows is probed again, aimed at the reported changes'
    # places, as the report's witness search does (still no hand-written counterexample)
    aimed = None
    if (reported_b and not verdict.found_backward) or (reported_f and not verdict.found_forward):
        aim = tuple(c.path for c in changes if c.breaks_backward or c.breaks_forward)
        aimed = judge(case, examples=0, max_probes=max_probes, use_counterexamples=False, aim_at=aim)
    by_hand = {d: (claimed and not found and verdict.proved_by_hand(d))
               for d, claimed, found in (("backward", case.breaks_backward, verdict.found_backward),
                                         ("forward", case.breaks_forward, verdict.found_forward))}
    return {
        "id": case.id,
        "false_negative": (case.breaks_backward and not reported_b) or (case.breaks_forward and not reported_f),
        "false_alarm_backward": reported_b and not case.breaks_backward,
        "false_alarm_forward": reported_f and not case.breaks_forward,
        # a direction reported breaking that no generated probe shows (no label needed)
        "unproven_alarm_backward": reported_b and not verdict.found_backward and not (aimed and aimed.found_backward),
        "unproven_alarm_forward": reported_f and not verdict.found_forward and not (aimed and aimed.found_forward),
        "proved_by_aiming": int(bool(aimed and reported_b and not verdict.found_backward and aimed.found_backward))
        + int(bool(aimed and reported_f and not verdict.found_forward and aimed.found_forward)),
        "disagreements": verdict.disagreements(),
        "probes": verdict.probes,
        "claims": int(case.breaks_backward) + int(case.breaks_forward),
        "proved_by_probes": int(case.breaks_backward and verdict.found_backward) + int(case.breaks_forward and verdict.found_forward),
        "proved_by_hand_only": sum(by_hand.values()),
        "hypothesis": bool(verdict.generated_from),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20, help="hypothesis-jsonschema draws per schema")
    parser.add_argument("--max-probes", type=int, default=6000, help="probe documents per case at most")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="the first 10 cases, small budgets, for CI")
    args = parser.parse_args()
    cases = load_cases()
    if args.smoke:
        cases, args.examples, args.max_probes = cases[:10], 2, 200
    started = time.perf_counter()
    results = []
    jobs = [(case, args.examples, args.max_probes) for case in cases]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            iterator = pool.map(one, jobs, chunksize=4)
            for i, r in enumerate(iterator, 1):
                results.append(r)
                if i % 50 == 0:
                    print(f"  {i}/{len(cases)} cases, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    else:
        for i, job in enumerate(jobs, 1):
            results.append(one(job))
            if i % 50 == 0:
                print(f"  {i}/{len(cases)} cases, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    def ids(key):
        return [r["id"] for r in results if r[key]]

    disagreements = [d for r in results for d in r["disagreements"]]
    summary = {
        "cases": len(cases),
        "false_negatives": len(ids("false_negative")),
        "false_alarms_backward": len(ids("false_alarm_backward")),
        "false_alarms_forward": len(ids("false_alarm_forward")),
        "unproven_alarms": len(ids("unproven_alarm_backward")) + len(ids("unproven_alarm_forward")),
        "oracle_disagreements": len(disagreements),
        "probes": sum(r["probes"] for r in results),
    }
    claims = sum(r["claims"] for r in results)
    print(f"machine: {os.cpu_count()} cores; budget: {args.examples} hypothesis draws per schema, "
          f"at most {args.max_probes} probes per case; {elapsed:.0f} s")
    print(f"cases: {len(cases)}; hypothesis-jsonschema could draw for {sum(r['hypothesis'] for r in results)} of them")
    print(f"claimed breaks: {claims}; proved by generated probes: {sum(r['proved_by_probes'] for r in results)}; "
          f"by a hand-written counterexample only: {sum(r['proved_by_hand_only'] for r in results)}")
    print(f"false negatives: {summary['false_negatives']} {ids('false_negative')}")
    for direction in ("backward", "forward"):
        found = ids(f"false_alarm_{direction}")
        print(f"false alarms {direction}: {len(found)} ({100 * len(found) / len(cases):.2f}%) {found}")
    unproven = ids("unproven_alarm_backward") + ids("unproven_alarm_forward")
    print(f"reported breaks the general probes missed and aimed probes showed: {sum(r['proved_by_aiming'] for r in results)}")
    print(f"unproven alarms (reported breaking, no generated probe shows it, aimed or not): {len(unproven)} "
          f"({100 * len(unproven) / (2 * len(cases)):.2f}% of directions) {sorted(unproven)}")
    for d in disagreements:
        print("disagreement:", d)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
