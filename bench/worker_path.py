"""The worker path beside the reference pipelines: what one run costs us and what it costs them.

    .venv/bin/python bench/worker_path.py                  # 3 rounds of 20 runs a side and pipeline, ~1 minute
    .venv/bin/python bench/worker_path.py --runs 5 --profile 20

For each pipeline (reflection, self_critique, routing) two sides run one after the other, run by
run, on the same scripted model answers (the conformance scenarios reflection-002, self_critique-002
and routing-001: a draft, a review asking for a revision and the revision; a route and the answer):

  reference  the reference pipeline's own code (``agents.testing.reference``, read from the documents
             that publish it; exit 2 when they are absent), its flow function called in this process
             on its own context and goal, through the installed openai SDK, as it is written (it
             builds a client for every call);
  product    the worker path: ``start_run(enqueue=False)`` then ``run_now``, on the same context and
             goal, under the database's active policy: the run row with its context and policy
             snapshots, every trace step and model call, the result, review and audit, all stored
             (SQLite, or PostgreSQL with ``DATABASE_URL=postgres://...``).

What is compared is **wall time per run against the same scripted server with zero latency**: the
server runs in a child process (its CPU is not ours), answers at once, and both sides send it the
same number of requests (checked on every run: a run that sends more or fewer is reported and the
bench fails). The model's wait is then only the loopback round trip, the same on both sides, so the
ratio product / reference is our own time against theirs. A table per pipeline gives each round's
median wall time per side, their ratio, the median CPU time of this process per run on each side
(the server's is not in it; CPU moves less than wall time with the machine's load, so it tells a
change's effect apart from a busy neighbour) and the SQL statements of one product run (all of them, BEGIN
included, SAVEPOINT and RELEASE not; on PostgreSQL also its round trips: the statements, each
transaction's BEGIN and COMMIT, each checkout of a pooled connection), and the medians of the rounds
(the ratio's is the median of each round's ratio). A last table sums up the three pipelines against
the targets: the ratio ≤ 0.3 on SQLite (≤ 0.4 on PostgreSQL) and at most 31 / 31 / 22 statements a run,
with the machine's load average at the start and at the end (2 cores shared with others move the
figures; compare the ratio, which interleaving keeps fair, more than the milliseconds).

The reference code builds an SDK client for every call, and the SDK reads the system's CA bundle
for each client it builds (~35 ms on this machine; the product builds one per process): that is part
of the reference's own cost as written, and what the ratio target is set against.
``--shared-ssl`` gives every client of this process one SSL context instead (as the conformance
tests do): the reference side then costs what its code does without that, and the ratio is far
stricter for us. ``--profile N`` then times N more product runs of each pipeline under Python's
profiler and prints where their time goes.
"""

from __future__ import annotations

import argparse
import atexit
import copy
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import PIPELINES, fmt_ms, median, print_table

# One scenario per pipeline from the conformance suite: the revise path, so every stage is used.
SCENARIOS = {"reflection": "reflection-002", "self_critique": "self_critique-002", "routing": "routing-001"}
KEY = "sk-bench-never-shown"
MODEL = "bench-model"
TIMEOUT_SECONDS = 30.0
TARGET_RATIO = {"sqlite": 0.3, "postgresql": 0.4}  # product / reference, wall time per run
STATEMENT_LIMIT = {"reflection": 31, "self_critique": 31, "routing": 22}  # per run, SQLite


def scenarios() -> dict:
    from tests.conformance.scenarios import SCENARIOS as ALL

    by_id = {scenario.id: scenario for scenario in ALL}
    return {pipeline: by_id[scenario_id] for pipeline, scenario_id in SCENARIOS.items()}


# -- the scripted server, in a child process -----------------------------------------------------


def serve() -> None:
    """Serve the scenario a line on stdin names (``reflection``), in the form each request asks for,
    and answer each line with how many requests the script before it served."""
    from http.server import BaseHTTPRequestHandler

    from agents.testing.scripted_server import ScriptedServer
    from tests.conformance.harness import InTheAskedForm

    BaseHTTPRequestHandler.protocol_version = "HTTP/1.1"  # keep-alive and no Nagle, as bench/common.py serves
    BaseHTTPRequestHandler.disable_nagle_algorithm = True
    chosen = scenarios()
    server = ScriptedServer(require_limit=False).start()
    print(server.base_url, flush=True)
    for line in sys.stdin:
        served = len(server.requests)
        server.requests.clear()
        server.responder = InTheAskedForm(chosen[line.strip()].replies)
        print(served, flush=True)
    server.stop()


