"""Hostile bodies under the production server: the CPU each shape costs per
request as it grows, and what 4 hostile clients take from well-formed ones.

    python bench/hostile.py [--sizes 10000,100000,1000000] [--seconds 20] [--rounds 4]
                            [--clients 8] [--hostile-clients 4] [--workers 2] [--threads 8] [--smoke]

1. Creates a scratch database (BENCH_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/reg_hostile_bench), migrates it, issues a
   lineage token and starts granian (WSGI, as in the Dockerfile; DEBUG off).
2. For each adversarial shape and each size (bytes on the wire), sends the
   request one at a time, a few times (fewer for the slow ones), and reads the
   CPU the server's processes used meanwhile (Linux /proc): CPU per request,
   and its growth per 10× of size (target ≤ 12× everywhere: linear work plus a
   fixed cost per request). The shapes: an unterminated string of escaped
   quotes behind 101 brackets (the body that once held a server for a minute),
   deep brackets, long keys, backslash runs, surrogate escapes, brackets inside
   strings, many empty arrays (parsed whole), many empty gzip members before one
   event, a batch of new outputs, and one event with a schema of many columns.
3. Well-formed clients (bench/ingest.py's events: START and COMPLETE, 2 inputs,
   1 output with schema and statistics) post for `--seconds` without, then with,
   `--hostile-clients` clients sending the costliest shapes at the largest size
   in a loop, in alternating slices over `--rounds`; the ratio of their
   events/s (target ≥ 0.8), and /healthz's latency meanwhile.

Tokens: the well-formed clients share one (a pipeline's), each hostile client
has its own, so the server's budgets per token (registry.ratelimit: request
bytes, datasets created, bodies refused as unreadable or too large) hold the
hostile ones back as they would; their 429s are counted among their answers.
The budgets are shared by the server's processes through Redis at
BENCH_REDIS_URL (default redis://127.0.0.1:6379/12; empty: per process), as
compose.yaml's broker shares them. Step 2 measures what a shape costs to
read and judge, not the budget: its requests take turns over a pool of tokens
(SHAPE_TOKENS) so that none of them is spent.

`--smoke` runs sizes 1000,10000 (0.1 s of server CPU each), 1 s in 1 round after 0.5 s of
warm-up: for CI, well under a minute besides migrating the scratch database.
Prints a human summary, then one JSON line (last): {"shapes": {shape: {"cpu_ms":
{size: ms}, "growth_per_10x": [..], "status": {size: code}}}, "max_growth_per_10x",
"events_per_s", "events_per_s_under_attack", "ratio", "healthz_p50_ms", "healthz_max_ms", ...}.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import itertools
import json
import math
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, django_env, free_port, fresh_database, percentile, plain_url  # noqa: E402
from ingest import KeepAlive, from_the_app, group_cpu, make_events, through_the_app, wait_until_up  # noqa: E402

NAMESPACE = "postgres://warehouse:5432"
RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
SCHEMA = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
PRODUCER = "https://example.com/hostile-bench"
# Step 2 sends some 1 GB in all; each token has a burst of 16 MiB (LINEAGE_TOKEN_BURST_BYTES)
# and of 1 MiB of refused bodies (LINEAGE_TOKEN_REFUSED_BURST_BYTES, refilled at 64 KiB/s):
# the tokens are taken in turn, so one is used again only after all the others, and a
# token found spent (429) is passed over, its request not counted.
SHAPE_TOKENS = 2048
_next_token = itertools.count()


# --- the shapes: (path, body, gzip?) for about `size` bytes on the wire --------------------

def _event(outputs: list[dict]) -> dict:
    return {"eventType": "COMPLETE", "eventTime": "2026-11-30T01:00:00Z", "producer": PRODUCER, "schemaURL": RUN_EVENT,
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "hostile", "name": "bench"},
            "inputs": [], "outputs": outputs}


def escaped_quotes(size: int) -> tuple[str, bytes, bool]:
    return "/api/v1/lineage", b"[" * 101 + b'"' + b'\\"' * ((size - 102) // 2), False


def deep_brackets(size: int) -> tuple[str, bytes, bool]:
    return "/api/v1/lineage", b"[" * (size // 2) + b"]" * (size // 2), False


def long_keys(size: int) -> tuple[str, bytes, bool]:
    # 100 deep, within the limit: the body is read, checked and parsed whole.
    key = b"k" * (size - 210)
    return "/api/v1/lineage", b"[" * 99 + b'{"' + key + b'": 1}' + b"]" * 99, False


def backslash_runs(size: int) -> tuple[str, bytes, bool]:
    run = b"\\" * ((size - 220) // 2 * 2)
    return "/api/v1/lineage", b"[" * 101 + b'"' + run + b'u0000"' + b"]" * 101, False


def surrogate_escapes(size: int) -> tuple[str, bytes, bool]:
    pairs = b"\\ud83d\\ude00" * ((size - 220) // 12)
    return "/api/v1/lineage", b"[" * 101 + b'"' + pairs + b'\\udc00"' + b"]" * 101, False


def brackets_in_strings(size: int) -> tuple[str, bytes, bool]:
    return "/api/v1/lineage", b"[" + b",".join([b'"[[[{{{]]"'] * (size // 11)) + b"]", False


def many_containers(size: int) -> tuple[str, bytes, bool]:
    """Empty arrays within the depth limit: the checks pass it, and the parser builds every one."""
    return "/api/v1/lineage", b"[" + b"[]," * ((size - 4) // 3) + b"[]]", False


def gzip_members(size: int) -> tuple[str, bytes, bool]:
    event = gzip.compress(json.dumps(_event([{"namespace": NAMESPACE, "name": "mart.gzip"}])).encode())
    empty = gzip.compress(b"")
    return "/api/v1/lineage", empty * ((size - len(event)) // len(empty)) + event, True


def new_outputs(size: int) -> tuple[str, bytes, bool]:
    """A batch of events of new outputs (each event within the per-event limit of 1000)."""
    tag = uuid.uuid4().hex[:8]
    per = len(json.dumps({"namespace": NAMESPACE, "name": f"mart.{tag}_000000"})) + 2
    count = max(1, size // per)
    names = [{"namespace": NAMESPACE, "name": f"mart.{tag}_{i:06d}"} for i in range(count)]
    return "/api/v1/lineage/batch", json.dumps([_event(names[i:i + 1000]) for i in range(0, count, 1000)]).encode(), False


def wide_schema(size: int) -> tuple[str, bytes, bool]:
    """One event whose output has a schema of as many columns as fit (within the column budget or past it)."""
    count = max(1, size // 32)
    facet = {"_producer": PRODUCER, "_schemaURL": SCHEMA,
             "fields": [{"name": f"c{i:07d}", "type": "BIGINT"} for i in range(count)]}
    output = {"namespace": NAMESPACE, "name": f"mart.wide_{uuid.uuid4().hex[:8]}", "facets": {"schema": facet}}
    return "/api/v1/lineage", json.dumps(_event([output])).encode(), False


SHAPES: dict[str, Callable[[int], tuple[str, bytes, bool]]] = {
    "escaped_quotes": escaped_quotes, "deep_brackets": deep_brackets, "long_keys": long_keys,
    "backslash_runs": backslash_runs, "surrogate_escapes": surrogate_escapes,
    "brackets_in_strings": brackets_in_strings, "many_containers": many_containers, "gzip_members": gzip_members, "new_outputs": new_outputs,
    "wide_schema": wide_schema,
}


def request_bytes(port: int, secret: str, path: str, body: bytes, gzipped: bool) -> bytes:
    encoding = "Content-Encoding: gzip\r\n" if gzipped else ""
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{encoding}"
            f"Authorization: Bearer {secret}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


# --- 1. CPU per request, per shape and size -------------------------------------------------

def issue_tokens(env: dict, count: int) -> list[str]:
    """`count` more lineage tokens of the bench's team, in one process."""
    code = ("import json\n"
            "from registry.models import ApiToken, Team\n"
            "team, _ = Team.objects.get_or_create(slug='pipelines', defaults={'name': 'Pipelines'})\n"
            f"print(json.dumps([ApiToken.issue('hostile-%d' % i, team=team)[1] for i in range({count})]))")
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cpu_per_request(port: int, secrets: list[str], server_pid: int, shape: str, size: int,
                    budget_s: float, cpu_s: float) -> tuple[float, float, int, int]:
    """(server CPU ms per request, wall ms per request, the answer's status, requests sent). The
    CPU clock ticks in 10 ms steps: requests are repeated until the server used `cpu_s` of CPU
    (or `budget_s` of wall time passed), at least 3 times."""
    conn = KeepAlive(port)
    cpu = wall = 0.0
    sent, status = 0, 0
    spent = 0
    while sent < 3 or (cpu < cpu_s and wall < budget_s):
        # Built first: a fresh body each time, and the next token of the pool.
        request = request_bytes(port, secrets[next(_next_token) % len(secrets)], *SHAPES[shape](size))
        before, started = group_cpu(server_pid), time.perf_counter()
        status = conn.send(request)
        if status == 429:
            spent += 1
            if spent >= len(secrets):
                raise SystemExit(f"{shape} at {size} B: every token of the pool of {len(secrets)} is spent; "
                                 "raise SHAPE_TOKENS")
            continue
        wall += time.perf_counter() - started
        cpu += group_cpu(server_pid) - before
        sent += 1
    conn.close()
    return 1000 * cpu / sent, 1000 * wall / sent, status, sent


