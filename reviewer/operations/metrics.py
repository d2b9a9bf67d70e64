"""``/metrics``: the product's figures in Prometheus' text format, read from the database at scrape time.

Runs execute in Celery workers, decisions are made in web processes, deliveries and notifications are
sent by workers on other hosts: every one of them is recorded as a row. So the figures are not counted
in any process's memory; :class:`DatabaseCollector` aggregates the recorded rows when Prometheus
scrapes, with a fixed number of aggregate queries (GROUP BY, conditional counts for histogram buckets)
whatever the number of rows. Every series is listed in docs/operations.md ("Metrics").

The endpoint is for a monitoring system only: a request must come from ``METRICS_ALLOWED_NETWORKS``
(loopback unless set) and, when ``METRICS_TOKEN`` is set, carry it as ``Authorization: Bearer``.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections import Counter
from datetime import timedelta

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.db.models import Count, Max, Min, Q, Sum
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import generate_latest

from agents.models import ModelCall, Run
from reviewer.models import DeadlineBreach, Decision, Delivery, Escalation, Notification
from reviewer.models.learning import scorecard

PREFIX = "gated_review_"
# Histogram bounds in seconds: a whole run (several model calls), and one model call.
RUN_SECONDS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
CALL_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# From an escalation's opening to its final decision: a minute to a week.
DECISION_SECONDS = (60, 300, 900, 1800, 3600, 4 * 3600, 8 * 3600, 86400, 3 * 86400, 7 * 86400)
# Stop reasons that name the guard's check which stopped the run (agents/core/guard/patch.py).
GUARD_PREFIXES = ("patch_violation:", "invalid_answer:")
CIRCUIT_OPEN = "llm_circuit_open"
# The classic text format, which every Prometheus version reads (what generate_latest writes).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def breaker_cooldown() -> float:
    """The workers' breaker cool-down (``LLM_BREAKER_COOLDOWN_SECONDS``, as agents.core.llm.client reads it)."""
    try:
        return max(float(os.environ.get("LLM_BREAKER_COOLDOWN_SECONDS") or 30), 0.0)
    except ValueError:
        return 30.0


def buckets(field: str, bounds: tuple[float, ...], scale: float = 1000) -> dict:
    """One conditional count per bound (``field`` in milliseconds, bounds in seconds): a GROUP BY that
    reads its index in order then needs no sort (a GROUP BY on a CASE per row sorted every row: slower)."""
    return {f"le_{i}": Count("id", filter=Q(**{f"{field}__lte": bound * scale})) for i, bound in enumerate(bounds)}


def cumulative(counts: Counter, bounds: tuple[float, ...], total: int) -> list[tuple[str, int]]:
    """Prometheus' buckets, each counting every value up to its bound, then +Inf: ``total``."""
    return [*[(str(float(bound)), counts[f"le_{i}"]) for i, bound in enumerate(bounds)], ("+Inf", total)]


def age_seconds(oldest, now) -> float:
    return max((now - oldest).total_seconds(), 0.0) if oldest else 0.0


