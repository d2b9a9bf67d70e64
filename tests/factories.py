"""One factory per model that tests create by hand, and the plain helpers that several test folders use.

A factory makes a row the way the product would have left it, without executing a pipeline;
keyword arguments override or add fields. Fixtures live in the ``conftest.py`` of the folder that
uses them (``tests/conftest.py`` for those used everywhere), not here.
"""

from __future__ import annotations

import time
from datetime import timedelta
from urllib.parse import quote

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.utils import timezone

from agents.core.policy import default_policy
from agents.models import Incident, IncidentFact, Run
from reviewer.models import Escalation, Subscriber

PASSWORD = "a-test-password"  # test users only


# -- factories, one per model -------------------------------------------------------------------


def make_user(username: str, *, group: str | None = None, staff: bool = False, **fields):
    """A user with ``PASSWORD``, in the role ``group`` (``reviewer.roles``); ``staff`` makes a superuser."""
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, is_staff=staff,
                                                is_superuser=staff, **fields)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


# Units of the facts tests name by keyword (make_incident(eta_minutes=30)); any other fact is text.
FACT_UNITS = {"affected_checkout_pct": ("Checkouts affected", "%"),
              "failed_payment_rate": ("Failed payment rate", "ratio"),
              "chargeback_alerts": ("Chargeback alerts", "count"), "eta_minutes": ("ETA", "minutes")}


def make_incident(incident_id: str = "inc_test_1", *, facts=(), **fields) -> Incident:
    """An incident in the EU, degraded; ``fields`` override these, and those that are no column of
    Incident are facts (``eta_minutes=30``); ``facts`` adds (key, label, value, unit) rows."""
    columns = {f.name for f in Incident._meta.get_fields()}
    keyword_facts = [(key, *FACT_UNITS.get(key, (key, "text"))[:1], str(value), FACT_UNITS.get(key, ("", "text"))[1])
                     for key, value in fields.items() if key not in columns]
    incident = Incident.objects.create(incident_id=incident_id, **{
        "title": "Payment problems in the EU", "regions": ["EU"], "status": "degraded",
        **{k: v for k, v in fields.items() if k in columns}})
    for position, (key, label, value, unit) in enumerate([*keyword_facts, *facts]):
        IncidentFact.objects.create(incident=incident, position=position, key=key, label=label, value=value, unit=unit)
    return incident


def make_run(pipeline: str = "reflection", *, goal: str = "Write it.", snapshot: bool = False, **fields) -> Run:
    """A run row (queued unless ``status`` says otherwise), as a worker would have left it.

    ``snapshot=True`` also stores what ``start_run`` snapshots: the incident's context (if any) and
    the pipeline's default policy.
    """
    if snapshot:
        incident = fields.get("incident")
        fields = {"context": incident.context() if incident is not None else {},
                  "policy": default_policy(pipeline).to_dict(), **fields}
    return Run.objects.create(pipeline=pipeline, goal=goal, **fields)


def make_escalation(run: Run | None = None, *, incident: Incident | None = None, pipeline: str = "reflection",
                    goal: str = "Write the update.", stop_reason: str = "policy_escalation",
                    text: str = "We are investigating a problem in the EU. Current status: degraded.",
                    age_minutes: float = 0, **fields) -> Escalation:
    """A pending escalation opened ``age_minutes`` ago.

    On ``run``, it holds what the run stopped with, as the product opens it: the run's stop reason,
    reason, candidate (also as the draft) and guard. Without ``run``, it is on a new run that a gate
    stopped on ``incident`` (no pipeline executed), with ``text`` as the draft and the candidate.
    """
    if run is None:
        run = make_run(pipeline, goal=goal, incident=incident, snapshot=True, status=Run.Status.STOPPED,
                       stop_reason=stop_reason)
        fields = {"draft": text, "candidate": text, "reason": "Needs a person.", **fields}
    else:
        fields = {"stop_reason": run.stop_reason, "reason": run.escalation_reason, "draft": run.candidate,
                  "candidate": run.candidate, "guard": run.guard, **fields}
    fields.setdefault("stop_reason", stop_reason)
    return Escalation.objects.create(run=run, opened_at=timezone.now() - timedelta(minutes=age_minutes), **fields)