# --- 3. well-formed clients with and without hostile ones ----------------------------------

def _hostile_worker(port: int, secrets: list[str], attack: list[tuple[str, int]], seconds: float,
                    ready: mp.Queue, go: mp.Event, out: mp.Queue) -> None:
    # Bodies of new datasets are new each time: a repeat would find its datasets stored.
    # One thread per token: each hostile client sends with its own.
    threads = len(secrets)
    copies = {shape: max(4, int(seconds * 3)) if shape in ("new_outputs", "wide_schema") else 4 for shape, _ in attack}
    bodies = {(secret, shape): [request_bytes(port, secret, *SHAPES[shape](size)) for _ in range(copies[shape])]
              for secret in secrets for shape, size in attack}
    shapes = [shape for shape, _ in attack]
    ready.put(True)
    go.wait()
    deadline, statuses = time.time() + seconds, Counter()

    def run(i: int) -> None:
        conn, n = KeepAlive(port), i
        while time.time() < deadline:
            shape = shapes[n % len(shapes)]
            mine = bodies[(secrets[i], shape)]
            request = mine[n % len(mine)]
            n += 1
            try:
                statuses[f"{shape} {conn.send(request)}"] += 1
            except OSError as exc:
                conn.close()
                statuses[f"{shape} {type(exc).__name__}"] += 1
        conn.close()

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    out.put(dict(statuses))


