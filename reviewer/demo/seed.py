"""Demo incidents, users and runs. Everything here is idempotent: a second call reuses
what exists."""

from __future__ import annotations

import json
import secrets
from datetime import date
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from agents.core.llm.offline import OfflineModel
from agents.incidents import update_incident
from agents.models import Incident, Run
from agents.store import load_demo_data
from reviewer.models import (
    DeadlineRule,
    DeliveryChannel,
    HoldingStatement,
    NotificationChannel,
    StatusComponent,
)
from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD

CONTEXT_FILE = Path(settings.BASE_DIR) / "agents" / "fixtures" / "demo_context.json"


def incident_from_context(context: dict) -> dict:
    """The incident of a run context (the inverse of ``Incident.context()``): its identity, and its
    public facts as (key, label, value, unit); the report date is left to the day the incidents are
    loaded."""
    values = context["incident"]
    return {
        "incident_id": values["incident_id"], "title": values["title"], "severity": values.get("severity", ""),
        "state": values.get("state", "investigating"), "status": values.get("status", ""),
        "regions": [r.strip() for r in context.get("region", "").split(",")],
        "policy_hints": context.get("policy_hints", {}), "approved_actions": context.get("approved_actions", []),
        "facts": [(m["key"], m["label"], str(values[m["key"]]), m["unit"]) for m in context.get("fact_meta", [])],
    }


# Three kinds of incident, each with its own facts: (key, label, value, unit), and "internal" after
# them for a fact that is context for people and the reviewer only (a person, a host, a ticket).
INCIDENTS = [
    # The demo's payment incident, defined once: the context file the README's run_pipeline command reads.
    incident_from_context(json.loads(CONTEXT_FILE.read_text())),
    {
        "incident_id": "inc_api_4021",
        "title": "Public API latency (mitigated)",
        "regions": ["EU"], "severity": "P2", "state": "monitoring", "status": "mitigated",
        "policy_hints": {"avoid_absolute_guarantees": True},
        "approved_actions": ["watch API latency dashboards",
                             "publish customer update via status page every 30 minutes"],
        "facts": [
            ("p95_latency_ms", "p95 latency", "1800", "ms"),
            ("api_error_rate", "API error rate", "0.021", "ratio"),
            ("affected_endpoints", "Affected endpoints", "/v2/orders and /v2/payments", "text"),
            ("next_update_minutes", "Next update", "30", "minutes"),
            ("on_call_engineer", "On-call engineer", "Dana Whitfield", "text", "internal"),
            ("gateway_host", "Gateway host", "api-gw-2.eu.internal", "text", "internal"),
        ],
    },
    {
        "incident_id": "inc_wallet_77",
        "title": "Wallet top-ups failing in the EU",
        "regions": ["EU"], "severity": "P2", "state": "investigating", "status": "degraded",
        # Wallet updates stay short: a revision may grow the text by 10% at most (the demo's self-critique
        # run is blocked by it, and a lead decides).
        "policy_hints": {"avoid_absolute_guarantees": True, "max_length_increase_pct": 10},
        "facts": [("eta_minutes", "ETA", "30", "minutes"), ("next_update_minutes", "Next update", "30", "minutes")],
    },
    {
        "incident_id": "inc_region_eu_3",
        "title": "Regional outage: EU and UK data centres",
        "regions": ["EU", "UK"], "severity": "P1", "state": "identified", "status": "partial outage",
        "policy_hints": {"avoid_absolute_guarantees": True},
        "approved_actions": ["fail traffic over to healthy zones",
                             "publish customer update via status page every 20 minutes"],
        "facts": [
            ("availability_zones_down", "Availability zones down", "2", "count"),
            ("requests_failing_pct", "Requests failing", "12", "%"),
            ("eta_minutes", "ETA", "90", "minutes"),
            ("next_update_minutes", "Next update", "20", "minutes"),
            ("failover_ticket", "Failover change ticket", "OPS-512", "text", "internal"),
        ],
    },
]

