"""The cost of live pages: 50 desk pages kept open, each polling its live fragments
(reviewer/desk/live.py) on the production server, on the path where nothing changed (304, no body)
and on the path where every poll finds a change (200, the fragment rendered and sent).

Works in a throwaway database and VAR_DIR (bench.common.BenchDatabase) holding the demo data, pending
escalations, texts ready to publish, published updates with deliveries and held deliveries; starts
gunicorn with reviewer/gunicorn_conf.py on 127.0.0.1. Each of --pages pollers is one open page
(dashboard, ready to publish, an incident, held deliveries, the inbox, in turn) with its own
keep-alive connection and logged-in session; it requests its page's fragments (the navigation's
counts and the page's own) as fast as the answers come (a closed loop, the most the server gives)
for --seconds a path:

- ``304``: each poll sends the ETag it was last given, as static/js/live.js does, and nothing changes;
- ``changed``: each poll sends a stale ETag, so each answer is the whole fragment (the worst case: a
  change between every two polls).

Then the same two paths paced as browsers poll: each page polls its fragments once every 3 s (the
pages' phases spread over the period) for --paced-seconds, which gives the times people wait with
50 pages open rather than the most the server gives.

Prints a Markdown table (requests/s, median and p95 per path), what 50 open pages ask for at the
browser's period (every 3 s), and the machine's load. Loopback only.

    .venv/bin/python bench/live_polling.py                    # 50 pages, 10 s a path
    .venv/bin/python bench/live_polling.py --pages 50 --seconds 20
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    BenchDatabase,
    _loadavg,
    fmt_ms,
    load_demo,
    median,
    percentile,
    print_machine,
    print_table,
    seconds,
    whole,
)
from bench.load import HOST, Session, free_port  # noqa: E402
from bench.status_page import start_gunicorn, stop  # noqa: E402
from reviewer import gunicorn_conf  # noqa: E402

PASSWORD = "bench-live-polling"
INCIDENT = "inc_live_bench"
NAV = ("/live/nav/?on=/", "nav-live")
# The fragments each kind of open page polls: (URL, the id it polls as).
PAGES = {
    "dashboard": [NAV, ("/", "dashboard-counts")],
    "ready to publish": [NAV, ("/publish/", "ready-list")],
    "incident": [NAV, (f"/incidents/{INCIDENT}/", "incident-runs"), (f"/incidents/{INCIDENT}/", "updates")],
    "held deliveries": [NAV, ("/deliveries/held/", "held-list")],
    "inbox": [NAV, ("/inbox/", "inbox-list")],
}
PERIOD_SECONDS = 3.0  # the browser's poll period (hx-trigger="every 3s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=whole(1), default=50, help="open pages, each a poller")
    parser.add_argument("--seconds", type=seconds(0, above=True), default=10, help="per path")
    parser.add_argument("--paced-seconds", type=seconds(0), default=15, help="per path, at the browser's period")
    parser.add_argument("--port", type=whole(0), default=0, help="127.0.0.1 port for gunicorn (0: a free one)")
    parser.add_argument("--web-workers", type=whole(1), default=gunicorn_conf.workers)
    parser.add_argument("--web-threads", type=whole(1), default=gunicorn_conf.threads)
    args = parser.parse_args(argv)
    if not (args.seconds <= 300 and args.pages <= 500 and args.port <= 65535):
        parser.error("bounded runs only: --seconds up to 300, --pages up to 500, --port up to 65535")
    port = args.port or free_port()

    db = BenchDatabase("live")
    os.environ["STATIC_ROOT"] = str(db.var_dir / "static")
    db.setup()
    prepare()
    server = start_gunicorn(port, args.web_workers, args.web_threads, db)
    try:
        first = Session(port)
        first.log_in("bench", PASSWORD)
        kinds = list(PAGES)
        pollers = [Poller(port, first.cookies, PAGES[kinds[i % len(kinds)]]) for i in range(args.pages)]
        for poller in pollers:  # warm up: every connection has its ETags, every process has served each path
            poller.poll(conditional=False)
        results = {f"{name}, closed loop": run(pollers, conditional=conditional, seconds=args.seconds)
                   for name, conditional in (("304 (unchanged)", True), ("changed (200)", False))}
        if args.paced_seconds:
            results |= {f"{name}, every {PERIOD_SECONDS:g} s": run(pollers, conditional=conditional,
                                                                 seconds=args.paced_seconds, period=PERIOD_SECONDS)
                        for name, conditional in (("304 (unchanged)", True), ("changed (200)", False))}
        load = _loadavg()
    finally:
        stop(server)
    fragments = sum(len(PAGES[kinds[i % len(kinds)]]) for i in range(args.pages))
    rows = [[name, f"{r['count']:,}", f"{r['count'] / r['seconds']:.0f}", fmt_ms(median(r["times"]) * 1000),
             fmt_ms(percentile(r["times"], 95) * 1000),
             ", ".join(f"{status}: {n:,}" for status, n in sorted(r["status"].items())),
             f"{r['bytes'] / max(r['count'], 1):,.0f}"]
            for name, r in results.items()]
    print_table(f"{args.pages} open desk pages polling their live fragments ({db.describe()}, gunicorn "
                f"{args.web_workers} workers x {args.web_threads} threads; {args.seconds:g} s a path in a closed loop, "
                f"{args.paced_seconds:g} s paced)",
                ["path", "requests", "requests/s", "median ms", "p95 ms", "answers", "bytes/answer"], rows,
                notes=[f"{args.pages} open pages poll {fragments} fragments every {PERIOD_SECONDS:g} s: "
                       f"{fragments / PERIOD_SECONDS:.0f} requests/s asked of the server.",
                       f"load average after the run: {load}"])
    print_machine()
    return 0


def prepare() -> None:
    """The demo data, and what the live pages show mid-incident: pending escalations, approved texts
    ready to publish, an incident with runs and published updates, held deliveries."""
    from agents.models import Incident, Run
    from reviewer.desk.decisions import decide
    from reviewer.models import Decision, Delivery, DeliveryChannel, Escalation
    from reviewer.outbox.publishing import CONFIRM_IMPACT, CONFIRM_REPEAT, PublicFields, publish

    demo = load_demo()
    user = demo["user"]
    user.set_password(PASSWORD)
    user.save()
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Customers mail", kind="email", recipients="customers@example.com")
    DeliveryChannel.objects.create(name="Status page", kind="status")
    incident = Incident.objects.create(incident_id=INCIDENT, title="Card payments failing in the EU", severity="P1")
    text = "We are investigating failing card payments in the EU. Current status: degraded."

    def escalation(number: int) -> Escalation:
        run = Run.objects.create(pipeline="reflection", goal=f"Write update {number}.", incident=incident,
                                 status=Run.Status.STOPPED, stop_reason="policy_escalation")
        return Escalation.objects.create(run=run, stop_reason="policy_escalation", reason="An ETA to check.",
                                         draft=text, candidate=text)

    for number in range(20):
        escalation(number)  # pending, in the inbox
    for number in range(20, 30):
        decide(escalation(number).pk, user, Decision.Action.APPROVE)  # ready to publish
    for number in range(30, 35):
        approved = escalation(number)
        decide(approved.pk, user, Decision.Action.APPROVE)
        # The same text each time, on purpose: the person confirms the repeat (and the impact).
        update = publish(incident, text, actor=user, source_run=approved.run,
                         escalation=Escalation.objects.get(pk=approved.pk),
                         fields=PublicFields(confirmed=frozenset({CONFIRM_REPEAT, CONFIRM_IMPACT})))
        update.deliveries.filter(channel__kind="status").update(status=Delivery.Status.DELIVERED, attempts=1)
        update.deliveries.filter(channel__kind="email").update(
            status=Delivery.Status.HELD, attempts=1, last_error="mail: TimeoutError (it may have been sent)")


class Poller:
    """One open page: its connection, session cookie and the ETag of each fragment it shows."""

    def __init__(self, port: int, cookies: dict[str, str], fragments: list[tuple[str, str]]):
        self.connection = http.client.HTTPConnection(HOST, port, timeout=30)
        self.cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        self.fragments = fragments
        self.etags: dict[str, str] = {}

    def poll(self, *, conditional: bool) -> list[tuple[int, float, int]]:
        """One poll of each fragment: (status, seconds, body bytes) each."""
        answers = []
        for url, target in self.fragments:
            headers = {"Cookie": self.cookie, "HX-Request": "true", "HX-Target": target}
            if conditional and target in self.etags:
                headers["If-None-Match"] = self.etags[target]
            elif not conditional:
                headers["If-None-Match"] = '"stale"'
            start = time.perf_counter()
            try:
                response, body = self.get(url, headers)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # The server closed the idle keep-alive connection (gunicorn's keepalive): like a
                # browser, the same request once more on a new connection, the time counted.
                self.connection.close()
                response, body = self.get(url, headers)
            elapsed = time.perf_counter() - start
            if response.status not in (200, 304):
                raise SystemExit(f"{url} ({target}) answered HTTP {response.status}")
            if etag := response.headers.get("ETag"):
                self.etags[target] = etag
            answers.append((response.status, elapsed, len(body)))
        return answers


    def get(self, url: str, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
        self.connection.request("GET", url, headers=headers)
        response = self.connection.getresponse()
        return response, response.read()


def run(pollers: list[Poller], *, conditional: bool, seconds: float, period: float = 0) -> dict:
    """Every poller in its own thread for ``seconds``, polling as fast as the answers come, or once
    every ``period`` seconds (the pollers' first polls spread over the first period)."""
    start = time.monotonic()
    stop_at = start + seconds
    lock = threading.Lock()
    result = {"count": 0, "times": [], "status": {}, "bytes": 0, "seconds": seconds}

    def loop(number: int, poller: Poller) -> None:
        due = start + period * number / len(pollers)
        while (now := time.monotonic()) < stop_at:
            if period:
                if now < due:
                    time.sleep(min(due - now, stop_at - now))
                    continue
                due += period
            answers = poller.poll(conditional=conditional)
            with lock:
                for status, elapsed, size in answers:
                    result["count"] += 1
                    result["times"].append(elapsed)
                    result["status"][status] = result["status"].get(status, 0) + 1
                    result["bytes"] += size

    threads = [threading.Thread(target=loop, args=(number, poller)) for number, poller in enumerate(pollers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return result


if __name__ == "__main__":
    raise SystemExit(main())
