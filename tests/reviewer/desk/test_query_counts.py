"""Every page and API list runs as many queries on a small store as on one ten times larger.

Each page is requested once on a small store and once after every kind of row it lists has grown
tenfold (runs of every status with steps and calls, failed runs with retries, pending and decided
escalations with decisions, incidents with versions, published updates with their deliveries,
deadline breaches, a run in flight with its trace, polled for the steps after its second); the second
request may not run more queries than the first.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import IncidentVersion, ModelCall, Run, TraceStep
from reviewer.models import ApiToken, DeadlineBreach, Decision, Delivery, DeliveryChannel, PublishedUpdate
from tests.factories import make_escalation, make_incident, make_run

PAGES = [
    ("dashboard", lambda d: "/", {}),
    ("inbox", lambda d: "/inbox/", {}),
    ("inbox, filtered", lambda d: "/inbox/?stop_reason=policy_escalation&pipeline=reflection", {}),
    ("escalation page", lambda d: f"/escalations/{d['escalation']}/", {}),
    ("incident list", lambda d: "/incidents/", {}),
    ("incident page", lambda d: f"/incidents/{d['incident']}/", {}),
    ("runs list", lambda d: "/runs/", {}),
    ("failed runs", lambda d: "/runs/failed/", {}),
    ("run page", lambda d: f"/runs/{d['run']}/", {}),
    ("run trace fragment", lambda d: f"/runs/{d['run']}/trace/", {"HTTP_HX_REQUEST": "true"}),
    ("run page, in flight", lambda d: f"/runs/{d['live']}/", {}),
    ("run trace fragment, in flight", lambda d: f"/runs/{d['live']}/trace/", {"HTTP_HX_REQUEST": "true"}),
    ("run trace fragment, new steps only",
     lambda d: f"/runs/{d['live']}/trace/?after=2&call={d['live_call']}&delivery=1", {"HTTP_HX_REQUEST": "true"}),
    ("API incidents", lambda d: "/api/incidents", {"api": True}),
    ("API runs", lambda d: "/api/runs", {"api": True}),
    ("API escalations", lambda d: "/api/escalations", {"api": True}),
    ("status page", lambda d: "/status/", {}),
    ("deadline breaches", lambda d: "/breaches/", {}),
    ("API incident updates", lambda d: f"/api/incidents/{d['incident']}/updates", {"api": True}),
    ("ready to publish", lambda d: "/publish/", {}),
    ("runs list, ready to publish", lambda d: "/runs/?ready=on", {}),
    ("API ready to publish", lambda d: "/api/ready", {"api": True}),
]


def grow(n: int, users, first: dict | None = None) -> dict:
    """n of every kind of row; returns the ids the pages are requested for."""
    now = timezone.now()
    incidents = [make_incident(f"inc_q_{IncidentVersion.objects.count()}_{i}") for i in range(n)]
    status_page, _ = DeliveryChannel.objects.get_or_create(kind="status", defaults={"name": "Status page"})
    for incident in incidents:
        incident.record_version(users.ops)
        IncidentVersion.objects.create(incident=incident, number=2, snapshot=incident.snapshot(), changes=[])
    hot = incidents[0] if first is None else type(incidents[0]).objects.get(incident_id=first["incident"])
    for incident in [*incidents, *[hot] * n]:  # two updates each, and the hot incident's grow too
        for _ in range(2):
            update = PublishedUpdate.objects.create(
                incident=incident, version=incident.published_updates.count() + 1, text="An update.",
                text_hash="0" * 12, published_by=users.ops, published_at=now)
            Delivery.objects.create(update=update, channel=status_page, status="delivered", attempts=1,
                                    delivered_at=now)
    for i in range(n):
        incident = incidents[i % len(incidents)]
        ok = make_run("reflection", incident=incident, status="ok", stop_reason="success", triggered_by=users.ops,
                      finished_at=now, model_calls=2)
        for index in range(1, 4):
            TraceStep.objects.create(run=ok, index=index, phase="draft", output="A draft.")
        ModelCall.objects.create(run=ok, stage="draft", model="m", latency_ms=5, prompt_tokens=3, completion_tokens=2)
        failed = make_run("routing", status="stopped", stop_reason="llm_timeout", finished_at=now)
        make_run("routing", status="queued", retry_of=failed)
        make_run("self_critique", status="interrupted", stop_reason="worker_lost", finished_at=now)
        pending = make_escalation(incident=incident, age_minutes=i)
        DeadlineBreach.objects.create(escalation=make_escalation(incident=incident, age_minutes=i),
                                      deadline_at=now - timedelta(minutes=1))
        decided = make_escalation(incident=incident, status="approved", decided_by=users.lead,
                                  decided_at=now - timedelta(minutes=i), final_text="Fine.")
        Decision.objects.create(escalation=decided, actor=users.lead, at=now, action="approve", final_text="Fine.")
    # a run in flight whose trace grows by n steps and n model calls (its page polls for the new ones)
    live = make_run("self_critique", status="running", deliveries=1) if first is None \
        else Run.objects.get(pk=first["live"])
    have = live.steps.count()
    for index in range(have + 1, have + n + 1):
        phase = "revise" if index % 2 else "critique"
        TraceStep.objects.create(run=live, index=index, phase=phase, output="A revision.")
        ModelCall.objects.create(run=live, stage=phase, model="m", latency_ms=5, prompt_tokens=3, completion_tokens=2)
    return first or {"escalation": pending.pk, "incident": incidents[0].incident_id, "run": ok.pk, "live": live.pk,
                     "live_call": live.calls.order_by("id")[1].pk}


def queries(client, url: str, headers: dict, token: str) -> int:
    headers = dict(headers)
    if headers.pop("api", False):
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
    assert response.status_code in (200, 286), (url, response.status_code, response.content[:300])
    return len(captured)


@pytest.mark.django_db
def test_no_page_or_api_list_runs_more_queries_on_a_larger_store(client, users):
    superuser = users.admin
    superuser.is_superuser = True
    superuser.save()
    client.force_login(superuser)
    token = ApiToken.issue(superuser, "counts")[1]
    ids = grow(3, users)
    small = {name: queries(client, url(ids), headers, token) for name, url, headers in PAGES}
    grow(30, users, ids)
    large = {name: queries(client, url(ids), headers, token) for name, url, headers in PAGES}
    grew = {name: (small[name], large[name]) for name in small if large[name] > small[name]}
    assert not grew, f"queries grew with the data (small, large): {grew}"