USERS = [
    ("lead", "Support lead", SUPPORT_LEAD, False),
    # A second lead: an approval rule that asks for two approvals can be completed in the demo.
    ("lead2", "Second lead", SUPPORT_LEAD, False),
    ("ops", "Ops staff", OPS, False),
    ("admin", "Admin", POLICY_ADMIN, True),
]

# (pipeline, incident, goal): together they leave approved, revised, escalated, blocked and failed runs.
RUNS = [
    ("reflection", "inc_pay_2041", "Write the customer update for the P1 payment degradation."),
    ("reflection", "inc_api_4021", "Write a short customer update on the API latency incident."),
    ("reflection", "inc_pay_2041", "Tell affected customers they will receive service credits for failed payments."),
    ("self_critique", "inc_wallet_77", "Write the customer update for the wallet top-up failures."),
    ("self_critique", "inc_pay_2041", "Write the customer update for the P1 payment degradation."),
    ("routing", None, "I was charged twice for my subscription, please refund me. user_id=42"),
    ("routing", None, "The public API returns errors and latency is high since this morning."),
    ("routing", None, "Hello, I have a question."),
]


def load_incidents(today: date | None = None) -> list[Incident]:
    incidents = []
    for spec in INCIDENTS:
        fields = {k: v for k, v in spec.items() if k not in ("incident_id", "facts")}
        facts = [{"key": key, "label": label, "value": value, "unit": unit, "visibility": visibility}
                 for key, label, value, unit, visibility in (row if len(row) == 5 else (*row, "public")
                                                             for row in spec["facts"])]
        change = update_incident(spec["incident_id"], report_date=today or date.today(), facts=facts, **fields)
        incidents.append(change.incident)
    return incidents


def new_password(user) -> str:
    """A random password that Django's password validators accept (AUTH_PASSWORD_VALIDATORS)."""
    while True:
        password = secrets.token_urlsafe(12)
        try:
            validate_password(password, user)
        except ValidationError:
            continue
        return password


def ensure_users(logins_file: Path) -> dict[str, str]:
    """The demo users, one per role. Passwords are random on first creation and kept in a local
    file (never in the repository) so that a second start can print them again."""
    logins = json.loads(logins_file.read_text()) if logins_file.exists() else {}
    User = get_user_model()
    for username, first_name, group, staff in USERS:
        user, created = User.objects.get_or_create(username=username, defaults={"first_name": first_name})
        if created or username not in logins:
            logins[username] = new_password(user)
            user.set_password(logins[username])
        # The admin is a policy admin (staff, for the admin site), not a superuser: deciding escalations
        # and starting runs stay with their roles. A superuser is made by hand (createsuperuser).
        user.is_staff = staff
        user.is_superuser = False
        user.save()
        user.groups.add(Group.objects.get(name=group))
    logins_file.parent.mkdir(parents=True, exist_ok=True)
    logins_file.write_text(json.dumps(logins, indent=2))
    logins_file.chmod(0o600)
    return logins


def run_demo_pipelines(user=None) -> list[Run]:
    """Run the demo set in-process with the offline model, once (skipped when runs exist)."""
    from agents.tasks import run_now, start_run

    if Run.objects.exists():
        return []
    runs = []
    for pipeline, incident_id, goal in RUNS:
        incident = Incident.objects.get(incident_id=incident_id) if incident_id else None
        run, _ = start_run(pipeline=pipeline, goal=goal, incident=incident, user=user, enqueue=False)
        run_now(run.pk, llm=OfflineModel())
        runs.append(run)
    return runs