def _probe_healthz(port: int, until: float, into: list[float]) -> None:
    while time.time() < until:
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            conn.close()
        except OSError:
            pass
        into.append(1000 * (time.perf_counter() - started))
        time.sleep(0.25)


def with_hostile_clients(port: int, secret: str, clients: int, hostile_secrets: list[str], attack: list[tuple[str, int]],
                         seconds: float, healthz: list[float]) -> tuple[dict, dict]:
    ready, out, go = mp.Queue(), mp.Queue(), mp.Event()
    proc = mp.Process(target=_hostile_worker, args=(port, hostile_secrets, attack, seconds + 2, ready, go, out))
    proc.start()
    ready.get(timeout=300)
    go.set()
    time.sleep(0.5)  # the hostile requests are in flight before the well-formed clock starts
    prober = threading.Thread(target=_probe_healthz, args=(port, time.time() + seconds, healthz))
    prober.start()
    part = through_the_app(port, secret, clients, seconds)
    prober.join()
    statuses = out.get(timeout=seconds + 300)
    proc.join()
    return part, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="body sizes in bytes, comma-separated")
    parser.add_argument("--seconds", type=float, default=20, help="well-formed load per side, split over the rounds")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of well-formed load first, not counted")
    parser.add_argument("--clients", type=int, default=8, help="well-formed clients")
    parser.add_argument("--hostile-clients", type=int, default=4)
    parser.add_argument("--worst", type=int, default=3, help="how many of the costliest shapes the hostile clients send")
    parser.add_argument("--cell-seconds", type=float, default=20, help="stop repeating a shape and size after this long")
    parser.add_argument("--cell-cpu", type=float, default=1.0, help="server CPU seconds to measure each shape and size over")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--shapes", default="", help="only these shapes (comma-separated), and no hostile clients")
    parser.add_argument("--smoke", action="store_true", help="small sizes, 1 s, 1 round: seconds in all, for CI")
    args = parser.parse_args()
    only = [s for s in args.shapes.split(",") if s]
    if unknown := set(only) - set(SHAPES):
        parser.error(f"unknown shapes {sorted(unknown)}; the shapes are {', '.join(SHAPES)}")
    if args.smoke:
        args.sizes, args.seconds, args.rounds, args.warmup = "1000,10000", 1.0, 1, 0.5
        args.cell_seconds, args.cell_cpu = 0.5, 0.1
    sizes = [int(s) for s in args.sizes.split(",")]

    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reg_hostile_bench")
    print(f"Preparing {plain_url(url)} …", flush=True)
    fresh_database(plain_url(url))
    # The token budget shared by the server processes, as with the Redis broker of compose.yaml
    # (LINEAGE_TOKEN_BUDGET_REDIS_URL defaults to it); BENCH_REDIS_URL="" keeps it per process.
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
    env = django_env(plain_url(url) + "?conn_max_age=600", LOG_LEVEL="ERROR",  # not a line per refusal
                     LINEAGE_TOKEN_BUDGET_REDIS_URL=os.environ.get("LINEAGE_TOKEN_BUDGET_REDIS_URL", redis_url))
    secret = from_the_app(env)[0]
    hostile_secrets = issue_tokens(env, args.hostile_clients)
    shape_secrets = issue_tokens(env, SHAPE_TOKENS)
    port = free_port()
    command = [sys.executable, "-m", "granian", "--interface", "wsgi", "registry.wsgi:application",
               "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers),
               "--blocking-threads", str(args.threads), "--blocking-threads-idle-timeout", "600",
               "--backlog", "2048", "--log-level", "warning"]
    # Its log (a line per refused request at WARNING) goes to a file, named if the server fails.
    log_path = Path(tempfile.gettempdir()) / f"hostile-bench-server-{port}.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stdout=log, stderr=log)
    result: dict = {"sizes": sizes, "shapes": {}}
    try:
        try:
            wait_until_up(port, server)
        except SystemExit:
            print(f"the server's log: {log_path}", flush=True)
            raise
        print(f"granian ({args.workers} workers × {args.threads} threads); CPU per request of each shape:", flush=True)
        # A few well-formed events first: the token's and the first statements' costs are not any shape's.
        warm = KeepAlive(port)
        for event in make_events(random.Random(0), 0, 0):
            warm.send(request_bytes(port, secret, "/api/v1/lineage", json.dumps(event).encode(), False))
        warm.close()
        for shape in only or SHAPES:
            cells = {}
            for size in sizes:
                cells[size] = cpu_per_request(port, shape_secrets, server.pid, shape, size, args.cell_seconds, args.cell_cpu)
            cpu = {size: round(c[0], 2) for size, c in cells.items()}
            # The growth of CPU per request over each step of size, as if the step were 10×.
            growth = [round((cpu[b] / cpu[a]) ** (math.log(10) / math.log(b / a)), 2) if cpu[a] > 0 else None
                      for a, b in zip(sizes, sizes[1:], strict=False)]
            result["shapes"][shape] = {"cpu_ms": cpu, "wall_ms": {s: round(c[1], 1) for s, c in cells.items()},
                                       "status": {s: c[2] for s, c in cells.items()},
                                       "requests": {s: c[3] for s, c in cells.items()}, "growth_per_10x": growth}
            print(f"  {shape:20s} " + "  ".join(f"{s:>8d} B: {cpu[s]:8.2f} ms ({cells[s][2]})" for s in sizes)
                  + f"   growth per 10×: {growth}", flush=True)
        growths = [g for s in result["shapes"].values() for g in s["growth_per_10x"] if g is not None]
        result["max_growth_per_10x"] = max(growths) if growths else None
        if only:  # some shapes' costs only: no attack
            print(json.dumps(result))
            return

        # Two attacks: the costliest shapes, each at its costliest size (work the budget lets
        # through: new datasets are stored), and the costliest of those the server refuses.
        def costliest(refused_only: bool) -> list[tuple[str, int]]:
            cells = [(result["shapes"][s]["cpu_ms"][z], s, z) for s in SHAPES for z in sizes
                     if not refused_only or result["shapes"][s]["status"][z] >= 400]
            peak = {}
            for cpu, s, z in sorted(cells, reverse=True):
                peak.setdefault(s, (z, cpu))
            ranked = sorted(peak, key=lambda s: -peak[s][1])
            return [(s, peak[s][0]) for s in ranked[:args.worst]]
        attacks = {"costliest": costliest(False), "refused": costliest(True)}
        for name, attack in attacks.items():
            print(f"  attack '{name}': {', '.join(f'{s} at {z} B' for s, z in attack)}", flush=True)
        print(f"Well-formed clients ({args.clients}) alone and beside {args.hostile_clients} hostile clients:", flush=True)
        sides = {side: {"acked": 0, "errors": [], "elapsed": 0.0, "latencies": [], "healthz": [], "answers": Counter()}
                 for side in ("alone", *attacks)}
        slice_seconds = args.seconds / args.rounds
        if args.warmup > 0:  # not counted: the first well-formed events create their datasets
            through_the_app(port, secret, args.clients, args.warmup)
        for round_no in range(1, args.rounds + 1):
            order = list(sides) if round_no % 2 else list(sides)[::-1]
            line = []
            for side in order:
                figures = sides[side]
                if side == "alone":
                    part = through_the_app(port, secret, args.clients, slice_seconds)
                else:
                    part, answers = with_hostile_clients(port, secret, args.clients, hostile_secrets, attacks[side],
                                                         slice_seconds, figures["healthz"])
                    figures["answers"].update(answers)
                figures["acked"] += len(part["acked"])
                figures["errors"] += part["errors"]
                figures["elapsed"] += part["elapsed"]
                figures["latencies"] += part["latencies"]
                line.append(f"{side} {len(part['acked']) / part['elapsed']:.0f}/s")
            print(f"  round {round_no}: {', '.join(line)}", flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

    rates = {side: f["acked"] / f["elapsed"] if f["elapsed"] else 0.0 for side, f in sides.items()}
    result.update({"clients": args.clients, "hostile_clients": args.hostile_clients,
                   "events_per_s": round(rates["alone"], 1), "p99_ms": round(percentile(sides["alone"]["latencies"], 99), 1),
                   "errors": len(sides["alone"]["errors"]), "attacks": {}})
    for name, attack in attacks.items():
        figures = sides[name]
        result["attacks"][name] = {
            "shapes": {s: z for s, z in attack}, "answers": dict(figures["answers"]),
            "events_per_s": round(rates[name], 1),
            "ratio": round(rates[name] / rates["alone"], 3) if rates["alone"] else None,
            "p99_ms": round(percentile(figures["latencies"], 99), 1), "errors": len(figures["errors"]),
            "healthz_p50_ms": round(percentile(figures["healthz"], 50), 1),
            "healthz_max_ms": round(max(figures["healthz"], default=0.0), 1)}
        print(f"well-formed events beside the '{name}' attack: {result['attacks'][name]['events_per_s']}/s of "
              f"{result['events_per_s']}/s alone = {result['attacks'][name]['ratio']} (target ≥ 0.8); /healthz p50 "
              f"{result['attacks'][name]['healthz_p50_ms']} ms, max {result['attacks'][name]['healthz_max_ms']} ms")
        print(f"  the hostile clients' answers: {dict(sorted(figures['answers'].items()))}")
    result["ratio"] = min((a["ratio"] for a in result["attacks"].values() if a["ratio"] is not None), default=None)
    print(f"largest growth of CPU per request per 10× of size: {result['max_growth_per_10x']} (target ≤ 12)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