class DatabaseCollector:
    """The figures of every process, aggregated from the rows they recorded (one scrape: 15 queries)."""

    def collect(self):
        now = timezone.now()
        yield from self.runs()
        yield from self.queue(now)
        yield from self.model_calls()
        yield from self.circuit_breakers(now)
        yield from self.escalations(now)
        yield from self.decisions()
        yield from self.review_outcomes()
        yield from self.decision_times()
        yield from self.quorum_agreement()
        yield from self.deliveries()
        yield from self.notifications()
        yield from guard_scorecard(now)

    def runs(self):
        """Runs, guard violations, durations and tokens: one GROUP BY read from the ``run_metrics`` index."""
        rows = Run.objects.order_by().values("pipeline", "status", "stop_reason").annotate(
            n=Count("id"), timed=Count("id", filter=Q(duration_ms__isnull=False)), total_ms=Sum("duration_ms"),
            prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), **buckets("duration_ms", RUN_SECONDS))
        runs = CounterMetricFamily(PREFIX + "runs", "Finished runs, by pipeline, final status and stop reason.",
                                   labels=["pipeline", "status", "stop_reason"])
        guard = CounterMetricFamily(PREFIX + "guard_violations",
                                    "Runs stopped by a guard check, by the check that stopped them.", labels=["check"])
        durations = HistogramMetricFamily(PREFIX + "run_duration_seconds",
                                          "Wall time of finished runs, from start to end, by pipeline.",
                                          labels=["pipeline"])
        tokens = CounterMetricFamily(PREFIX + "model_tokens", "Tokens of the model calls of finished runs, "
                                     "by pipeline and direction (input: the prompt; output: the answer).",
                                     labels=["pipeline", "direction"])
        finished, by_check = Counter(), Counter()
        totals: dict[str, Counter] = {}
        for row in rows:
            if row["status"] not in Run.IN_FLIGHT:
                finished[row["pipeline"], row["status"], row["stop_reason"]] += row["n"]
            if row["stop_reason"].startswith(GUARD_PREFIXES):
                by_check[row["stop_reason"]] += row["n"]
            totals.setdefault(row["pipeline"], Counter()).update(
                {key: value or 0 for key, value in row.items() if key not in ("pipeline", "status", "stop_reason")})
        for labels, n in sorted(finished.items()):
            runs.add_metric(list(labels), n)
        for check, n in sorted(by_check.items()):
            guard.add_metric([check], n)
        for pipeline, total in sorted(totals.items()):
            durations.add_metric([pipeline], cumulative(total, RUN_SECONDS, total["timed"]), total["total_ms"] / 1000)
            tokens.add_metric([pipeline, "input"], total["prompt"])
            tokens.add_metric([pipeline, "output"], total["completion"])
        yield from (runs, guard, durations, tokens)

    def queue(self, now):
        # The in-flight runs only, found by the run_failed_newest index (status first, created_at in it).
        row = Run.objects.filter(status__in=Run.IN_FLIGHT).order_by().aggregate(
            queued=Count("id", filter=Q(status=Run.Status.QUEUED)),
            running=Count("id", filter=Q(status=Run.Status.RUNNING)),
            oldest=Min("created_at", filter=Q(status=Run.Status.QUEUED)))
        yield GaugeMetricFamily(PREFIX + "runs_queued", "Runs waiting for a worker.", value=row["queued"])
        yield GaugeMetricFamily(PREFIX + "runs_running", "Runs a worker is executing.", value=row["running"])
        yield GaugeMetricFamily(PREFIX + "oldest_queued_run_age_seconds",
                                "How long the oldest queued run has waited (0: none waits).",
                                value=age_seconds(row["oldest"], now))

    def model_calls(self):
        """The latency histogram by outcome: one GROUP BY read from the ``model_call_latency`` index."""
        rows = ModelCall.objects.order_by().values("outcome").annotate(
            n=Count("id"), total_ms=Sum("latency_ms"), **buckets("latency_ms", CALL_SECONDS))
        calls = HistogramMetricFamily(PREFIX + "model_call_duration_seconds",
                                      "Latency of each request to a model endpoint, by outcome (ok, or the "
                                      "stop reason it failed with; llm_circuit_open: refused, never sent).",
                                      labels=["outcome"])
        for row in rows:
            calls.add_metric([row["outcome"]], cumulative(row, CALL_SECONDS, row["n"]), (row["total_ms"] or 0) / 1000)
        yield calls

    def circuit_breakers(self, now):
        """Each worker process keeps its own breaker per endpoint (agents/core/llm/breaker.py), and a
        refused call is recorded (outcome ``llm_circuit_open``). An endpoint's breaker counts as open
        when some worker refused a call there within the cool-down and no call there succeeded since."""
        since = now - timedelta(seconds=breaker_cooldown())
        rows = ModelCall.objects.filter(created_at__gte=since).order_by().values("run__endpoint").annotate(
            refused=Max("created_at", filter=Q(outcome=CIRCUIT_OPEN)), ok=Max("created_at", filter=Q(outcome="ok")))
        state = GaugeMetricFamily(PREFIX + "circuit_breaker_open",
                                  "1 while a worker's circuit breaker refuses calls to the endpoint (a refusal "
                                  "within the cool-down, no success since), else 0; endpoints called within "
                                  "the cool-down.", labels=["endpoint"])
        for row in rows:
            is_open = row["refused"] is not None and (row["ok"] is None or row["ok"] < row["refused"])
            state.add_metric([row["run__endpoint"] or "offline"], 1 if is_open else 0)
        yield state

    def escalations(self, now):
        rows = {row["status"]: row for row in Escalation.objects.order_by().values("status").annotate(
            n=Count("id"), oldest=Min("opened_at"), overdue=Count("id", filter=Q(deadline_at__lt=now)))}
        by_status = GaugeMetricFamily(PREFIX + "escalations", "Escalations, by status (pending: waiting for a "
                                      "person's decision).", labels=["status"])
        for status in Escalation.Status.values:
            by_status.add_metric([status], rows.get(status, {}).get("n", 0))
        pending = rows.get(Escalation.Status.PENDING, {})
        yield by_status
        yield GaugeMetricFamily(PREFIX + "oldest_pending_escalation_age_seconds",
                                "How long the oldest pending escalation has waited for a decision (0: none).",
                                value=age_seconds(pending.get("oldest"), now))
        yield GaugeMetricFamily(PREFIX + "escalations_overdue", "Pending escalations past their deadline.",
                                value=pending.get("overdue", 0))
        yield CounterMetricFamily(PREFIX + "deadline_breaches", "Escalations whose deadline passed undecided.",
                                  value=DeadlineBreach.objects.count())

    def decisions(self):
        family = CounterMetricFamily(PREFIX + "decisions", "Decisions people made on escalations, by action.",
                                     labels=["action"])
        counts = dict(Decision.objects.order_by().values_list("action").annotate(n=Count("id")))
        for action in Decision.Action.values:
            family.add_metric([action], counts.get(action, 0))
        yield family

    # -- the review analytics (docs/analytics.md): never a figure per person, whoever reads the monitoring

    def review_outcomes(self):
        """How decided escalations ended, by pipeline: one GROUP BY."""
        rows = (Escalation.objects.decided().with_outcome().order_by().values("run__pipeline", "review_outcome")
                .annotate(n=Count("id")))
        family = CounterMetricFamily(PREFIX + "escalation_outcomes", "Decided escalations, by pipeline and how "
                                     "they ended (as_is, edited, changes_requested, rejected).",
                                     labels=["pipeline", "outcome"])
        for row in rows:
            family.add_metric([row["run__pipeline"], row["review_outcome"]], row["n"])
        yield family

    def decision_times(self):
        """Time from an escalation's opening to its final decision, by pipeline and severity: one GROUP
        BY with a conditional count per bucket."""
        within = {f"le_{i}": Count("id", filter=Q(decision_seconds__lte=bound))
                  for i, bound in enumerate(DECISION_SECONDS)}
        rows = (Escalation.objects.decided().with_decision_time().order_by().values("run__pipeline", "severity")
                .annotate(n=Count("id"), total=Sum("decision_seconds"), **within))
        family = HistogramMetricFamily(PREFIX + "time_to_decision_seconds", "From an escalation's opening to its "
                                       "final decision, by pipeline and the incident's severity (none: no incident).",
                                       labels=["pipeline", "severity"])
        for row in rows:
            family.add_metric([row["run__pipeline"], row["severity"] or "none"],
                              cumulative(row, DECISION_SECONDS, row["n"]), row["total"])
        yield family

    def quorum_agreement(self):
        """Decided escalations that needed more than one approval, by whether the approvers agreed: one query."""
        agreed = Q(changed_after_approval=False, rejected_after_approval=False)
        row = Escalation.objects.decided().filter(required_approvals__gt=1).with_agreement().aggregate(
            yes=Count("id", filter=agreed), no=Count("id", filter=~agreed))
        family = CounterMetricFamily(PREFIX + "quorum_escalations", "Decided escalations that needed more than one "
                                     "approval: agreed (no approval set aside by a later change of the text or a "
                                     "rejection) or disagreed.", labels=["approvers"])
        family.add_metric(["agreed"], row["yes"])
        family.add_metric(["disagreed"], row["no"])
        yield family

    def deliveries(self):
        rows = Delivery.objects.order_by().values("channel__name", "channel__kind", "status").annotate(n=Count("id"))
        family = GaugeMetricFamily(PREFIX + "deliveries", "Outbox rows, by channel, channel kind and state "
                                   "(failed: dead-lettered; held: may have gone out, a person checks).",
                                   labels=["channel", "kind", "status"])
        for row in rows:
            family.add_metric([row["channel__name"], row["channel__kind"], row["status"]], row["n"])
        yield family

    def notifications(self):
        rows = Notification.objects.order_by().values("event", "status").annotate(n=Count("id"))
        family = GaugeMetricFamily(PREFIX + "notifications", "Notifications about escalations, by event and "
                                   "state (failed: given up after its retries).", labels=["event", "status"])
        for row in rows:
            family.add_metric([row["event"], row["status"]], row["n"])
        yield family


