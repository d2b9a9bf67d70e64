"""The routing specialists' facts from database rows, and the demo rows.

``DatabaseData`` implements the ``DataSource`` protocol of ``agents.core.specialists``, so the
built-in specialists run unchanged on it.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Min
from django.utils import timezone

from agents import models
from agents.core.specialists import (
    CustomerFacts,
    PlanOffer,
    ServiceIncidentFacts,
    Worker,
    builtin_workers,
)


class DatabaseData:
    """Customers, plans, payments and service incidents, read when a worker asks."""

    def __init__(self, today: date | None = None):
        self._today = today

    def customer(self, user_id: int) -> CustomerFacts | None:
        row = (
            models.Customer.objects.select_related("plan")
            .annotate(first_paid=Min("payments__paid_at"))
            .filter(user_id=user_id)
            .first()
        )
        if row is None:
            return None
        return CustomerFacts(
            user_id=row.user_id,
            name=row.name,
            country=row.country,
            plan=row.plan.code,
            plan_price=row.plan.price,
            currency=row.plan.currency,
            # Never paid: as far back as a date goes, so no refund window can include it.
            first_paid=row.first_paid or date.min,
        )

    def incident(self, incident_id: str | None) -> ServiceIncidentFacts | None:
        rows = models.ServiceIncident.objects
        if incident_id:
            row = rows.filter(incident_id=incident_id.strip().upper()).first()
        else:  # the ticket names none: the most recently updated open incident
            row = rows.exclude(state__in=models.ServiceIncident.CLOSED_STATES).order_by("-updated_at").first()
        if row is None:
            return None
        return ServiceIncidentFacts(row.incident_id, row.service, row.state, row.next_update_minutes)

    def recommended_plan(self) -> PlanOffer:
        row = models.Plan.objects.filter(recommended=True).first()
        if row is None:
            # The sales worker fails (route_error:sales_specialist), rather than invent an offer.
            raise LookupError("no plan is marked as recommended")
        return PlanOffer(row.code, row.price, row.currency, row.period)

    def today(self) -> date:
        return self._today or timezone.localdate()


def database_workers() -> dict[str, Worker]:
    """The built-in specialists, reading the database."""
    return builtin_workers(DatabaseData())


DEMO_PLANS = (
    ("free", Decimal("0.00"), False),
    ("pro_monthly", Decimal("49.00"), False),
    ("team_plus", Decimal("199.00"), True),
)
# user_id, name, country, plan, days since the first payment
DEMO_CUSTOMERS = (
    (42, "Anna", "US", "pro_monthly", 10),
    (7, "Max", "US", "free", 120),
)


@transaction.atomic
def load_demo_data(today: date | None = None) -> None:
    """Create or refresh the routing demo's rows; running it again changes nothing but the dates."""
    today = today or timezone.localdate()
    # One recommended plan at a time: clear the flag elsewhere before setting it.
    models.Plan.objects.exclude(code="team_plus").filter(recommended=True).update(recommended=False)
    plans = {}
    for code, price, recommended in DEMO_PLANS:
        plans[code], _ = models.Plan.objects.update_or_create(
            code=code,
            defaults={"price": price, "currency": "USD", "period": "month", "recommended": recommended},
        )
    for user_id, name, country, plan, days in DEMO_CUSTOMERS:
        customer, _ = models.Customer.objects.update_or_create(
            user_id=user_id, defaults={"name": name, "country": country, "plan": plans[plan]}
        )
        models.Payment.objects.update_or_create(
            customer=customer,
            kind=models.Payment.FIRST,
            defaults={"amount": plans[plan].price, "currency": "USD", "paid_at": today - timedelta(days=days)},
        )
    models.ServiceIncident.objects.update_or_create(
        incident_id="INC-4021",
        defaults={"service": "public-api", "state": "mitigated", "next_update_minutes": 30},
    )