DEMO_EMAIL_CHANNEL = "Customer email (demo)"
DEMO_RECIPIENTS = "customers@example.com"
# The destinations the demo declares (OUTBOUND_DESTINATIONS, set by manage.py demo): each a path of the
# demo's receiver on loopback, which logs what it gets to var/demo-receiver.log.
DEMO_DESTINATIONS = {"demo-webhook": "/webhook", "demo-slack": "/slack", "demo-alerts": "/notifications"}
DEMO_WEBHOOK_SECRET_VARIABLE = "DEMO_WEBHOOK_SECRET"
# Where published updates go besides the status page (a migration adds it): name -> (kind, destination,
# recipients).
DEMO_CHANNELS = {
    DEMO_EMAIL_CHANNEL: ("email", "", DEMO_RECIPIENTS),
    "Partner webhook (demo)": ("webhook", "demo-webhook", ""),
    "#status-updates (demo)": ("slack", "demo-slack", ""),
    "Status page subscribers (demo)": ("subscribers", "", ""),
}
# Who is told about escalations: name -> (group, events).
DEMO_NOTIFICATION_CHANNELS = {
    "Support leads on call (demo)": ("leads", ["opened", "reminder"]),
    "Second group (demo)": ("second", ["breach"]),
    "Ops on duty (demo)": ("ops", ["approved"]),
    "Policy admins (demo)": ("admins", ["unmeetable"]),  # an approval rule that can no longer be met
}
# The parts of the service customers know by name, on the status page: (name, description).
DEMO_COMPONENTS = [
    ("Checkout", "Paying for orders by card and wallet."),
    ("Public API", "The REST API for integrations."),
    ("Wallet", "Topping up and spending the wallet balance."),
    ("Sign-in", "Signing in to the website and the apps."),
]


def demo_destinations(receiver_port: int) -> str:
    """The OUTBOUND_DESTINATIONS of the demo: every destination on the receiver at ``receiver_port``."""
    return ";".join(f"{name}=http://127.0.0.1:{receiver_port}{path}"
                    + (f"|{DEMO_WEBHOOK_SECRET_VARIABLE}" if name == "demo-webhook" else "")
                    for name, path in DEMO_DESTINATIONS.items())


def ensure_channels() -> None:
    """The delivery channels (email, a signed webhook and Slack, both to the demo's receiver), the
    notification channels to the receiver and the status page's components; each made once, by name."""
    for name, (kind, destination, recipients) in DEMO_CHANNELS.items():
        DeliveryChannel.objects.get_or_create(name=name, defaults={"kind": kind, "destination": destination,
                                                                   "recipients": recipients})
    for name, (group, events) in DEMO_NOTIFICATION_CHANNELS.items():
        NotificationChannel.objects.get_or_create(name=name, defaults={"destination": "demo-alerts", "group": group,
                                                                       "events": events})
    for position, (name, description) in enumerate(DEMO_COMPONENTS):
        StatusComponent.objects.get_or_create(name=name, defaults={"description": description, "position": position})


# The demo's deadline rules (admin → Deadline rules), made once: a P1 waits 10 minutes, a P2 30, any
# other escalation two hours.
DEADLINE_RULES = [("P1", 10, 3), ("P2", 30, 10), ("", 120, 30)]


def load_deadline_rules() -> None:
    if not DeadlineRule.objects.exists():
        DeadlineRule.objects.bulk_create(DeadlineRule(severity=severity, minutes=minutes, reminder_minutes=lead)
                                         for severity, minutes, lead in DEADLINE_RULES)


# A holding statement for each P1 incident, approved by the demo admin once it passes the guard: what
# ops may publish with one click when a P1 escalation's deadline passes (see /breaches/).
# It is sent on every channel (the status page, email, Slack), so it names no medium ("this page").
HOLDING_STATEMENT = ("We are investigating a problem that affects some of our services. Our engineers are "
                     "working on it, and we will share the next update as soon as we know more.")


def load_holding_statements() -> None:
    from reviewer.alerts.deadlines import HoldingStatementRefused, approve_holding_statement

    admin = get_user_model().objects.filter(username="admin").first()
    for incident in Incident.objects.filter(severity="P1", holding_statements__isnull=True):
        statement = HoldingStatement(incident=incident, written_by=admin,
                                     text=HOLDING_STATEMENT)
        try:
            approve_holding_statement(statement, admin)
        except HoldingStatementRefused as refused:  # kept unapproved: an admin sees why in admin
            statement.guard = {"ok": False, "message": str(refused)}
        statement.save()


def load_everything(logins_file: Path) -> dict[str, str]:
    load_demo_data()
    load_incidents()
    ensure_channels()
    load_deadline_rules()
    logins = ensure_users(logins_file)
    load_holding_statements()
    return logins