class Server:
    """``with Server() as server: server.script("routing"); ...; server.served()``"""

    def __enter__(self) -> Server:
        self.process = subprocess.Popen([sys.executable, __file__, "serve"], cwd=common.ROOT, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.base_url = (self.process.stdout.readline() or "").strip()
        if not self.base_url.startswith("http"):
            self.process.kill()
            raise RuntimeError("the scripted server did not start")
        return self

    def script(self, pipeline: str) -> int:
        """Script one run of ``pipeline``; returns how many requests the run before it sent."""
        self.process.stdin.write(pipeline + "\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def __exit__(self, *exc_info) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- the two sides ------------------------------------------------------------------------------


def load_references(folder: Path) -> dict:
    from agents.testing.reference import PIPELINES as NAMES
    from agents.testing.reference import ReferenceMissing, load

    try:
        return {name: load(name, folder / name) for name in NAMES}
    except ReferenceMissing as error:
        print(f"worker_path: the reference pipelines are needed and are not there: {error}", file=sys.stderr)
        sys.exit(2)


def one_ssl_context() -> None:
    """One SSL context for every client this process builds (see the module's docstring)."""
    try:
        import httpcore2 as transport
    except ImportError:
        return
    context = transport.default_ssl_context()
    transport.default_ssl_context = lambda **options: context


class Sides:
    """One run of each side: ``(wall ms, outcome)``."""

    def __init__(self, references: dict, chosen: dict, user):
        self.references = references
        self.chosen = chosen
        self.user = user
        self.contexts = {name: getattr(reference.main, "INCIDENT_CONTEXT", None)
                         for name, reference in references.items()}

    def goal(self, pipeline: str) -> str:
        return self.chosen[pipeline].goal or self.references[pipeline].main.GOAL

    def reference(self, pipeline: str) -> tuple[float, float, str]:
        reference = self.references[pipeline]
        context = copy.deepcopy(self.contexts[pipeline])
        cpu, started = time.process_time(), time.perf_counter()
        try:
            if pipeline == "routing":
                result = reference.run(self.goal(pipeline))
            else:
                result = reference.run(goal=self.goal(pipeline), incident_context=context)
            outcome = result["stop_reason"]
        except Exception as error:  # the reference lets some failures out: that is its outcome
            outcome = f"raised:{type(error).__name__}"
        return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000, outcome

    def product(self, pipeline: str) -> tuple[float, float, str]:
        from agents import tasks

        context = None if pipeline == "routing" else copy.deepcopy(self.contexts[pipeline])
        cpu, started = time.process_time(), time.perf_counter()
        row, _ = tasks.start_run(pipeline=pipeline, goal=self.goal(pipeline), context=context, user=self.user,
                                 enqueue=False)
        result = tasks.run_now(row.pk)
        return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000, result.stop_reason


class Statements:
    """Counts the SQL statements this thread's connection executes (``connection.execute_wrapper``), the
    transactions they open (a statement inside an atomic block after one outside it) and the connections
    taken (Django's ``connection_created``: on PostgreSQL each is a checkout from the pool, which checks
    the connection with a round trip of its own)."""

    def __init__(self):
        self.sql: list[str] = []
        self.transactions = 0
        self.connections = 0
        self._inside = False

    def __call__(self, execute, sql, params, many, context):
        inside = context["connection"].in_atomic_block
        self.transactions += inside and not self._inside
        self._inside = inside
        if not sql.startswith(("SAVEPOINT", "RELEASE")):
            self.sql.append(sql)
        return execute(sql, params, many, context)

    def connected(self, **kwargs) -> None:
        self.connections += 1

    def round_trips(self, vendor: str) -> int | None:
        """On PostgreSQL every statement is a round trip, and so are each transaction's BEGIN and COMMIT
        (psycopg sends them on their own) and each checkout's check; SQLite has none."""
        if vendor != "postgresql":
            return None
        return len(self.sql) + 2 * self.transactions + self.connections


def product_statements(sides: Sides, server: Server, pipeline: str) -> Statements:
    from django.db import connection
    from django.db.backends.signals import connection_created

    counter = Statements()
    server.script(pipeline)
    connection_created.connect(counter.connected)
    try:
        with connection.execute_wrapper(counter):
            sides.product(pipeline)
    finally:
        connection_created.disconnect(counter.connected)
    return counter


# -- the measurement ------------------------------------------------------------------------------


def measure(sides: Sides, server: Server, runs: int, warmup: int, rounds: int) -> tuple[dict, dict, list[str]]:
    """Per pipeline and round: the reference's and the product's wall times and the product's statements."""
    results = {p: [] for p in PIPELINES}
    outcomes: dict[tuple[str, str], set] = {}
    problems: list[str] = []
    expected = {p: len(sides.chosen[p].replies) for p in PIPELINES}

    def run(side: str, pipeline: str) -> tuple[float, float]:
        server.script(pipeline)
        wall, cpu, outcome = getattr(sides, side)(pipeline)
        sent = server.script(pipeline)  # what this run sent (the script it leaves is replaced next time)
        outcomes.setdefault((pipeline, side), set()).add(f"{outcome}, {sent} calls")
        if sent != expected[pipeline]:
            problems.append(f"{pipeline} {side}: {sent} requests, the scenario scripts {expected[pipeline]}")
        return wall, cpu

    for pipeline in PIPELINES:
        for _ in range(warmup):
            run("reference", pipeline)
            run("product", pipeline)
    for number in range(1, rounds + 1):
        for pipeline in PIPELINES:  # within a round the two sides alternate run by run
            samples = {"reference": [], "product": []}
            for _ in range(runs):
                for side in samples:
                    samples[side].append(run(side, pipeline))
            statements = product_statements(sides, server, pipeline)
            results[pipeline].append({"round": number, "statements": statements,
                                      **{side: median([wall for wall, _ in got]) for side, got in samples.items()},
                                      **{f"{side} cpu": median([cpu for _, cpu in got])
                                         for side, got in samples.items()}})
    return results, outcomes, problems


def profile(sides: Sides, server: Server, runs: int) -> None:
    """Where the product's time goes: the functions of the worker path by their own time."""
    for pipeline in PIPELINES:
        profiler = cProfile.Profile()
        for _ in range(runs):
            server.script(pipeline)
            profiler.runcall(sides.product, pipeline)
        print(f"\n### Profile of {runs} product runs of {pipeline} (top 25 by own time)\n", flush=True)
        if os.environ.get("WORKER_PATH_PROFILE_DIR"):  # for pstats' own browsing (print_callers, ...)
            profiler.dump_stats(Path(os.environ["WORKER_PATH_PROFILE_DIR"]) / f"{pipeline}.prof")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(r"agents|django/db/models/(query|sql/compiler)|openai/_base", 40)


def print_pipeline(pipeline: str, rounds: list[dict], outcomes: dict, runs: int, vendor: str) -> tuple:
    """One pipeline's table, round by round; returns its line of the summary."""
    rows = []
    for r in rounds:
        rows.append([r["round"], fmt_ms(r["reference"], 2), fmt_ms(r["product"], 2),
                     f"{r['product'] / r['reference']:.2f}", fmt_ms(r["reference cpu"], 2),
                     fmt_ms(r["product cpu"], 2), len(r["statements"].sql), r["statements"].round_trips(vendor) or "",
                     kinds(r["statements"].sql)])
    of_rounds = {key: median([r[key] for r in rounds])
                 for key in ("reference", "product", "reference cpu", "product cpu")}
    # The ratio of the rounds is the median of each round's ratio: within a round the two sides alternate
    # run by run under the same load, so each round's ratio is a fair pair (the medians of each side's
    # times may come from rounds under different loads).
    ratio = median([r["product"] / r["reference"] for r in rounds])
    statements = rounds[-1]["statements"]
    rows.append(["median", fmt_ms(of_rounds["reference"], 2), fmt_ms(of_rounds["product"], 2), f"{ratio:.2f}",
                 fmt_ms(of_rounds["reference cpu"], 2), fmt_ms(of_rounds["product cpu"], 2), len(statements.sql),
                 statements.round_trips(vendor) or "", ""])
    print_table(
        f"{pipeline} ({SCENARIOS[pipeline]}): ms per run at 0 ms model latency, median of {runs} runs",
        ["round", "reference wall", "product wall", "ratio", "reference CPU", "product CPU", "statements",
         "round trips", "kinds"],
        rows,
        [f"outcomes: reference {' / '.join(sorted(outcomes[(pipeline, 'reference')]))}; "
         f"product {' / '.join(sorted(outcomes[(pipeline, 'product')]))}; "
         f"ratio target ≤ {TARGET_RATIO[vendor]}: {common.verdict(ratio <= TARGET_RATIO[vendor])}"],
    )
    return (pipeline, ratio, of_rounds["product cpu"] / of_rounds["reference cpu"], len(statements.sql),
            statements.round_trips(vendor))


def kinds(statements: list[str]) -> str:
    counts: dict[str, int] = {}
    for sql in statements:
        word = sql.split(None, 1)[0].upper()
        counts[word] = counts.get(word, 0) + 1
    return " ".join(f"{word} {count}" for word, count in sorted(counts.items(), key=lambda item: -item[1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=common.whole(1), default=20, help="runs per side, pipeline and round")
    parser.add_argument("--rounds", type=common.whole(1), default=3, help="rounds (default 3)")
    parser.add_argument("--warmup", type=common.whole(0), default=3, help="unmeasured runs per side and pipeline")
    parser.add_argument("--shared-ssl", action="store_true",
                        help="one SSL context for every SDK client (the reference code then reads no CA bundle)")
    parser.add_argument("--profile", type=common.whole(0), default=0, metavar="N",
                        help="then profile N product runs per pipeline")
    parser.add_argument("--show-sql", action="store_true", help="print one product run's statements per pipeline")
    args = parser.parse_args(argv)

    load_at_start = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench-worker-path-"))  # the reference pipelines' modules
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    with Server() as server:
        # The reference llm module reads its model and timeout when it is imported, its key and URL per call.
        os.environ.update(OPENAI_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS), OPENAI_MODEL=MODEL)
        references = load_references(folder)
        if args.shared_ssl:
            one_ssl_context()
        db = common.BenchDatabase("worker-path").setup()
        demo = common.load_demo()
        common.use_model(server.base_url)  # the product's client, from the environment as a worker has it
        os.environ.update(OPENAI_API_KEY=KEY, OPENAI_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS))  # and the reference's
        sides = Sides(references, scenarios(), demo["user"])
        print(f"worker_path: {db.describe()}; {args.rounds} rounds of {args.runs} runs per side and pipeline; "
              f"SSL context {'shared' if args.shared_ssl else 'per client'}; "
              f"load average at start {' '.join(f'{x:.2f}' for x in load_at_start)}", flush=True)
        results, outcomes, problems = measure(sides, server, args.runs, args.warmup, args.rounds)
        load_at_end = os.getloadavg()
        if args.show_sql:
            for pipeline in PIPELINES:
                print(f"\n{pipeline}:\n  " + "\n  ".join(product_statements(sides, server, pipeline).sql))
        if args.profile:
            profile(sides, server, args.profile)

    summary = []
    for pipeline in PIPELINES:
        summary.append(print_pipeline(pipeline, results[pipeline], outcomes, args.runs, db.vendor))
    target = TARGET_RATIO[db.vendor]
    print_table(
        f"The worker path against the reference ({db.vendor}; median of {args.rounds} rounds, "
        f"load average {' '.join(f'{x:.2f}' for x in load_at_start)} at the start, "
        f"{' '.join(f'{x:.2f}' for x in load_at_end)} at the end)",
        ["pipeline", "ratio", f"≤ {target}", "product CPU / reference CPU", "statements per run", "≤ limit",
         "round trips per run"],
        [[pipeline, f"{ratio:.2f}", common.verdict(ratio <= target), f"{cpu_ratio:.2f}", statements,
          f"{STATEMENT_LIMIT[pipeline]}: {common.verdict(statements <= STATEMENT_LIMIT[pipeline])}",
          "n/a" if trips is None else trips]
         for pipeline, ratio, cpu_ratio, statements, trips in summary],
    )
    print(f"\nload average at start {' '.join(f'{x:.2f}' for x in load_at_start)}, "
          f"at end {' '.join(f'{x:.2f}' for x in load_at_end)}")
    common.print_machine({"database": db.vendor})
    if problems:
        print("\nRuns that did not send what their scenario scripts:")
        for line in sorted(set(problems)):
            print(f"  {line} (x{problems.count(line)})")
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve()
    else:
        main()
