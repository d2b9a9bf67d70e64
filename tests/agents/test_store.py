"""The specialists' facts from the database: DatabaseData and the demo rows."""

from datetime import date, timedelta
from decimal import Decimal

import pytest

from agents import models
from agents.core.specialists import builtin_workers
from agents.store import DatabaseData, database_workers, load_demo_data

pytestmark = pytest.mark.django_db

TODAY = date(2025, 3, 20)


@pytest.fixture
def data():
    load_demo_data(today=TODAY)
    return DatabaseData(today=TODAY)


def test_anna_is_a_pro_monthly_customer_first_paid_ten_days_ago(data):
    anna = data.customer(42)
    assert (anna.name, anna.country, anna.plan, anna.plan_price, anna.currency) == (
        "Anna", "US", "pro_monthly", Decimal("49.00"), "USD")
    assert anna.first_paid == TODAY - timedelta(days=10)


def test_billing_worker_on_the_database_refunds_anna_49(data):
    observation = builtin_workers(data)["billing_specialist"]({"ticket": "Please refund user_id=42"})
    assert observation["status"] == "done"
    assert (observation["refundable"], observation["refund_amount"], observation["currency"]) == (True, "49.00", "USD")


def test_billing_worker_on_the_database_does_not_refund_max(data):
    observation = builtin_workers(data)["billing_specialist"]({"ticket": "refund for user_id=7"})
    assert (observation["plan"], observation["refundable"], observation["refund_amount"]) == ("free", False, "0.00")
    assert "120 days ago" in observation["summary"]


def test_unknown_customer_is_none(data):
    assert data.customer(999) is None


def test_customer_who_never_paid_is_outside_any_refund_window(data):
    pro = models.Plan.objects.get(code="pro_monthly")
    models.Customer.objects.create(user_id=5, name="Nina", country="DE", plan=pro)
    observation = builtin_workers(data)["billing_specialist"]({"ticket": "refund user_id=5"})
    assert observation["refundable"] is False


def test_technical_worker_reports_inc_4021_mitigated(data):
    incident = data.incident("inc-4021")
    assert (incident.incident_id, incident.service, incident.state, incident.next_update_minutes) == (
        "INC-4021", "public-api", "mitigated", 30)
    observation = builtin_workers(data)["technical_specialist"]({"ticket": "API errors, is INC-4021 fixed?"})
    assert (observation["incident"], observation["state"]) == ("INC-4021", "mitigated")


def test_a_ticket_naming_no_incident_gets_the_open_one_and_resolved_ones_are_skipped(data):
    assert data.incident(None).incident_id == "INC-4021"
    models.ServiceIncident.objects.update(state="resolved")
    assert data.incident(None) is None
    assert data.incident("INC-9999") is None


def test_sales_worker_recommends_team_plus_at_199(data):
    offer = data.recommended_plan()
    assert (offer.plan, offer.price, offer.currency, offer.period) == ("team_plus", Decimal("199.00"), "USD", "month")
    observation = builtin_workers(data)["sales_specialist"]({"ticket": "What is the price of a bigger plan?"})
    assert (observation["recommended_plan"], observation["price"]) == ("team_plus", "199.00")


def test_without_a_recommended_plan_the_sales_worker_fails_instead_of_inventing_one(data):
    models.Plan.objects.update(recommended=False)
    with pytest.raises(LookupError):
        data.recommended_plan()


def test_loading_the_demo_data_twice_creates_no_duplicates():
    load_demo_data(today=TODAY)
    counts = [m.objects.count() for m in (models.Plan, models.Customer, models.Payment, models.ServiceIncident)]
    load_demo_data(today=TODAY + timedelta(days=1))
    assert [m.objects.count() for m in (models.Plan, models.Customer, models.Payment, models.ServiceIncident)] == counts
    assert counts == [3, 2, 2, 1]
    assert models.Plan.objects.filter(recommended=True).count() == 1


def test_database_workers_read_today_from_the_clock():
    load_demo_data()
    observation = database_workers()["billing_specialist"]({"ticket": "refund user_id=42"})
    assert observation["refundable"] is True and "10 days ago" in observation["summary"]