# -- helpers --------------------------------------------------------------------------------------


def make_subscriber(email: str = "customer@example.com", *components, confirmed: bool = True, **fields) -> Subscriber:
    """A status page subscriber to ``components`` (none: every update), confirmed unless told otherwise."""
    subscriber = Subscriber.objects.create(email=email, confirmed_at=timezone.now() if confirmed else None, **fields)
    subscriber.components.set(components)
    return subscriber


def wait_for(predicate, timeout: float = 30, every: float = 0.05, message: str = "condition"):
    """The first truthy value of ``predicate()``, polled until ``timeout`` (for another process's work)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def database_url() -> str:
    """The URL of the database this test is using (the test database), for another process."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    if connection.vendor == "postgresql":
        auth = quote(db["USER"] or "") + (":" + quote(db["PASSWORD"]) if db.get("PASSWORD") else "")
        return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    raise RuntimeError(f"no worker support for {connection.vendor}")


# -- a webhook receiver on loopback ---------------------------------------------------------------


def documented_verify():
    """The ``verify`` function of the webhook snippet in docs/publishing.md ("The webhook"), exactly
    as written there."""
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "publishing.md").read_text()
    after = page.split("<!-- webhook-verify", 1)[1]
    code = after.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, "docs/publishing.md (webhook-verify)", "exec"), namespace)  # our own docs' code
    return namespace["verify"]


class WebhookReceiver:
    """A real HTTP server on 127.0.0.1 that verifies each request's signature with the documented snippet,
    counts requests per Idempotency-Key and keeps the first body of each key (a receiver that drops
    duplicates; ``secret=None`` checks no signature, as Slack). ``fail_rate`` and ``timeout_rate``
    make it answer 500 or hang past the client's timeout at random (``seed`` replays the draw);
    ``redirect=(307, url)`` makes it answer every request with that redirect instead, and
    ``retry_after="120"`` with 429 Too Many Requests and that ``Retry-After``."""

    def __init__(self, secret: str | None, *, fail_rate: float = 0.0, timeout_rate: float = 0.0,
                 hang_seconds: float = 3, seed: int = 0, redirect: tuple[int, str] | None = None,
                 retry_after: str | None = None):
        import json
        import random
        import threading
        from collections import Counter
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.secret, self.verify = secret, documented_verify()
        self.fail_rate, self.timeout_rate, self.hang_seconds = fail_rate, timeout_rate, hang_seconds
        self.redirect, self.retry_after = redirect, retry_after
        self.random = random.Random(seed)
        self.requests: Counter = Counter()  # per Idempotency-Key, every request that verified
        self.accepted: dict[str, dict] = {}  # per key, the body first answered 2xx
        self.bad_signatures = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                header = self.headers.get("X-Signature", "")
                key = self.headers.get("Idempotency-Key", "")
                signed = receiver.secret is None or receiver.verify(receiver.secret, header, key, body)
                if not signed:
                    with receiver.lock:
                        receiver.bad_signatures += 1
                    return self._answer(401)
                with receiver.lock:
                    receiver.requests[key] += 1
                    draw = receiver.random.random()
                if receiver.redirect:
                    return self._answer(*receiver.redirect)
                if receiver.retry_after is not None:
                    return self._answer(429, retry_after=receiver.retry_after)
                if draw < receiver.timeout_rate:
                    with receiver.lock:  # processed, but answered too late: the sender will send it again
                        receiver.accepted.setdefault(key, json.loads(body))
                    time.sleep(receiver.hang_seconds)
                    return self._answer(200)
                if draw < receiver.timeout_rate + receiver.fail_rate:
                    return self._answer(500)
                with receiver.lock:
                    receiver.accepted.setdefault(key, json.loads(body))  # a duplicate key is dropped
                return self._answer(200)

            def _answer(self, status, location="", retry_after=""):
                try:
                    self.send_response(status)
                    if location:
                        self.send_header("Location", location)
                    if retry_after:
                        self.send_header("Retry-After", retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender hung up

            def log_message(self, *args):
                pass

            do_GET = do_PUT = do_POST  # a sender that followed a redirect as GET is counted too

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