# The learning loop's scorecard (docs/learning-loop.md) over the decisions of the last days: a scrape
# reads one window, not the whole history.
SCORECARD_DAYS = 7
SCORECARD_OUTCOMES = ("fired", "overridden", "edit_removed", "rejected")


def guard_scorecard(now):
    """The guard's scorecard of the last ``SCORECARD_DAYS`` days, per check, claim family and outcome, and
    its misses (a fixed number of queries: reviewer.models.learning.labels reads the decisions at once)."""
    card = scorecard(Decision.objects.filter(at__gte=now - timedelta(days=SCORECARD_DAYS)))
    family = GaugeMetricFamily(PREFIX + "guard_scorecard", f"Final decisions of the last {SCORECARD_DAYS} days "
                               "whose text a check fired on, by check, claim family and what the lead did (fired: "
                               "all of them; overridden, edit_removed, rejected).",
                               labels=["check", "family", "outcome"])
    for figures in card.checks:
        for outcome in SCORECARD_OUTCOMES:
            family.add_metric([figures.check, figures.family, outcome], getattr(figures, outcome))
    yield family
    misses = GaugeMetricFamily(PREFIX + "guard_misses", f"What no check flagged in the last {SCORECARD_DAYS} days: "
                               "edits that removed unflagged words (unflagged_removal), approved texts a later "
                               "correction of the facts contradicted (contradicted).", labels=["kind"])
    misses.add_metric(["unflagged_removal"], card.missed_edits)
    misses.add_metric(["contradicted"], card.contradicted)
    yield misses


def exposition() -> bytes:
    """The scrape's body: every series of :class:`DatabaseCollector`, in the text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    return generate_latest(registry)


def refusal(request) -> HttpResponse | None:
    """The answer to a request that may not read the metrics, or None. The token is compared in
    constant time and never logged or echoed."""
    networks = settings.METRICS_ALLOWED_NETWORKS
    if networks is not None:
        try:
            address = ipaddress.ip_address(get_client_ip_address(request) or "")
        except ValueError:
            address = None
        if address is None or not any(address in network for network in networks):
            return HttpResponse("Metrics are not served to this address (METRICS_ALLOWED_NETWORKS).\n",
                                status=403, content_type="text/plain; charset=utf-8")
    if settings.METRICS_TOKEN:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(),
                                                                  settings.METRICS_TOKEN.encode()):
            response = HttpResponse("Metrics need the bearer token METRICS_TOKEN names: "
                                    "Authorization: Bearer <token>.\n", status=401,
                                    content_type="text/plain; charset=utf-8")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    return None


@require_GET
def metrics(request):
    if (refused := refusal(request)) is not None:
        return refused
    return HttpResponse(exposition(), content_type=CONTENT_TYPE)

