"""The checker's budgets are counted in steps, not seconds.

The same pair gets the same verdict however slow the clock runs; the witness search builds its
documents one at a time and nothing past its budget (nothing at all with a budget of 0); a
change a budget decided says so in every output; and the steps a pair costs grow at most
linearly with the size of its schemas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from io import StringIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_client.compat import budget, check_compatibility, cli, probes, witness
from registry_client.compat.budget import DEFAULT_WITNESS_BUDGET, GUARD_EVERY, Meter
from registry_client.compat.engine import compare
from registry_client.compat.probes import MAX_NODES

from .corpus import load_cases
from .test_engine import _deep_alternatives
from .wide_schemas import size_of, wide_pair

ROOT = Path(__file__).resolve().parents[2]


def _verdict(report) -> tuple:
    return (report.compatible, report.verdict,
            [(c.path, c.kind, c.breaks_backward, c.breaks_forward, c.reason, c.proof, json.dumps(c.witness))
             for c in report.changes],
            report.work["compare_steps"], report.work["witness_steps"])


def _pairs() -> list[tuple]:
    cases = load_cases()
    breaking = [c for c in cases if c.breaks_backward or c.breaks_forward][::40]
    safe = [c for c in cases if not (c.breaks_backward or c.breaks_forward)][::60]
    return ([(c.old, c.new) for c in breaking + safe]
            + [wide_pair(1, 27, width=15, refs_per_object=8),
               (_deep_alternatives(8, "integer"), _deep_alternatives(8, "number"))])


class SlowClock:
    """Time as a machine a hundred times slower (or busier) would see it: every reading of the
    clock finds `step` seconds gone."""

    def __init__(self, step: float):
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


# ----------------------------------------------------------------- a verdict is a function of the pair

def test_the_verdict_is_the_same_when_the_clock_runs_a_hundred_times_slower(monkeypatch):
    pairs = _pairs()
    quiet = [_verdict(check_compatibility([old], new, "FULL")) for old, new in pairs]
    # The old 0.5 s budget would have ended after ten readings of this clock; steps do not read it.
    monkeypatch.setattr(budget, "clock", SlowClock(0.05))
    busy = [_verdict(check_compatibility([old], new, "FULL")) for old, new in pairs]
    assert busy == quiet
    assert any(kind == "budget_exceeded" for v in quiet for _, kind, *_ in v[2])  # the deep pair ran out of steps


def test_the_verdict_does_not_depend_on_the_process_hash_seed():
    # Sets of names iterate in a per-process order; a budget must cut the work at the same place anyway.
    script = (
        "import json, sys\n"
        "from tests.compat.wide_schemas import wide_pair\n"
        "from registry_client.compat import check_compatibility\n"
        "old, new = wide_pair(4, 30, width=12, refs_per_object=6)\n"
        "r = check_compatibility([old], new, 'FULL', budget=1500, witness_budget=20000)\n"
        "print(json.dumps([r.compatible, r.work['compare_steps'], r.work['witness_steps'],"
        " [(c.path, c.kind, c.reason, c.proof) for c in r.changes]]))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}"}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert any(kind == "budget_exceeded" for _, kind, _, _ in outputs[0][3])


def test_the_time_guard_is_a_last_resort_and_is_reported_as_such(monkeypatch):
    monkeypatch.setattr(budget, "clock", SlowClock(1000.0))  # every reading finds the guard long past
    old, new = _deep_alternatives(8, "integer"), _deep_alternatives(8, "number")
    report = check_compatibility([old], new, "FULL")
    guarded = [c for c in report.changes if c.kind == "time_guard_exceeded"]
    assert guarded and all(c.breaks_backward and c.breaks_forward for c in guarded)
    assert "not decided before the time guard (60 s, a last resort far above the step budget)" in guarded[0].reason
    assert not report.compatible and report.to_dict()["counts"]["decided_by_budget"] >= 1
    # the guard is read once per GUARD_EVERY steps, so it stops the work right after its first reading
    assert report.work["compare_steps"] <= GUARD_EVERY + 1
    assert report.work["witness_stopped_by"] == "time guard"


def test_a_budget_set_in_seconds_is_ignored_with_a_warning_and_the_default_applies(monkeypatch, caplog):
    monkeypatch.setenv("REGISTRY_COMPAT_BUDGET", "0.5")  # the old setting, in seconds
    assert budget.compare_steps() == budget.DEFAULT_BUDGET
    assert "is not a number of steps" in caplog.text
    monkeypatch.setenv("REGISTRY_COMPAT_BUDGET", "none")
    assert budget.compare_steps() is None
    monkeypatch.setenv("REGISTRY_COMPAT_WITNESS_BUDGET", "5000")
    monkeypatch.setenv("REGISTRY_COMPAT_TIME_GUARD", "0")
    assert (budget.witness_steps(), budget.time_guard()) == (5000, None)


# ----------------------------------------------------------------- the witness search: lazy and bounded

@pytest.fixture
def built(monkeypatch) -> list:
    """Every document the generator starts building (one entry per top-level `build`)."""
    calls: list = []
    original = probes.build

    def counting(schema, root=None, full=False, depth=0, cap=None):
        if depth == 0:
            calls.append(schema)
        return original(schema, root, full, depth, cap)

    monkeypatch.setattr(probes, "build", counting)
    return calls


def test_a_witness_budget_of_zero_builds_nothing(built, monkeypatch):
    judged = []
    monkeypatch.setattr(witness, "_validator", lambda schema: judged.append(schema))
    old, new = wide_pair(1, 27, width=15, refs_per_object=8)
    report = check_compatibility([old], new, "FULL", witness_budget=0)
    assert built == [] and judged == []
    assert report.work["witness_steps"] == 0
    assert {c.proof for c in report.changes if c.breaking} <= {"assumed", "undecided"}


def test_the_witness_search_builds_its_documents_one_at_a_time(built):
    old, new = wide_pair(1, 27, width=15, refs_per_object=8)
    # A change at the top: its place is the whole schema, whose every declared property names
    # further definitions. The first document costs at most a few documents' worth of steps.
    meter = Meter(None)
    aimed = probes.directed_documents(old, new, ["/required"], meter=meter)
    path, first = next(aimed)
    assert path == "/required" and len(built) == 1
    assert size_of(first) <= MAX_NODES and meter.steps <= 3 * MAX_NODES
    for _ in range(20):
        next(aimed)
    # two shapes of each version were built; the rest are values and variations, made one at a time
    assert len(built) <= 4
    assert meter.steps <= 2 * size_of(old, new) + 21 * 3 * MAX_NODES


def test_the_witness_search_stops_within_its_budget_on_a_wide_reference_graph():
    old, new = wide_pair(1, 27, width=15, refs_per_object=8)
    report = check_compatibility([old], new, "FULL", witness_budget=0)
    meter = Meter(5000)
    witness.attach_witnesses(old, new, report.changes, meter)
    # what one document costs (a copy, its text, a judgement under each version) is the most it overshoots
    assert meter.steps <= 5000 + 4 * MAX_NODES
    assert meter.stopped_by == "steps"


def test_the_whole_check_of_a_wide_reference_graph_holds_little_memory():
    old, new = wide_pair(1, 27, width=15, refs_per_object=8)
    tracemalloc.start()
    try:
        report = check_compatibility([old], new, "FULL")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not report.compatible
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MB"


# ----------------------------------------------------------------- the budget's reason in every output

@pytest.fixture
def deep_files(tmp_path) -> tuple[str, str]:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(_deep_alternatives(6, "integer")))
    new.write_text(json.dumps(_deep_alternatives(6, "number")))
    return str(old), str(new)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_change_decided_by_the_budget_says_so_in_every_format(deep_files, fmt):
    out = StringIO()
    code = cli.run(*deep_files, "FULL", fmt, stdout=out, stderr=StringIO(), budget=300, witness_budget=0)
    assert code == cli.EXIT_BREAKING
    text = out.getvalue()
    assert "not decided within 300 steps: treated as breaking both ways" in text
    if fmt == "json":
        payload = json.loads(text)
        assert payload["counts"]["decided_by_budget"] >= 1
        assert payload["work"]["compare_budget"] == 300 and payload["work"]["compare_steps"] > 300
        assert any(c["decided_by_budget"] for c in payload["changes"])
    elif fmt == "markdown":
        assert "#### Decided by a budget" in text and "#### Proven breaks" not in text
    else:
        assert "decided by a budget, not by the schemas" in text
        assert "work: compare" in text and "of 300 steps" in text


def test_a_budget_given_in_seconds_on_the_command_line_is_refused(deep_files, capsys):
    with pytest.raises(SystemExit):
        cli.main([*deep_files, "--budget", "0.5"])
    assert "'0.5' is not a number of steps" in capsys.readouterr().err


# ----------------------------------------------------------------- work grows linearly with the schemas

def _compare_steps(old, new) -> int:
    meter = Meter(None)  # unbounded: the work the pair needs, not where a budget cuts it
    compare(old, new, meter=meter)
    return meter.steps


def test_a_chain_of_definitions_costs_steps_linear_in_its_length():
    def chain(k: int, leaf: str) -> dict:
        defs = {f"D{i}": {"type": "object", "properties": {"x": {"type": "string"}, "next": {"$ref": f"#/$defs/D{i + 1}"}}}
                for i in range(k)}
        defs[f"D{k}"] = {"type": leaf}
        return {"$defs": defs, "$ref": "#/$defs/D0"}

    # a change at the end of the chain moves every pair above it, one after the other
    for k in (20, 80, 320):
        old, new = chain(k, "integer"), chain(k, "number")
        assert _compare_steps(old, new) <= size_of(old, new)


@settings(max_examples=int(os.environ.get("COMPAT_WORK_EXAMPLES", "20")), deadline=None, derandomize=True,
          database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), size_kb=st.integers(2, 40), width=st.integers(2, 24),
       depth=st.integers(0, 6), refs=st.integers(0, 12), enum_size=st.sampled_from([1, 5, 50, 400]))
def test_steps_for_compare_and_witness_grow_at_most_linearly_with_schema_size(seed, size_kb, width, depth, refs, enum_size):
    old, new = wide_pair(seed, size_kb, width=width, depth=depth, refs_per_object=min(refs, width), enum_size=enum_size)
    size = size_of(old, new)
    assert _compare_steps(old, new) <= 2 * size + 100
    # The witness search: its first document costs at most a walk of the schemas and a few
    # documents (never a product of the graph's width and depth) ...
    meter = Meter(None)
    next(probes.probe_documents(old, new, meter=meter))
    assert meter.steps <= 2 * size + 3 * MAX_NODES
    # ... and the whole search, at most its budget and one document more, whatever the size.
    report = check_compatibility([old], new, "FULL", budget=0)
    assert report.work["witness_steps"] <= DEFAULT_WITNESS_BUDGET + 4 * MAX_NODES
    assert report.work["compare_steps"] + report.work["witness_steps"] <= 2 * size + 100 + DEFAULT_WITNESS_BUDGET + 4 * MAX_NODES


def test_nesting_deeper_than_the_walk_allows_is_decided_the_same_from_any_caller_stack():
    from registry_client.compat.engine.walk import MAX_NESTING

    def nested(levels: int, leaf: str) -> dict:
        schema: dict = {"type": leaf}
        for _ in range(levels):
            schema = {"type": "object", "properties": {"a": schema}}
        return schema

    old, new = nested(MAX_NESTING + 50, "integer"), nested(MAX_NESTING + 50, "number")

    def from_depth(frames: int):
        return from_depth(frames - 1) if frames else _verdict(check_compatibility([old], new, "FULL", witness_budget=0))

    shallow, deep = from_depth(0), from_depth(600)  # a caller already 600 frames deep (a framework, a test runner)
    assert shallow == deep
    assert any(f"not decided within {MAX_NESTING} levels of nesting" in reason for _, _, _, _, reason, _, _ in shallow[2])
