"""The routing pipeline's built-in specialists and the registry that names them.

A worker is a callable ``worker(args) -> observation``. It raises :class:`WorkerArgsError` when its
arguments are unusable; any other exception is a worker failure. Workers read facts through a
:class:`DataSource`, so the same code serves the in-memory demo data here and database rows later.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Protocol

Observation = dict[str, Any]
Worker = Callable[[dict[str, Any]], Observation]

REFUND_WINDOW_DAYS = 14
REFUNDABLE_PLANS = ("pro_monthly",)


class WorkerArgsError(ValueError):
    """The worker cannot act on these arguments (the ticket names no customer, say)."""


@dataclass(frozen=True)
class CustomerFacts:
    user_id: int
    name: str
    country: str
    plan: str
    plan_price: Decimal
    currency: str
    first_paid: date


@dataclass(frozen=True)
class ServiceIncidentFacts:
    incident_id: str
    service: str
    state: str
    next_update_minutes: int


@dataclass(frozen=True)
class PlanOffer:
    plan: str
    price: Decimal
    currency: str
    period: str


class DataSource(Protocol):
    def customer(self, user_id: int) -> CustomerFacts | None: ...
    def incident(self, incident_id: str | None) -> ServiceIncidentFacts | None: ...
    def recommended_plan(self) -> PlanOffer: ...
    def today(self) -> date: ...


class DemoData:
    """The routing demo's facts, in memory. Dates are relative to ``today``."""

    def __init__(self, today: date | None = None):
        self._today = today or date.today()
        self.customers = {
            42: CustomerFacts(
                42, "Anna", "US", "pro_monthly", Decimal("49.00"), "USD", self._today - timedelta(days=10)
            ),
            7: CustomerFacts(7, "Max", "US", "free", Decimal("0.00"), "USD", self._today - timedelta(days=120)),
        }
        self.incidents = {"INC-4021": ServiceIncidentFacts("INC-4021", "public-api", "mitigated", 30)}
        self.offer = PlanOffer("team_plus", Decimal("199.00"), "USD", "month")

    def customer(self, user_id: int) -> CustomerFacts | None:
        return self.customers.get(user_id)

    def incident(self, incident_id: str | None) -> ServiceIncidentFacts | None:
        if incident_id:
            return self.incidents.get(incident_id.upper())
        return next(iter(self.incidents.values()), None)  # the open incident, when the ticket names none

    def recommended_plan(self) -> PlanOffer:
        return self.offer

    def today(self) -> date:
        return self._today


BILLING_WORDS = ("refund", "charge", "invoice", "billing", "bill", "billed", "payment", "paid")
TECHNICAL_WORDS = ("error", "bug", "incident", "api", "latency", "outage", "timeout", "slow", "down", "5xx", "500")
SALES_WORDS = ("price", "pricing", "quote", "plan", "discount", "upgrade", "seats")


def _mentions(ticket: str, words: tuple[str, ...]) -> bool:
    """Whole words, allowing a plural or verb ending (refunds, charged, errors, billed)."""
    alternatives = "|".join(map(re.escape, words))
    pattern = rf"\b(?:{alternatives})(?:s|es|d|ed|ing)?\b"
    return re.search(pattern, ticket, re.IGNORECASE) is not None


def _ticket(args: dict[str, Any]) -> str:
    if set(args) - {"ticket"}:
        raise WorkerArgsError(f"unexpected arguments: {sorted(set(args) - {'ticket'})}")
    ticket = args.get("ticket")
    if not isinstance(ticket, str) or not ticket.strip():
        raise WorkerArgsError("a ticket text is required")
    return ticket


def _reroute(why: str) -> Observation:
    return {"status": "needs_reroute", "reason": why}


def billing_specialist(data: DataSource) -> Worker:
    def handle(args: dict[str, Any]) -> Observation:
        ticket = _ticket(args)
        if not _mentions(ticket, BILLING_WORDS):
            return _reroute("The ticket is not about refunds, charges, invoices or billing.")
        match = re.search(r"\buser_id\s*[=:]\s*(\d{1,12})\b", ticket)
        if not match:
            raise WorkerArgsError("the ticket names no customer (expected user_id=<number>)")
        customer = data.customer(int(match.group(1)))
        if customer is None:
            return {"status": "done", "user_id": int(match.group(1)), "found": False,
                    "summary": f"No customer with user_id={match.group(1)}."}
        days = (data.today() - customer.first_paid).days
        refundable = customer.plan in REFUNDABLE_PLANS and days <= REFUND_WINDOW_DAYS and customer.plan_price > 0
        amount = customer.plan_price if refundable else Decimal("0.00")
        why = (f"{customer.name} is refundable {amount:.2f} {customer.currency}: {customer.plan} first paid "
               f"{days} days ago, within the {REFUND_WINDOW_DAYS}-day window."
               if refundable else
               f"{customer.name} is not refundable: {customer.plan} first paid {days} days ago"
               f"{'' if customer.plan in REFUNDABLE_PLANS else ' (plan not refundable)'}.")
        return {
            "status": "done", "found": True, "user_id": customer.user_id, "customer": customer.name,
            "country": customer.country, "plan": customer.plan, "refundable": refundable,
            "refund_amount": f"{amount:.2f}", "currency": customer.currency, "summary": why,
        }

    return handle


def technical_specialist(data: DataSource) -> Worker:
    def handle(args: dict[str, Any]) -> Observation:
        ticket = _ticket(args)
        if not _mentions(ticket, TECHNICAL_WORDS):
            return _reroute("The ticket is not about errors, bugs, incidents, the API or latency.")
        named = re.search(r"\bINC-\d+\b", ticket, re.IGNORECASE)
        incident = data.incident(named.group(0) if named else None)
        if incident is None:
            return {"status": "done", "incident": None, "summary": "No open incident matches this ticket."}
        return {
            "status": "done", "incident": incident.incident_id, "service": incident.service,
            "state": incident.state, "next_update_minutes": incident.next_update_minutes,
            "summary": f"{incident.incident_id} on {incident.service} is {incident.state}; "
                       f"next update in {incident.next_update_minutes} minutes.",
        }

    return handle


def sales_specialist(data: DataSource) -> Worker:
    def handle(args: dict[str, Any]) -> Observation:
        ticket = _ticket(args)
        if not _mentions(ticket, SALES_WORDS):
            return _reroute("The ticket is not about prices, quotes, plans or discounts.")
        offer = data.recommended_plan()
        return {
            "status": "done", "recommended_plan": offer.plan, "price": f"{offer.price:.2f}",
            "currency": offer.currency, "period": offer.period,
            "summary": f"Recommend {offer.plan} at {offer.price:.2f} {offer.currency} a {offer.period}.",
        }

    return handle


BUILTIN_WORKERS = ("billing_specialist", "technical_specialist", "sales_specialist")


def builtin_workers(data: DataSource) -> dict[str, Worker]:
    """The registry of the three built-in specialists, reading ``data``."""
    return {
        "billing_specialist": billing_specialist(data),
        "technical_specialist": technical_specialist(data),
        "sales_specialist": sales_specialist(data),
    }
